// `npm run admin -- quickstart`: a tenant and an API key with every scope in one command, and the
// lines to paste into a shell to try each interface with them. Running it again keeps the tenant
// and issues another key (a key is shown once only, so an earlier one cannot be shown again).
import { callService, ServiceError, type Connection } from './connection';
import { ensureConsoleClient } from './console-client';

export const QUICKSTART_TENANT = 'Quickstart';

/** Walks the tenant list (oldest first) for the first tenant named `name`. */
export async function findTenantByName(connection: Connection, name: string): Promise<{ id: string } | undefined> {
  let after: string | null = null;
  for (;;) {
    const query: string = after ? `&page[after]=${encodeURIComponent(after)}` : '';
    const page = await callService(connection.baseUrl, 'GET', `/api/admin/tenants?page[size]=100${query}`, {
      token: connection.masterKey,
    });
    if (page.status !== 200) throw answerError('list the tenants', page);
    const found = (page.body.data as { id: string; name: string }[]).find((tenant) => tenant.name === name);
    if (found) return found;
    after = page.body.page?.next ? page.body.page.after : null;
    if (!after) return undefined;
  }
}

/** An answer a command did not expect, with what the service said. */
export function answerError(what: string, answer: { status: number; text: string }): ServiceError {
  const reason = answer.status === 401 ? ' (is the master key the one the service uses?)' : '';
  return new ServiceError(`Could not ${what}: HTTP ${answer.status}${reason} ${answer.text}`);
}

/** Creates (or finds) the quickstart tenant, issues a key with every scope and says how to use it. */
export async function quickstart(connection: Connection): Promise<string> {
  const { baseUrl, masterKey } = connection;
  let tenant = await findTenantByName(connection, QUICKSTART_TENANT);
  const existed = tenant !== undefined;
  if (!tenant) {
    const created = await callService(baseUrl, 'POST', '/api/admin/tenants', {
      token: masterKey,
      body: { data: { name: QUICKSTART_TENANT } },
    });
    if (created.status !== 201) throw answerError('create the tenant', created);
    tenant = created.body.data as { id: string };
  }
  const issued = await callService(baseUrl, 'POST', `/api/admin/tenants/${tenant.id}/api-keys`, {
    token: masterKey,
    body: { data: { name: 'quickstart', scopes: ['*'] } },
  });
  if (issued.status !== 201) throw answerError('issue the API key', issued);
  const key = issued.body.data.key as string;
  const consoleClient = await ensureConsoleClient(connection, tenant.id);
  // Proxy keys are unique across tenants: one named after this tenant is free.
  const proxyKey = `quickstart-${tenant.id.replace(/-/g, '').slice(-8)}`;
  const graphqlBody = JSON.stringify({ query: '{ products(first: 5) { edges { node { id sku name } } } }' });
  const proxyBody = JSON.stringify({
    data: {
      key: proxyKey,
      routes: { path: '*', origin: { uri: 'https://example.com' }, settings: { cache: { age: 60 } } },
    },
  });
  return [
    `Tenant   ${QUICKSTART_TENANT} ${tenant.id}${existed ? ' (already there: kept)' : ' (created)'}`,
    `API key  ${key}`,
    `         every scope (*); shown this once${existed ? ', beside the keys issued before' : ''}`,
    '',
    'Paste into your shell:',
    '',
    `export BASE=${baseUrl}`,
    `export KEY=${key}`,
    '',
    '# REST: the edge proxies of the tenant',
    'curl -s "$BASE/api/storage/edge/proxies" -H "Authorization: Bearer $KEY"',
    '# GraphQL: the first products of the catalog',
    `curl -s "$BASE/graphql" -H "Authorization: Bearer $KEY" -H 'Content-Type: application/json' -d '${graphqlBody}'`,
    `# Edge: a proxy to https://example.com, then a page through it (X-Cache: MISS, then HIT)`,
    `curl -s -X POST "$BASE/api/storage/edge/proxies" -H "Authorization: Bearer $KEY" -H 'Content-Type: application/json' -d '${proxyBody}'`,
    `curl -s -D - -o /dev/null "$BASE/edge/${proxyKey}/"`,
    '',
    `Console: ${consoleClient.url}`,
    `         signs in a user of the tenant; make one with`,
    `         echo 'a long password' | npm run admin -- user:create --tenant ${tenant.id} --email you@example.com`,
    '',
    `Demo data (a shop with 1,000 products and a search page): npm run seed`,
    `API reference: ${baseUrl}/docs   GraphiQL: ${baseUrl}/graphql`,
  ].join('\n');
}
