/**
 * `/mcp` as an agent meets it with the official client and an API key, knowing nothing of the
 * tenant: catalog search without `meta`, refusals whose message names the wrong argument and why,
 * `list_locations`, and `reserve_items` taking the tenant's only business and sales channel. Hostile
 * arguments get the documented refusal and change nothing.
 */
import type { AddressInfo } from 'node:net';
import { Client, ProtocolError, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_TOOL_INPUT_ELEMENTS } from '../../src/kernel/mcp';
import { UcpSearchResponse } from '../../src/modules/ucp/ucp.schemas';
import { createTenant, startTestApp, type Tenant } from '../helpers/app';
import { addStock, createStockWorld, operationsSnapshot, type StockWorld } from './orders.fixtures';
import { graphqlData } from './stock.fixtures';

const t = await startTestApp();
let shop: { tenant: Tenant; businessId: string; warehouseId: string; channelId: string };
let twoBusinesses: StockWorld;
let url: URL;

async function connect(token: string) {
  const client = new Client({ name: 'agent-usable-test', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(url, { requestInit: { headers: { authorization: `Bearer ${token}` } } }),
  );
  return client;
}

/** The refusal a call ends in: the thrown protocol error (the call must not succeed). */
async function refusal(client: Client, name: string, args: Record<string, unknown>): Promise<ProtocolError> {
  const thrown = await client.callTool({ name, arguments: args }).then(
    (result) => result,
    (error: unknown) => error,
  );
  expect(thrown, JSON.stringify(thrown)).toBeInstanceOf(ProtocolError);
  expect((thrown as ProtocolError).code).toBe(-32602);
  return thrown as ProtocolError;
}

/** A tenant with one business, one warehouse, one sales channel, a lamp in stock and a catalog of it. */
async function createShop() {
  const tenant = await createTenant(t.rest, 'One shop');
  const create = async (mutation: string, input: Record<string, unknown>, field: string) => {
    const type = `${mutation[0]!.toUpperCase()}${mutation.slice(1)}Input`;
    const data = await graphqlData<Record<string, Record<string, { id: string }>>>(
      t,
      tenant.key,
      `mutation($input: ${type}!) { ${mutation}(input: $input) { ${field} { id } } }`,
      { input },
    );
    return data[mutation]![field]!.id;
  };
  const businessId = await create('createBusiness', { name: 'Lamp shop' }, 'business');
  const warehouseId = await create('createWarehouse', { business_id: businessId, name: 'Back room' }, 'warehouse');
  const channelId = await create('createSalesChannel', { name: 'Web shop' }, 'sales_channel');
  await create('createProduct', { sku: 'LAMP-1', name: 'Desk lamp' }, 'product');
  const token = tenant.key;
  const stocked = await t.rest.post('/api/inventory/items', {
    token,
    body: { data: [{ sku: 'LAMP-1', quantity: 5, warehouseId, businessId }] },
  });
  expect(stocked.status, stocked.rawBody).toBe(201);
  const filters = ['product_id', 'sku', 'price'].map((key) => ({ key }));
  const index = await t.rest.post('/api/instant/indexes', {
    token,
    body: { data: { name: 'Catalog', alias: 'catalog', filters } },
  });
  expect(index.status, index.rawBody).toBe(201);
  const documents = [{ id: '1', product_id: 'P1', sku: 'LAMP-1', title: 'Desk lamp', price: 1999 }];
  const put = await t.rest.put('/api/instant/indexes/catalog/documents', { token, body: { data: documents } });
  expect(put.status, put.rawBody).toBe(204);
  const mapping = { product_id: 'product_id', sku: 'sku', title: 'title', price: 'price', currency: 'USD' };
  const mapped = await t.rest.put('/api/agents/catalog', { token, body: { data: { index: 'catalog', mapping } } });
  expect(mapped.status, mapped.rawBody).toBe(200);
  return { tenant, businessId, warehouseId, channelId };
}

const reserveArgs = (extra: Record<string, unknown> = {}) => ({
  warehouse_id: shop.warehouseId,
  items: [{ sku: 'LAMP-1', quantity: 2 }],
  customer: { name: 'Ada Lovelace' },
  idempotency_key: `key-${Math.random()}`,
  ...extra,
});

beforeAll(async () => {
  shop = await createShop();
  twoBusinesses = await createStockWorld(t, 'Two businesses', 2);
  await addStock(t, twoBusinesses, 'SKU-1', 3);
  await t.app.listen({ host: '127.0.0.1', port: 0 });
  url = new URL(`http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}/mcp`);
});

afterAll(() => t.app.close());

describe('an agent with an API key and nothing else', () => {
  it('searches the catalog without meta, and with a profile as before', async () => {
    const client = await connect(shop.tenant.key);
    for (const args of [
      { catalog: { query: 'lamp' } },
      { meta: {}, catalog: { query: 'lamp' } },
      { meta: { 'ucp-agent': { profile: 'https://platform.example/profile.json' } }, catalog: { query: 'lamp' } },
    ]) {
      const result = await client.callTool({ name: 'search_catalog', arguments: args });
      expect(result.isError, JSON.stringify(result)).toBeFalsy();
      const search = UcpSearchResponse.parse(result.structuredContent);
      expect(search.products.map((product) => product.id)).toEqual(['P1']);
      expect(search.products[0]!.variants[0]!.availability?.available).toBe(true);
    }
    await client.close();
  });

  it("is told in the error's message which argument is wrong and why", async () => {
    const client = await connect(shop.tenant.key);
    const noCatalog = await refusal(client, 'search_catalog', {});
    expect(noCatalog.message).toContain('Invalid arguments for tool search_catalog: catalog is required');
    const emptyQuery = await refusal(client, 'search_catalog', { catalog: { query: ' ' } });
    expect(emptyQuery.message).toContain('catalog.query needs a non-empty query or a filter');
    const quantity = await refusal(client, 'reserve_items', reserveArgs({ items: [{ sku: 'LAMP-1', quantity: 0 }] }));
    expect(quantity.message).toContain('items[0].quantity must be a whole number from 1 to 1000000');
    const noKey = await refusal(client, 'reserve_items', { ...reserveArgs(), idempotency_key: undefined });
    expect(noKey.message).toContain('idempotency_key is required');
    await client.close();
  });

  it("lists the tenant's businesses, warehouses and sales channels with the defaults", async () => {
    const client = await connect(shop.tenant.key);
    const result = await client.callTool({ name: 'list_locations', arguments: {} });
    expect(result.structuredContent).toEqual({
      businesses: [{ id: shop.businessId, name: 'Lamp shop' }],
      warehouses: [{ id: shop.warehouseId, name: 'Back room', business_id: shop.businessId, country_code: null }],
      sales_channels: [{ id: shop.channelId, name: 'Web shop', currency: 'EUR', warehouse_ids: [] }],
      defaults: { business_id: shop.businessId, channel_id: shop.channelId },
      truncated: false,
    });
    const other = await connect(twoBusinesses.tenant.key);
    const listed = (await other.callTool({ name: 'list_locations', arguments: {} })).structuredContent as {
      businesses: { id: string }[];
      defaults: unknown;
    };
    expect(listed.businesses.map((business) => business.id)).toEqual([
      twoBusinesses.catalog.businessId,
      twoBusinesses.catalog.otherBusinessId,
    ]);
    expect(listed.defaults).toEqual({ business_id: null, channel_id: twoBusinesses.channelId });
    await other.close();
    await client.close();
  });

  it("reserves with the tenant's only business and sales channel, and replays by key", async () => {
    const client = await connect(shop.tenant.key);
    const args = reserveArgs();
    const first = await client.callTool({ name: 'reserve_items', arguments: args });
    expect(first.isError, JSON.stringify(first)).toBeFalsy();
    const { reservation } = first.structuredContent as { reservation: Record<string, unknown> };
    expect(reservation).toMatchObject({
      status: 'ACTIVE',
      business_id: shop.businessId,
      channel_id: shop.channelId,
      warehouse_id: shop.warehouseId,
      items: [{ sku: 'LAMP-1', quantity: 2 }],
    });
    const again = await client.callTool({ name: 'reserve_items', arguments: args });
    expect((again.structuredContent as { reservation: { id: string } }).reservation.id).toBe(reservation.id);
    await client.close();
  });

  it('is told to name the business when the tenant has several, and nothing is held', async () => {
    const client = await connect(twoBusinesses.tenant.key);
    const before = await operationsSnapshot(t, twoBusinesses.tenant.id);
    const result = await client.callTool({
      name: 'reserve_items',
      arguments: {
        warehouse_id: twoBusinesses.warehouseId,
        items: [{ sku: 'SKU-1', quantity: 1 }],
        customer: { name: 'Ada Lovelace' },
        idempotency_key: 'several-businesses',
      },
    });
    expect(result.isError).toBe(true);
    const text = (result.content as { type: string; text: string }[])[0]!.text;
    expect(text).toContain(
      'business_id is required: the tenant has more than one business, so name one of its businesses; ' +
        'list them with list_locations',
    );
    expect(result.structuredContent).toMatchObject({ code: 'BAD_REQUEST', details: [{ field: 'business_id' }] });
    expect(await operationsSnapshot(t, twoBusinesses.tenant.id)).toEqual(before);
    await client.close();
  });
});

describe('the 2026-07-28 revision', () => {
  it('answers server/discover statelessly, and a pinned client searches without meta', async () => {
    const _meta = {
      'io.modelcontextprotocol/protocolVersion': '2026-07-28',
      'io.modelcontextprotocol/clientCapabilities': {},
    };
    const discovered = await fetch(url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': '2026-07-28',
        'mcp-method': 'server/discover',
        authorization: `Bearer ${shop.tenant.key}`,
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'server/discover', params: { _meta } }),
    });
    expect(discovered.status).toBe(200);
    expect(discovered.headers.get('mcp-session-id')).toBeNull();
    const body = (await discovered.json()) as { result: Record<string, unknown> };
    expect(body.result).toMatchObject({
      supportedVersions: expect.arrayContaining(['2026-07-28']),
      capabilities: { tools: {} },
      _meta: { 'io.modelcontextprotocol/serverInfo': { name: 'commerce-platform-api' } },
    });

    const client = new Client(
      { name: 'agent-usable-pinned', version: '1.0.0' },
      { versionNegotiation: { mode: { pin: '2026-07-28' } } },
    );
    await client.connect(
      new StreamableHTTPClientTransport(url, {
        requestInit: { headers: { authorization: `Bearer ${shop.tenant.key}` } },
      }),
    );
    const result = await client.callTool({ name: 'search_catalog', arguments: { catalog: { query: 'lamp' } } });
    expect(UcpSearchResponse.parse(result.structuredContent).products.map((product) => product.id)).toEqual(['P1']);
    await client.close();
  });
});

describe('hostile arguments', () => {
  it('are refused as documented and change nothing', async () => {
    const client = await connect(shop.tenant.key);
    const before = await operationsSnapshot(t, shop.tenant.id);
    let deep: unknown = 'lamp';
    for (let level = 0; level < 100; level += 1) deep = { a: deep };
    await expect(
      client.callTool({ name: 'search_catalog', arguments: { catalog: { query: 'lamp', context: deep } } }),
    ).rejects.toThrow(/deeper than 64 levels/);
    const manyKeys = Object.fromEntries(Array.from({ length: 900 }, (_, index) => [`k${index}`, index]));
    const keys = await refusal(client, 'search_catalog', {
      catalog: { query: 'lamp', signals: manyKeys, attribution: manyKeys, context: manyKeys },
    });
    expect(keys.message).toContain(`more than ${MAX_TOOL_INPUT_ELEMENTS} array elements and object members`);
    const hugeArray = await refusal(client, 'reserve_items', reserveArgs({ items: Array(5_000).fill({}) }));
    expect(hugeArray.message).toContain(`more than ${MAX_TOOL_INPUT_ELEMENTS}`);
    const longNotes = await refusal(client, 'reserve_items', reserveArgs({ notes: 'x'.repeat(500_000) }));
    expect(longNotes.message).toContain('notes must be at most 2000 characters');
    const longQuery = await refusal(client, 'search_catalog', { catalog: { query: 'q'.repeat(500_000) } });
    expect(longQuery.message).toMatch(/catalog\.query must have at most 512 characters/);
    expect(await operationsSnapshot(t, shop.tenant.id)).toEqual(before);
    await client.close();
  });
});
