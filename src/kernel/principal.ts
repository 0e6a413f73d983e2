/**
 * Who is behind a request: the tenant, the scopes granted and the credential that proved it. An
 * OAuth access token acts for its client (client_credentials) or for a signed-in user of the tenant.
 */
export interface Principal {
  tenantId: string;
  scopes: ReadonlySet<string>;
  actor:
    | { type: 'api_key'; id: string }
    | { type: 'oauth_client'; id: string }
    | { type: 'user'; id: string; clientId: string };
}
