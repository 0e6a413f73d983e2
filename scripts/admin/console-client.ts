// The operators' console of a tenant: a public OAuth client (authorization code with PKCE) whose
// redirect URI is the service's /console/ page, registered once per tenant and found again by name.
import { callService, ServiceError, type Connection } from './connection';

export const CONSOLE_CLIENT = 'Console';

export interface ConsoleClient {
  clientId: string;
  created: boolean;
  /** The console's address with the client id, for the tenant's users to sign in. */
  url: string;
}

/** Finds or registers the tenant's console client. */
export async function ensureConsoleClient(connection: Connection, tenantId: string): Promise<ConsoleClient> {
  const { baseUrl, masterKey } = connection;
  const path = `/api/admin/tenants/${tenantId}/oauth-clients`;
  const redirectUri = `${baseUrl.replace(/\/+$/, '')}/console/`;
  const clients = await callService(baseUrl, 'GET', `${path}?page[size]=100`, { token: masterKey });
  if (clients.status !== 200)
    throw new ServiceError(`Could not list the OAuth clients: HTTP ${clients.status} ${clients.text}`);
  let clientId = (clients.body.data as { client_id: string; name: string }[]).find(
    (client) => client.name === CONSOLE_CLIENT,
  )?.client_id;
  const created = clientId === undefined;
  if (created) {
    const registered = await callService(baseUrl, 'POST', path, {
      token: masterKey,
      body: { data: { name: CONSOLE_CLIENT, redirect_uris: [redirectUri], scopes: ['*'], is_confidential: false } },
    });
    if (registered.status !== 201)
      throw new ServiceError(`Could not register the console client: HTTP ${registered.status} ${registered.text}`);
    clientId = registered.body.data.client_id as string;
  }
  return { clientId: clientId!, created, url: `${redirectUri}?client_id=${encodeURIComponent(clientId!)}` };
}
