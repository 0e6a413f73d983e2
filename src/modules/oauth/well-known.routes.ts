import type { FastifyInstance } from 'fastify';
import type { Services } from '../context';
import { CLIENT_SCOPES } from './oauth.scopes';
import { PROTECTED_RESOURCE_PATHS, SIGNING_ALGORITHM } from './oauth.constants';

/** RFC 8414 metadata of the authorization server. */
export function authorizationServerMetadata(issuer: string) {
  const clientAuthMethods = ['client_secret_basic', 'client_secret_post', 'none'];
  return {
    issuer,
    // The browser-facing endpoint: it redirects to the login page. GET /api/oauth/session/authorize
    // is the same request answered as JSON, for clients that render their own redirect.
    authorization_endpoint: `${issuer}/oauth/authorize`,
    token_endpoint: `${issuer}/api/oauth/authorize`,
    jwks_uri: `${issuer}/.well-known/jwks.json`,
    revocation_endpoint: `${issuer}/api/oauth/revoke`,
    introspection_endpoint: `${issuer}/api/oauth/introspect`,
    // RFC 7591: public clients (PKCE) that belong to no tenant; a tenant's users approve them only where it allows.
    registration_endpoint: `${issuer}/api/oauth/register`,
    // A client_id that is an https URL names its metadata document (draft-ietf-oauth-client-id-metadata-document).
    client_id_metadata_document_supported: true,
    scopes_supported: [...CLIENT_SCOPES],
    response_types_supported: ['code'],
    response_modes_supported: ['query'],
    grant_types_supported: ['authorization_code', 'client_credentials', 'refresh_token'],
    token_endpoint_auth_methods_supported: clientAuthMethods,
    revocation_endpoint_auth_methods_supported: clientAuthMethods,
    introspection_endpoint_auth_methods_supported: clientAuthMethods,
    code_challenge_methods_supported: ['S256'],
    id_token_signing_alg_values_supported: [SIGNING_ALGORITHM],
    authorization_response_iss_parameter_supported: true,
    // RFC 9728 section 4: the protected resources this server issues tokens for (RFC 8707 `resource`).
    protected_resources: PROTECTED_RESOURCE_PATHS.map((path) => `${issuer}${path}`),
  };
}

/** The scopes a protected resource accepts: every client scope but `openid`, which no resource checks. */
const RESOURCE_SCOPES = CLIENT_SCOPES.filter((scope) => scope !== 'openid');

/**
 * RFC 9728 metadata of a protected resource served by this issuer: the REST and GraphQL API
 * (`resource` = the issuer, the audience of its tokens) or a resource under a path such as `/mcp`
 * (`resource` = the issuer followed by that path), with the scopes its operations take.
 */
export function protectedResourceMetadata(issuer: string, path = '', scopes: readonly string[] = RESOURCE_SCOPES) {
  return {
    resource: `${issuer}${path}`,
    authorization_servers: [issuer],
    scopes_supported: [...scopes],
    bearer_methods_supported: ['header'],
    resource_name: path === '' ? 'Commerce platform API' : `Commerce platform API (${path})`,
  };
}

/**
 * `GET /.well-known/jwks.json`, `GET /.well-known/oauth-authorization-server` and
 * `GET /.well-known/oauth-protected-resource[/mcp]`, public.
 */
export function mountWellKnown(app: FastifyInstance, services: Services) {
  app.get('/.well-known/jwks.json', async (_request, reply) =>
    reply
      .header('Cache-Control', `public, max-age=${services.config.oauth.jwksMaxAgeSeconds}`)
      .send(await services.oauth.keys.jwks()),
  );
  app.get('/.well-known/oauth-authorization-server', async (_request, reply) =>
    reply.header('Cache-Control', 'public, max-age=3600').send(authorizationServerMetadata(services.oauth.issuer)),
  );
  for (const path of PROTECTED_RESOURCE_PATHS) {
    app.get(`/.well-known/oauth-protected-resource${path}`, async (_request, reply) =>
      reply
        .header('Cache-Control', 'public, max-age=3600')
        .send(protectedResourceMetadata(services.oauth.issuer, path, path === '/mcp' ? services.mcpScopes : undefined)),
    );
  }
}
