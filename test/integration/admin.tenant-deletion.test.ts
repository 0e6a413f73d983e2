/**
 * `DELETE /api/admin/tenants/{tenant_id}` removes every row of the tenant in every table. Two
 * tenants get data in every module (proxies with a cached edge response, an index with documents,
 * searches, clicks and events, a catalog, stock written over REST and GraphQL, reservations,
 * orders, preferences, supplies, transfers, a webhook and its deliveries, stock events, an OAuth
 * client and user with their tokens, rate limit counters); one is deleted. SQL then finds no row
 * in any table that mentions its id or the id of anything it owned, and the other tenant's rows
 * are exactly as they were. This process's search engine no longer holds the deleted index either.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import type { EmbeddedEngine } from '../../src/modules/search/engine/embedded-engine';
import { createTenant, TEST_MASTER_KEY, type Tenant } from '../helpers/app';
import { sql } from '../helpers/db';
import { edgeGet, startEdgeApp, startOrigin } from '../helpers/edge';
import { createOAuthClient, createUser, startAuthorization, tokenRequest, userTokens } from '../helpers/oauth';
import { expectRestError } from '../helpers/rest';
import { createCatalog, graphqlData } from './stock.fixtures';

const t = await startEdgeApp();
const origin = await startOrigin((_request, response) => {
  response.writeHead(200, { 'content-type': 'text/plain' });
  response.end('from the origin');
});

interface Owned {
  tenant: Tenant;
  proxyKey: string;
  accessToken: string;
  refreshToken: string;
  client: { client_id: string; client_secret: string | null };
}

const gql = (tenant: Tenant, query: string, input: Record<string, unknown>) =>
  graphqlData<Record<string, any>>(t, tenant.key, query, { input });

/** Data of the tenant in every module, written through the API as a client would. */
async function populate(name: string, options: { webhook: boolean }): Promise<Owned> {
  const tenant = await createTenant(t.rest, name);
  const token = tenant.key;
  // Counted per minute in rate_limits, under the tenant's id.
  await t.rest.patch(`/api/admin/tenants/${tenant.id}`, {
    token: TEST_MASTER_KEY,
    body: { data: { rate_limit_per_minute: 100_000 } },
  });

  const proxyKey = `${name}-shop`;
  const route = { path: '*', origin: { uri: origin.url }, settings: { cache: { age: 300 } } };
  expect(
    (await t.rest.post('/api/storage/edge/proxies', { token, body: { data: { key: proxyKey, routes: route } } }))
      .status,
  ).toBe(201);
  expect((await edgeGet(`${t.baseUrl}/edge/${proxyKey}/page`)).status).toBe(200);
  expect((await edgeGet(`${t.baseUrl}/edge/${proxyKey}/page`)).headers['x-cache']).toBe('HIT');

  const index = await t.rest.post('/api/instant/indexes', {
    token,
    body: { data: { name: 'Products', alias: 'products' } },
  });
  expect(index.status, index.rawBody).toBe(201);
  const documents = [
    { id: 'p1', name: 'Desk lamp', url: 'https://shop.example.com/p1' },
    { id: 'p2', name: 'Floor lamp', url: 'https://shop.example.com/p2' },
    { id: 'p3', name: 'Chair', url: 'https://shop.example.com/p3' },
  ];
  expect(
    (await t.rest.put('/api/instant/indexes/products/documents', { token, body: { data: documents } })).status,
  ).toBe(204);
  expect((await t.rest.delete('/api/instant/indexes/products/documents/p3', { token })).status).toBe(204);
  const settings = await t.rest.put(`/api/instant/search/${proxyKey}/settings`, {
    token,
    body: { data: { indexes: [{ alias: 'products' }] } },
  });
  expect(settings.status, settings.rawBody).toBe(200);
  const searched = await t.rest.post(`/api/instant/search/${proxyKey}`, { body: { data: [{ q: 'lamp' }] } });
  expect(searched.status, searched.rawBody).toBe(201);
  const result = searched.body.data[0].results[0];
  const event = { type: 'view', query_id: result.query_id, document_id: 'p1', position: 1 };
  expect((await t.rest.post(`/api/instant/search/${proxyKey}/events`, { body: { data: [event] } })).status).toBe(204);
  expect((await t.rest.get(result.hits[0].click_url.replace(/^https?:\/\/[^/]+/, ''))).status).toBe(307);
  await t.services.search.log.flush();

  const catalog = await createCatalog(t, token);
  const [warehouseId, secondWarehouseId] = catalog.warehouseIds;
  const { businessId } = catalog;
  const channelId = (
    await gql(
      tenant,
      'mutation($input: CreateSalesChannelInput!) { createSalesChannel(input: $input) { sales_channel { id } } }',
      {
        name: 'Web shop',
      },
    )
  ).createSalesChannel.sales_channel.id;
  await gql(
    tenant,
    'mutation($input: SetSalesChannelWarehousesInput!) { setSalesChannelWarehouses(input: $input) { sales_channel { id } } }',
    { channel_id: channelId, warehouse_ids: [warehouseId, secondWarehouseId] },
  );
  if (options.webhook) {
    await gql(
      tenant,
      'mutation($input: SetSalesChannelWebhookInput!) { setSalesChannelWebhook(input: $input) { channel_id } }',
      { channel_id: channelId, url: 'https://hooks.example.com/stock', secret: 'a-secret-of-32-characters-or-more' },
    );
  }
  const added = await t.rest.post('/api/inventory/items', {
    token,
    headers: { 'idempotency-key': `${name}-opening` },
    body: { data: [{ sku: 'SKU-1', warehouseId, businessId, quantity: 20, position: 'A-01' }] },
  });
  expect(added.status, added.rawBody).toBe(201);
  await gql(
    tenant,
    'mutation($input: CreateItemPreferencesInput!) { createItemPreferences(input: $input) { preferences { id } } }',
    {
      preferences: [
        {
          sku: 'SKU-1',
          warehouse_id: warehouseId,
          business_id: businessId,
          minimum_quantity: 1,
          optimal_quantity: 10,
          maximum_quantity: 50,
          reorder_point: 8,
          is_backorder_allowed: false,
          is_restricted_to_single_position: false,
        },
      ],
    },
  );
  await gql(
    tenant,
    'mutation($input: CreateReservationInput!) { createReservation(input: $input) { reservation { id } } }',
    {
      business_id: businessId,
      warehouse_id: warehouseId,
      channel_id: channelId,
      customer: { name: 'Ada' },
      items: [{ sku: 'SKU-1', quantity: 2 }],
      expires_at: Date.now() + 3_600_000,
    },
  );
  // Available falls from 18 to 8, the reorder point: a STOCK_LOW event.
  await gql(tenant, 'mutation($input: CreateOrderInput!) { createOrder(input: $input) { order { id } } }', {
    business_id: businessId,
    warehouse_id: warehouseId,
    channel_id: channelId,
    items: [{ sku: 'SKU-1', quantity: 10 }],
  });
  await gql(tenant, 'mutation($input: CreateTransferInput!) { createTransfer(input: $input) { transfer { id } } }', {
    from_warehouse_id: warehouseId,
    to_warehouse_id: secondWarehouseId,
    items: [{ sku: 'SKU-1', quantity: 1 }],
  });
  const announcement = (
    await gql(
      tenant,
      'mutation($input: CreateAnnouncementInput!) { createAnnouncement(input: $input) { announcement { id } } }',
      {
        business_id: businessId,
        warehouse_id: warehouseId,
        items: [{ sku: 'SKU-2', quantity: 4 }],
      },
    )
  ).createAnnouncement.announcement;
  await gql(tenant, 'mutation($input: CreateSupplyInput!) { createSupply(input: $input) { supply { id } } }', {
    announcement_ids: [announcement.id],
    settings: { processing: 'REGISTER' },
  });

  const client = await createOAuthClient(t.rest, tenant.id, { scopes: ['proxies:read', 'openid'] });
  const user = await createUser(t.rest, tenant.id, `${name}@example.com`);
  const tokens = await userTokens(t.app, t.rest, client, user.email, 'openid proxies:read');
  // A request the user has not answered yet.
  expect((await startAuthorization(t.rest, client, { scope: 'proxies:read' })).status).toBe(200);
  expect((await t.rest.get('/api/storage/edge/proxies', { token: tokens.access_token })).status).toBe(200);
  return { tenant, proxyKey, accessToken: tokens.access_token, refreshToken: tokens.refresh_token, client };
}

/** The tenant's id, and the id (or key) of every row it owns, whatever the table. */
async function idsOwnedBy(tenantId: string): Promise<string[]> {
  const tables = await sql<{ table_name: string; has_id: boolean }>(
    t.databaseUrl,
    `SELECT c.table_name, EXISTS (SELECT 1 FROM information_schema.columns i
                                   WHERE i.table_schema = 'public' AND i.table_name = c.table_name
                                     AND i.column_name = 'id') AS has_id
       FROM information_schema.columns c WHERE c.table_schema = 'public' AND c.column_name = 'tenant_id'`,
  );
  const ids = [tenantId];
  for (const { table_name: table, has_id: hasId } of tables) {
    if (!hasId) continue;
    const rows = await sql<{ id: string }>(t.databaseUrl, `SELECT id::text FROM "${table}" WHERE tenant_id = $1`, [
      tenantId,
    ]);
    ids.push(...rows.map((row) => row.id));
  }
  const grants = await sql<{ id: string }>(
    t.databaseUrl,
    `SELECT g.id::text FROM oauth_grants g JOIN oauth_clients c ON c.id = g.client_id WHERE c.tenant_id = $1`,
    [tenantId],
  );
  const proxies = await sql<{ key: string }>(t.databaseUrl, 'SELECT key FROM proxies WHERE tenant_id = $1', [tenantId]);
  return [...ids, ...grants.map((row) => row.id), ...proxies.map((row) => row.key)];
}

/** Per table, the rows whose text mentions any of `ids` (any column), as a count and a digest. */
async function rowsMentioning(ids: string[]) {
  const tables = await sql<{ name: string }>(
    t.databaseUrl,
    `SELECT table_name AS name FROM information_schema.tables
      WHERE table_schema = 'public' AND table_type = 'BASE TABLE' ORDER BY table_name`,
  );
  const found: Record<string, { rows: number; digest: string }> = {};
  for (const { name } of tables) {
    const [row] = await sql<{ rows: number; digest: string }>(
      t.databaseUrl,
      `SELECT count(*)::int AS rows, md5(coalesce(string_agg(r::text, '|' ORDER BY r::text), '')) AS digest
         FROM "${name}" r WHERE EXISTS (SELECT 1 FROM unnest($1::text[]) AS id WHERE strpos(r::text, id) > 0)`,
      [ids],
    );
    if (row!.rows > 0) found[name] = row!;
  }
  return found;
}

/**
 * Tables the populated data must reach, so that the deletion is tested on each of them. The search
 * analytics tables are left out of this list only: the scan covers them, whatever their shape.
 */
const EXPECTED_TABLES = [
  'tenants',
  'api_keys',
  'rate_limits',
  'proxies',
  'search_indexes',
  'search_documents',
  'search_document_deletions',
  'search_settings',
  'businesses',
  'warehouses',
  'positions',
  'products',
  'sales_channels',
  'channel_warehouses',
  'inventory_items',
  'stock_mutations',
  'idempotency_keys',
  'item_preferences',
  'reservations',
  'reservation_items',
  'orders',
  'order_items',
  'stock_allocations',
  'transfers',
  'transfer_items',
  'announcements',
  'announcement_items',
  'supplies',
  'supply_items',
  'incoming_stock',
  'stock_alert_states',
  'stock_events',
  'channel_webhooks',
  'stock_broadcasts',
  'oauth_clients',
  'users',
  'oauth_grants',
  'oauth_refresh_tokens',
  'oauth_authorization_codes',
  'oauth_consents',
  'oauth_authorization_sessions',
];

let doomed: Owned;
let survivor: Owned;

beforeAll(async () => {
  doomed = await populate('doomed', { webhook: true });
  survivor = await populate('survivor', { webhook: false });
});

describe('DELETE /api/admin/tenants/{tenant_id}', () => {
  it('leaves no row of the tenant in any table, and every row of another tenant as it was', async () => {
    const indexOf = async (tenant: Tenant) =>
      (
        await sql<{ id: string }>(t.databaseUrl, 'SELECT id::text FROM search_indexes WHERE tenant_id = $1', [
          tenant.id,
        ])
      )[0]!.id;
    const [doomedIndex, survivorIndex] = [await indexOf(doomed.tenant), await indexOf(survivor.tenant)];
    const engine = t.services.search.engine as EmbeddedEngine;
    expect(engine.documentCount(doomedIndex)).toBe(2);
    // Counts kept in memory are written at most a second later: written now, they are in the snapshots.
    await t.services.edge.traffic.flush();
    await t.services.search.log.flush();
    const doomedIds = await idsOwnedBy(doomed.tenant.id);
    const survivorIds = await idsOwnedBy(survivor.tenant.id);
    const doomedBefore = await rowsMentioning(doomedIds);
    expect(Object.keys(doomedBefore)).toEqual(expect.arrayContaining(EXPECTED_TABLES));
    const survivorBefore = await rowsMentioning(survivorIds);

    const deleted = await t.rest.delete(`/api/admin/tenants/${doomed.tenant.id}`, { token: TEST_MASTER_KEY });
    expect(deleted.status, deleted.rawBody).toBe(204);

    expect(await rowsMentioning(doomedIds)).toEqual({});
    expect(await rowsMentioning(survivorIds)).toEqual(survivorBefore);
    // The documents this process's search engine held in memory went with the index.
    expect(engine.documentCount(doomedIndex)).toBe(0);
    expect(engine.documentCount(survivorIndex)).toBe(2);
  });

  it("refuses the tenant's API key and OAuth tokens at once, and its proxy and search as soon as told", async () => {
    expectRestError(await t.rest.get('/api/storage/edge/proxies', { token: doomed.tenant.key }), 401);
    expectRestError(await t.rest.get('/api/storage/edge/proxies', { token: doomed.accessToken }), 401);
    const refreshed = await tokenRequest(t.rest, {
      grant_type: 'refresh_token',
      refresh_token: doomed.refreshToken,
      client_id: doomed.client.client_id,
      client_secret: doomed.client.client_secret!,
    });
    expectRestError(refreshed, 401);
    expectRestError(
      await t.rest.post(`/api/instant/search/${doomed.proxyKey}`, { body: { data: [{ q: 'lamp' }] } }),
      404,
    );
    // The cached response goes when this process hears of the deleted proxy from the database.
    await expect.poll(async () => (await edgeGet(`${t.baseUrl}/edge/${doomed.proxyKey}/page`)).status).toBe(404);
  });

  it("leaves the other tenant's credentials, proxy and search working", async () => {
    expect((await t.rest.get('/api/storage/edge/proxies', { token: survivor.tenant.key })).status).toBe(200);
    expect((await t.rest.get('/api/storage/edge/proxies', { token: survivor.accessToken })).status).toBe(200);
    const searched = await t.rest.post(`/api/instant/search/${survivor.proxyKey}`, { body: { data: [{ q: 'lamp' }] } });
    expect(searched.body.data[0].results[0].count).toBe(2);
    expect((await edgeGet(`${t.baseUrl}/edge/${survivor.proxyKey}/page`)).headers['x-cache']).toBe('HIT');
  });
});
