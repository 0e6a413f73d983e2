// The API reference of /openapi.json, rendered by Scalar from this origin: no fonts, proxy or
// telemetry from elsewhere; "try it" sends requests to this service with the bearer key entered.
Scalar.createApiReference('#app', {
  url: '/openapi.json',
  withDefaultFonts: false,
  telemetry: false,
  hideClientButton: true,
  showDeveloperTools: 'never',
  agent: { disabled: true },
  mcp: { disabled: true },
  authentication: { preferredSecurityScheme: 'bearerAuth' },
});
