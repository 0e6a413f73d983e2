/**
 * Every module with a contract, driven through the typed client of clients/typescript over a real
 * port: a change to openapi.yaml or the SDL that breaks generated clients fails here (at run time,
 * and in `npm run build` for the types).
 */
import type { AddressInfo } from 'node:net';
import { beforeAll, describe, expect, it } from 'vitest';
import { createClient, type CommerceClient } from '@commerce-platform/client';
import {
  CreateAnnouncementDocument,
  CreateBusinessDocument,
  CreateItemPreferencesDocument,
  CreateOrderDocument,
  CreateProductDocument,
  CreateReservationDocument,
  CreateSalesChannelDocument,
  CreateSupplyDocument,
  CreateWarehouseDocument,
  InventoryDocument,
  ProductsDocument,
  SetSalesChannelWebhookDocument,
} from '@commerce-platform/client/operations';
import { startTestApp, TEST_MASTER_KEY, type TestApp } from '../helpers/app';
import { sql } from '../helpers/db';

let t: TestApp;
let baseUrl: string;
let admin: CommerceClient;
let tenantId: string;
let client: CommerceClient;

/** The data of a GraphQL answer that must have succeeded. */
function dataOf<TResult>(response: { status: number; data?: TResult | null; errors?: unknown[] }): TResult {
  expect(response.errors, JSON.stringify(response.errors)).toBeUndefined();
  expect(response.status).toBe(200);
  return response.data!;
}

/** The enveloped JSON answer of an operation that also answers another media type (forms, instantsearch). */
function envelopeOf<TBody>(body: TBody | undefined): Extract<TBody, { data: unknown }> {
  expect(body).toHaveProperty('data');
  return body as Extract<TBody, { data: unknown }>;
}

beforeAll(async () => {
  t = await startTestApp();
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  baseUrl = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
  admin = createClient({ baseUrl, token: TEST_MASTER_KEY });
  const tenant = await admin.rest.POST('/api/admin/tenants', { body: { data: { name: 'SDK' } } });
  expect(tenant.response.status).toBe(201);
  tenantId = tenant.data!.data.id;
  const key = await admin.rest.POST('/api/admin/tenants/{tenant_id}/api-keys', {
    params: { path: { tenant_id: tenantId } },
    body: { data: { name: 'sdk', scopes: ['*'] } },
  });
  expect(key.response.status).toBe(201);
  client = createClient({ baseUrl, token: key.data!.data.key });
});

describe('auth (admin API)', () => {
  it('issues and revokes an API key; the revoked key is refused with the error envelope', async () => {
    const issued = await admin.rest.POST('/api/admin/tenants/{tenant_id}/api-keys', {
      params: { path: { tenant_id: tenantId } },
      body: { data: { name: 'short-lived', scopes: ['proxies:read'] } },
    });
    expect(issued.data!.data.scopes).toEqual(['proxies:read']);
    const shortLived = createClient({ baseUrl, token: issued.data!.data.key });
    expect((await shortLived.rest.GET('/api/storage/edge/proxies')).response.status).toBe(200);
    const revoked = await admin.rest.DELETE('/api/admin/tenants/{tenant_id}/api-keys/{key_id}', {
      params: { path: { tenant_id: tenantId, key_id: issued.data!.data.id } },
    });
    expect(revoked.response.status).toBe(204);
    const refused = await shortLived.rest.GET('/api/storage/edge/proxies');
    expect(refused.response.status).toBe(401);
    expect(refused.error?.error.code).toBe(401);
  });
});

describe('admin API: tenants, keys, clients and users', () => {
  it('lists and reads tenants and keys, renames a key, manages a client and a user, and deletes a tenant', async () => {
    const tenants = await admin.rest.GET('/api/admin/tenants', { params: { query: { 'page[size]': 100 } } });
    expect(tenants.data!.data.map((tenant) => tenant.id)).toContain(tenantId);
    const keys = await admin.rest.GET('/api/admin/tenants/{tenant_id}/api-keys', {
      params: { path: { tenant_id: tenantId } },
    });
    const key = keys.data!.data[0]!;
    expect(key).not.toHaveProperty('key');
    const renamed = await admin.rest.PATCH('/api/admin/tenants/{tenant_id}/api-keys/{key_id}', {
      params: { path: { tenant_id: tenantId, key_id: key.id } },
      body: { data: { name: 'renamed' } },
    });
    expect(renamed.data!.data.name).toBe('renamed');

    const doomed = await admin.rest.POST('/api/admin/tenants', { body: { data: { name: 'SDK doomed' } } });
    const path = { tenant_id: doomed.data!.data.id };
    const registered = await admin.rest.POST('/api/admin/tenants/{tenant_id}/oauth-clients', {
      params: { path },
      body: {
        data: { name: 'App', redirect_uris: ['https://app.example.com/cb'], scopes: ['search'], is_confidential: true },
      },
    });
    const clientPath = { ...path, client_id: registered.data!.data.client_id };
    const rotated = await admin.rest.POST('/api/admin/tenants/{tenant_id}/oauth-clients/{client_id}/secret', {
      params: { path: clientPath },
    });
    expect(rotated.response.status).toBe(201);
    expect(rotated.data!.data.client_secret).not.toBe(registered.data!.data.client_secret);
    const updated = await admin.rest.PATCH('/api/admin/tenants/{tenant_id}/oauth-clients/{client_id}', {
      params: { path: clientPath },
      body: { data: { scopes: ['search', 'openid'] } },
    });
    expect(updated.data!.data.scopes).toEqual(['search', 'openid']);
    const user = await admin.rest.POST('/api/admin/tenants/{tenant_id}/users', {
      params: { path },
      body: { data: { email: 'sdk@example.com', password: 'a long enough password' } },
    });
    const found = await admin.rest.GET('/api/admin/tenants/{tenant_id}/users', {
      params: { path, query: { 'filter[email][eq]': 'sdk@example.com' } },
    });
    expect(found.data!.data.map((item) => item.id)).toEqual([user.data!.data.id]);
    const changed = await admin.rest.PUT('/api/admin/tenants/{tenant_id}/users/{user_id}/password', {
      params: { path: { ...path, user_id: user.data!.data.id } },
      body: { data: { password: 'another long password' } },
    });
    expect(changed.response.status).toBe(204);

    const deleted = await admin.rest.DELETE('/api/admin/tenants/{tenant_id}', { params: { path } });
    expect(deleted.response.status).toBe(204);
    const gone = await admin.rest.GET('/api/admin/tenants/{tenant_id}', { params: { path } });
    expect(gone.response.status).toBe(404);
    expect(gone.error?.error.code).toBe(404);
  });
});

describe('proxies', () => {
  it('creates, reads, lists, purges and deletes a proxy', async () => {
    const created = await client.rest.POST('/api/storage/edge/proxies', {
      body: { data: { key: 'sdk-shop', routes: { path: '/', origin: { uri: 'https://shop.example.com/' } } } },
    });
    expect(created.response.status).toBe(201);
    expect(created.data!.data.key).toBe('sdk-shop');
    const read = await client.rest.GET('/api/storage/edge/proxies/{key}', { params: { path: { key: 'sdk-shop' } } });
    expect(read.data!.data.tenant_id).toBe(tenantId);
    const listed = await client.rest.GET('/api/storage/edge/proxies', { params: { query: { 'page[size]': 10 } } });
    expect(listed.data!.data.map((proxy) => proxy.key)).toContain('sdk-shop');
    const purged = await client.rest.DELETE('/api/storage/edge/proxies/{key}/cache', {
      params: { path: { key: 'sdk-shop' } },
    });
    expect(purged.response.status).toBe(204);
    const deleted = await client.rest.DELETE('/api/storage/edge/proxies/{key}', {
      params: { path: { key: 'sdk-shop' } },
    });
    expect(deleted.response.status).toBe(204);
    const gone = await client.rest.GET('/api/storage/edge/proxies/{key}', { params: { path: { key: 'sdk-shop' } } });
    expect(gone.response.status).toBe(404);
    expect(gone.error?.error.message).toMatch(/^Not found/);
  });
});

describe('oauth', () => {
  it('registers a confidential client, obtains a client_credentials token and introspects it', async () => {
    const registered = await admin.rest.POST('/api/admin/tenants/{tenant_id}/oauth-clients', {
      params: { path: { tenant_id: tenantId } },
      body: {
        data: {
          name: 'Back office',
          redirect_uris: ['https://app.example.com/callback'],
          scopes: ['proxies:read'],
          is_confidential: true,
        },
      },
    });
    expect(registered.response.status).toBe(201);
    const { client_id, client_secret } = registered.data!.data;
    // The token endpoint authenticates the client by its id and secret, so no bearer token is sent.
    const anonymous = createClient({ baseUrl });
    const token = await anonymous.rest.POST('/api/oauth/authorize', {
      body: {
        data: { client_id, client_secret: client_secret!, grant_type: 'client_credentials', scope: 'proxies:read' },
      },
    });
    expect(token.response.status).toBe(201);
    const issued = envelopeOf(token.data).data;
    expect(issued.token_type).toBe('Bearer');
    const withToken = createClient({ baseUrl, token: issued.access_token });
    expect((await withToken.rest.GET('/api/storage/edge/proxies')).response.status).toBe(200);
    const introspected = await anonymous.rest.POST('/api/oauth/introspect', {
      body: { token: issued.access_token, client_id, client_secret: client_secret! },
      bodySerializer: (body) => new URLSearchParams(body as Record<string, string>).toString(),
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    expect(introspected.response.status).toBe(200);
    expect(introspected.data).toMatchObject({ active: true, client_id, scope: 'proxies:read' });
  });
});

describe('search', () => {
  it('creates an index, upserts documents and searches it', async () => {
    const index = await client.rest.POST('/api/instant/indexes', {
      body: {
        data: {
          name: 'Products',
          alias: 'sdk-products',
          fields: [
            { from: 'name', type: 'STRING' },
            { from: 'brand', type: 'STRING' },
          ],
          search_fields: ['name', 'brand'],
          filters: [{ key: 'brand' }],
        },
      },
    });
    expect(index.response.status).toBe(201);
    const upserted = await client.rest.PUT('/api/instant/indexes/{alias}/documents', {
      params: { path: { alias: 'sdk-products' } },
      body: {
        data: [
          { id: 'p1', name: 'Desk lamp', brand: 'Lumo' },
          { id: 'p2', name: 'Floor light', brand: 'Lumo' },
        ],
      },
    });
    expect(upserted.response.status).toBe(204);
    const found = await client.rest.POST('/api/instant/search/indexes/{alias}', {
      params: { path: { alias: 'sdk-products' } },
      body: { data: [{ q: 'lamp', facets: ['brand'] }] },
    });
    expect(found.response.status).toBe(201);
    const result = envelopeOf(found.data).data[0]!.results[0]!;
    expect(result.count).toBe(1);
    expect(result.hits.map((hit) => hit.id)).toEqual(['p1']);
  });
});

describe('catalog, stock, reservations, orders, preferences and supply (GraphQL and REST)', () => {
  let businessId: string;
  let warehouseId: string;
  let channelId: string;

  beforeAll(async () => {
    businessId = dataOf(await client.graphql(CreateBusinessDocument, { input: { name: 'SDK business' } }))
      .createBusiness.business.id;
    warehouseId = dataOf(
      await client.graphql(CreateWarehouseDocument, { input: { business_id: businessId, name: 'Main' } }),
    ).createWarehouse.warehouse.id;
    channelId = dataOf(await client.graphql(CreateSalesChannelDocument, { input: { name: 'Web shop' } }))
      .createSalesChannel.sales_channel.id;
    for (const sku of ['SDK-1', 'SDK-2']) {
      dataOf(await client.graphql(CreateProductDocument, { input: { sku, name: `Product ${sku}` } }));
    }
  });

  it('catalog: lists the products created', async () => {
    const products = dataOf(await client.graphql(ProductsDocument, { first: 10 })).products;
    expect(products.edges.map((edge) => edge.node.sku).sort()).toEqual(['SDK-1', 'SDK-2']);
    expect(products.pageInfo.hasNextPage).toBe(false);
  });

  it('stock: adds units over REST and reads them in the inventory query', async () => {
    const added = await client.rest.POST('/api/inventory/items', {
      body: { data: [{ sku: 'SDK-1', warehouseId, businessId, quantity: 10 }] },
      headers: { 'idempotency-key': 'sdk-opening-balance' },
    });
    expect(added.response.status).toBe(201);
    const inventory = dataOf(await client.graphql(InventoryDocument, { sku: 'SDK-1' })).inventory;
    expect(inventory.edges.map((edge) => edge.node.quantity_available)).toEqual([10]);
  });

  it('reservations: holds units of the inventory', async () => {
    const reservation = dataOf(
      await client.graphql(CreateReservationDocument, {
        input: {
          business_id: businessId,
          warehouse_id: warehouseId,
          channel_id: channelId,
          customer: { name: 'Ada' },
          items: [{ sku: 'SDK-1', quantity: 2 }],
          expires_at: Date.now() + 60_000,
        },
      }),
    ).createReservation.reservation;
    expect(reservation.status).toBe('ACTIVE');
    expect(reservation.items).toEqual([{ sku: 'SDK-1', quantity: 2 }]);
    const inventory = dataOf(await client.graphql(InventoryDocument, { sku: 'SDK-1' })).inventory;
    expect(inventory.edges[0]!.node).toMatchObject({ quantity: 10, quantity_reserved: 2, quantity_available: 8 });
  });

  it('orders: commits units, and an order beyond the stock is OUT_OF_STOCK', async () => {
    const order = dataOf(
      await client.graphql(CreateOrderDocument, {
        input: {
          business_id: businessId,
          warehouse_id: warehouseId,
          channel_id: channelId,
          items: [{ sku: 'SDK-1', quantity: 3 }],
        },
      }),
    ).createOrder.order;
    expect(order.items.map((item) => [item.sku, item.quantity, item.state])).toEqual([['SDK-1', 3, 'ALLOCATED']]);
    const tooMuch = await client.graphql(CreateOrderDocument, {
      input: {
        business_id: businessId,
        warehouse_id: warehouseId,
        channel_id: channelId,
        items: [{ sku: 'SDK-1', quantity: 6 }],
      },
    });
    expect(tooMuch.errors?.[0]?.extensions?.code).toBe('OUT_OF_STOCK');
  });

  it('preferences: creates an item preference', async () => {
    const preferences = dataOf(
      await client.graphql(CreateItemPreferencesDocument, {
        input: {
          preferences: [
            {
              sku: 'SDK-2',
              warehouse_id: warehouseId,
              business_id: businessId,
              minimum_quantity: 1,
              optimal_quantity: 5,
              maximum_quantity: 10,
              reorder_point: 2,
              is_backorder_allowed: false,
              is_restricted_to_single_position: false,
            },
          ],
        },
      }),
    ).createItemPreferences.preferences;
    expect(preferences.map((preference) => [preference.sku, preference.reorder_point])).toEqual([['SDK-2', 2]]);
  });

  it('supply: announces goods and groups them into a supply that makes them expected', async () => {
    const announcement = dataOf(
      await client.graphql(CreateAnnouncementDocument, {
        input: { business_id: businessId, warehouse_id: warehouseId, items: [{ sku: 'SDK-2', quantity: 4 }] },
      }),
    ).createAnnouncement.announcement;
    const supply = dataOf(
      await client.graphql(CreateSupplyDocument, {
        input: { announcement_ids: [announcement.id], settings: { processing: 'REGISTER' } },
      }),
    ).createSupply.supply;
    expect(supply.status).toBe('EXPECTED');
    expect(supply.items).toEqual([{ sku: 'SDK-2', quantity: 4 }]);
    const inventory = dataOf(await client.graphql(InventoryDocument, { sku: 'SDK-2' })).inventory;
    expect(inventory.edges.map((edge) => edge.node.quantity_expected)).toEqual([4]);
  });
});

describe('broadcasts', () => {
  it('sets a sales channel webhook', async () => {
    // A tenant of its own with no stock: nothing is ever delivered to the address.
    const tenant = await admin.rest.POST('/api/admin/tenants', { body: { data: { name: 'SDK broadcasts' } } });
    const key = await admin.rest.POST('/api/admin/tenants/{tenant_id}/api-keys', {
      params: { path: { tenant_id: tenant.data!.data.id } },
      body: { data: { name: 'sdk', scopes: ['catalog:write'] } },
    });
    const channelClient = createClient({ baseUrl, token: key.data!.data.key });
    const channelId = dataOf(
      await channelClient.graphql(CreateSalesChannelDocument, { input: { name: 'Marketplace' } }),
    ).createSalesChannel.sales_channel.id;
    const webhook = dataOf(
      await channelClient.graphql(SetSalesChannelWebhookDocument, {
        input: {
          channel_id: channelId,
          url: 'https://hooks.example.com/stock',
          secret: 'a-secret-of-32-characters-or-more',
        },
      }),
    ).setSalesChannelWebhook;
    expect(webhook).toEqual({ channel_id: channelId, url: 'https://hooks.example.com/stock' });
    const stored = await sql(t.databaseUrl, 'SELECT url FROM channel_webhooks WHERE channel_id = $1', [channelId]);
    expect(stored).toEqual([{ url: 'https://hooks.example.com/stock' }]);
  });
});
