/**
 * The UCP catalog: the tenant's catalog setting (`/api/agents/catalog`), and a proxy key's public
 * storefront catalog through the UCP REST binding (`/ucp/{key}/catalog/*`), its MCP endpoint
 * (`/ucp/{key}/mcp`, with the official client) and its profile. Every catalog response is checked
 * against the UCP schemas; availability follows stock; the key's search settings, its access rule
 * and the per-address limit bound what an anonymous caller gets; hostile bodies are refused.
 */
import type { AddressInfo } from 'node:net';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  UcpBusinessProfile,
  UcpErrorResponse,
  UcpGetProductResponse,
  UcpLookupResponse,
  UcpSearchResponse,
  UCP_VERSION,
} from '../../src/modules/ucp/ucp.schemas';
import { startTestApp } from '../helpers/app';
import { expectRestError } from '../helpers/rest';
import { addStock, createStockWorld, type StockWorld } from './orders.fixtures';
import { graphqlData } from './stock.fixtures';

const REQUESTS_PER_MINUTE = 60;
const t = await startTestApp({
  env: { SEARCH_EVENTS_PER_MINUTE: String(REQUESTS_PER_MINUTE), EDGE_DOMAIN: 'edge.test' },
});
const { rest } = t;
let world: StockWorld;

const AGENT = { 'UCP-Agent': 'profile="https://platform.example/profile.json"' };
const MAPPING = {
  product_id: 'product_id',
  sku: 'sku',
  title: 'title',
  description: 'description',
  price: 'price',
  price_scale: 2,
  currency: 'EUR',
  categories: 'categories',
  image_url: 'image',
  url: 'url',
};

const shades = Array.from({ length: 12 }, (_, i) => ({
  id: `shade-${i + 1}`,
  product_id: `S${i + 1}`,
  sku: `SHADE-${i + 1}`,
  title: `Shade number ${i + 1}`,
  price: 5 + i,
  categories: ['Lighting'],
}));
const documents = [
  {
    id: 'd1',
    product_id: 'P1',
    sku: 'SKU-1',
    title: 'Desk lamp',
    description: 'A small desk lamp',
    price: 25.5,
    categories: ['Lighting'],
    image: 'https://cdn.example.com/p1.jpg',
    url: 'https://shop.example.com/p1',
  },
  { id: 'd2', product_id: 'P2', sku: 'SKU-2', title: 'Floor lamp', price: 80, categories: ['Lighting'] },
  { id: 'd3', product_id: 'P3', sku: 'SKU-3', title: 'Office chair', price: 150, categories: ['Furniture'] },
  { id: 'd4', product_id: 'P4', sku: 'KIT-A', title: 'Reading kit', price: 99, categories: ['Kits'] },
  ...shades,
];

/** Each group of tests sends from an address of its own, so that only the rate-limit test reaches the limit. */
const at = (remoteAddress: string) => ({
  post: (url: string, body: unknown, headers: Record<string, string> = AGENT) =>
    rest.post(url, { body, headers, remoteAddress }),
  postRaw: (url: string, rawBody: string) =>
    rest.post(url, { rawBody, headers: { ...AGENT, 'content-type': 'application/json' }, remoteAddress }),
  get: (url: string, headers: Record<string, string> = {}) => rest.get(url, { headers, remoteAddress }),
});

async function createIndex(alias: string, docs: unknown[]) {
  const filters = ['product_id', 'sku', 'price', 'categories'].map((key) => ({ key }));
  const created = await rest.post('/api/instant/indexes', {
    token: world.tenant.key,
    body: { data: { name: alias, alias, filters } },
  });
  expect(created.status, created.rawBody).toBe(201);
  const put = await rest.put(`/api/instant/indexes/${alias}/documents`, {
    token: world.tenant.key,
    body: { data: docs },
  });
  expect(put.status, put.rawBody).toBe(204);
}

async function createProxy(key: string, aliases: string[], isPrivate = false) {
  const routes = {
    path: '*',
    origin: { uri: 'https://shop.example.com' },
    settings: { auth: { is_required: isPrivate } },
  };
  const created = await rest.post('/api/storage/edge/proxies', {
    token: world.tenant.key,
    body: { data: { key, routes } },
  });
  expect(created.status, created.rawBody).toBe(201);
  const settings = { indexes: aliases.map((alias) => ({ alias })) };
  const put = await rest.put(`/api/instant/search/${key}/settings`, {
    token: world.tenant.key,
    body: { data: settings },
  });
  expect(put.status, put.rawBody).toBe(200);
}

const putCatalog = (data: unknown, token = world.tenant.key) =>
  rest.put('/api/agents/catalog', { token, body: { data } });

beforeAll(async () => {
  world = await createStockWorld(t, 'Storefront tenant', 3);
  await addStock(t, world, 'SKU-1', 10);
  await addStock(t, world, 'SKU-2', 1);
  await createIndex('products', documents);
  await createIndex('pages', [{ id: 'x', product_id: 'X', sku: 'X', title: 'About us', price: 0 }]);
  await createProxy('shop', ['products']);
  await createProxy('blog', ['pages']);
  await createProxy('hidden', ['products'], true);
});

describe('the catalog setting', () => {
  it('is not found before it is set', async () => {
    expectRestError(await rest.get('/api/agents/catalog', { token: world.tenant.key }), 404);
  });

  it('refuses an unknown alias, a field that is no filter and hostile bodies, storing nothing', async () => {
    expectRestError(await putCatalog({ index: 'nope', mapping: MAPPING }), 400, 'body.data.index');
    expectRestError(
      await putCatalog({ index: 'products', mapping: { ...MAPPING, sku: 'title' } }),
      400,
      'body.data.mapping.sku',
    );
    expectRestError(await putCatalog({ index: 'products', mapping: { ...MAPPING, currency: null } }), 400);
    expectRestError(await putCatalog({ index: 'products', mapping: { ...MAPPING, price_scale: '2' } }), 400);
    expectRestError(await putCatalog({ index: 'x'.repeat(100_000), mapping: MAPPING }), 400);
    let nested: unknown = {};
    for (let i = 0; i < 500; i += 1) nested = { a: nested };
    expect((await putCatalog({ index: 'products', mapping: nested })).status).toBe(400);
    const manyKeys = Object.fromEntries(Array.from({ length: 5000 }, (_, i) => [`k${i}`, i]));
    expectRestError(await putCatalog({ index: 'products', mapping: { ...MAPPING, ...manyKeys } }), 400);
    expectRestError(await rest.get('/api/agents/catalog', { token: world.tenant.key }), 404);
  });

  it('is stored and read back, with the scopes it needs', async () => {
    const put = await putCatalog({ index: 'products', mapping: MAPPING });
    expect(put.status, put.rawBody).toBe(200);
    const read = await rest.get('/api/agents/catalog', { token: world.tenant.key });
    expect(read.status).toBe(200);
    expect(read.body.data).toMatchObject({ index: 'products', mapping: { ...MAPPING, currency_field: null } });
  });
});

describe('the REST binding', () => {
  const client = at('10.0.1.1');
  const search = async (body: unknown) => {
    const response = await client.post('/ucp/shop/catalog/search', body);
    expect(response.status, response.rawBody).toBe(200);
    return UcpSearchResponse.parse(response.body);
  };

  it('searches, with prices in minor units and availability from stock', async () => {
    const found = await search({ query: 'lamp' });
    expect(found.ucp.version).toBe(UCP_VERSION);
    const byId = Object.fromEntries(found.products.map((product) => [product.id, product]));
    expect(byId.P1).toMatchObject({
      title: 'Desk lamp',
      description: { plain: 'A small desk lamp' },
      url: 'https://shop.example.com/p1',
      categories: [{ value: 'Lighting' }],
      media: [{ type: 'image', url: 'https://cdn.example.com/p1.jpg' }],
      price_range: { min: { amount: 2550, currency: 'EUR' }, max: { amount: 2550, currency: 'EUR' } },
      variants: [
        { id: 'SKU-1', sku: 'SKU-1', price: { amount: 2550, currency: 'EUR' }, availability: { available: true } },
      ],
    });
    expect(byId.P2!.variants[0]!.availability).toEqual({ available: true });
    const chair = await search({ query: 'chair' });
    expect(chair.products.map((product) => product.id)).toEqual(['P3']);
    expect(chair.products[0]!.variants[0]!.availability).toEqual({ available: false });
  });

  it('filters by price in minor units and by category', async () => {
    const priced = await search({ filters: { price: { min: 2000, max: 9000 } } });
    expect(priced.products.map((product) => product.id).sort()).toEqual(['P1', 'P2']);
    const cheap = await search({ filters: { price: { max: 600 } } });
    expect(cheap.products.map((product) => product.id).sort()).toEqual(['S1', 'S2']);
    const furniture = await search({ filters: { categories: ['Furniture'] } });
    expect(furniture.products.map((product) => product.id)).toEqual(['P3']);
  });

  it('pages with a cursor, 10 by default', async () => {
    const first = await search({ query: 'shade' });
    expect(first.products).toHaveLength(10);
    expect(first.pagination).toMatchObject({ has_next_page: true, total_count: 12 });
    const second = await search({ query: 'shade', pagination: { cursor: first.pagination!.cursor } });
    expect(second.products).toHaveLength(2);
    expect(second.pagination).toMatchObject({ has_next_page: false });
    const ids = [...first.products, ...second.products].map((product) => product.id);
    expect(new Set(ids).size).toBe(12);
    const small = await search({ query: 'shade', pagination: { limit: 5 } });
    expect(small.products).toHaveLength(5);
  });

  it('looks products up by product id or SKU, naming the identifiers not found', async () => {
    const response = await client.post('/ucp/shop/catalog/lookup', { ids: ['P1', 'SKU-2', 'P1', 'nope'] });
    expect(response.status, response.rawBody).toBe(200);
    const found = UcpLookupResponse.parse(response.body);
    const inputs = Object.fromEntries(found.products.map((product) => [product.id, product.variants[0]!.inputs]));
    expect(inputs).toEqual({ P1: [{ id: 'P1', match: 'featured' }], P2: [{ id: 'SKU-2', match: 'exact' }] });
    expect(found.messages).toEqual([{ type: 'info', code: 'not_found', content: 'nope' }]);
  });

  it('gets one product, or the UCP error response', async () => {
    const response = await client.post('/ucp/shop/catalog/product', { id: 'SKU-1' });
    expect(response.status, response.rawBody).toBe(200);
    expect(UcpGetProductResponse.parse(response.body).product.id).toBe('P1');
    const missing = await client.post('/ucp/shop/catalog/product', { id: 'prod_invalid' });
    expect(missing.status).toBe(200);
    expect(UcpErrorResponse.parse(missing.body).messages).toEqual([
      { type: 'error', code: 'not_found', content: 'Product not found: prod_invalid', severity: 'unrecoverable' },
    ]);
  });

  it('says a variant is unavailable once its last unit is reserved', async () => {
    const lookup = async () =>
      UcpLookupResponse.parse((await client.post('/ucp/shop/catalog/lookup', { ids: ['P2'] })).body).products[0]!
        .variants[0]!.availability;
    expect(await lookup()).toEqual({ available: true });
    await graphqlData(
      t,
      world.tenant.key,
      `mutation($input: CreateReservationInput!) { createReservation(input: $input) { reservation { id } } }`,
      {
        input: {
          business_id: world.catalog.businessId,
          warehouse_id: world.warehouseId,
          channel_id: world.channelId,
          items: [{ sku: 'SKU-2', quantity: 1 }],
          customer: { name: 'Buyer' },
          expires_at: Date.now() + 3_600_000,
        },
      },
    );
    expect(await lookup()).toEqual({ available: false });
    await addStock(t, world, 'SKU-2', 3);
    expect(await lookup()).toEqual({ available: true });
  });
});

describe('a bundle in the catalog', () => {
  it('is available while its components make one', async () => {
    const client = at('10.0.1.2');
    const define = (mutation: string, input: unknown) => graphqlData(t, world.tenant.key, mutation, { input });
    await define(`mutation($input: CreateProductInput!) { createProduct(input: $input) { product { id } } }`, {
      sku: 'KIT-A',
      name: 'Reading kit',
    });
    await define(
      `mutation($input: SetBundleComponentsInput!) { setBundleComponents(input: $input) { product { id } } }`,
      { sku: 'KIT-A', components: [{ sku: 'SKU-3', quantity: 2 }] },
    );
    const kit = async () =>
      UcpGetProductResponse.parse((await client.post('/ucp/shop/catalog/product', { id: 'KIT-A' })).body).product
        .variants[0]!.availability;
    expect(await kit()).toEqual({ available: false });
    await addStock(t, world, 'SKU-3', 1);
    expect(await kit()).toEqual({ available: false });
    await addStock(t, world, 'SKU-3', 1);
    expect(await kit()).toEqual({ available: true });
  });
});

describe('what the storefront refuses', () => {
  const client = at('10.0.2.1');

  it('refuses unknown keys, private proxies and keys whose settings leave the catalog out', async () => {
    expectRestError(await client.post('/ucp/nokey/catalog/search', { query: 'lamp' }), 404);
    expectRestError(await client.post('/ucp/hidden/catalog/search', { query: 'lamp' }), 401);
    expectRestError(await client.post('/ucp/blog/catalog/search', { query: 'lamp' }), 404);
    // A private proxy answers its own tenant's token with scope search, as its search does.
    const privately = await rest.post('/ucp/hidden/catalog/search', {
      body: { query: 'lamp' },
      headers: AGENT,
      token: world.tenant.key,
      remoteAddress: '10.0.2.1',
    });
    expect(privately.status, privately.rawBody).toBe(200);
    expect(UcpSearchResponse.parse(privately.body).products.length).toBeGreaterThan(0);
    expectRestError(await client.get('/ucp/blog/.well-known/ucp'), 404);
  });

  it('refuses malformed and hostile requests with documented errors', async () => {
    expectRestError(await client.post('/ucp/shop/catalog/search', { query: 'lamp' }, {}), 400);
    expectRestError(await client.post('/ucp/shop/catalog/search', {}), 400);
    expectRestError(await client.post('/ucp/shop/catalog/search', { query: 'x'.repeat(100_000) }), 400);
    expectRestError(
      await client.post('/ucp/shop/catalog/search', { query: 'lamp', pagination: { cursor: 'bogus' } }),
      400,
    );
    expectRestError(await client.post('/ucp/shop/catalog/search', { filters: { price: { min: -1 } } }), 400);
    expectRestError(await client.post('/ucp/shop/catalog/lookup', { ids: [] }), 400);
    const tooMany = await client.post('/ucp/shop/catalog/lookup', {
      ids: Array.from({ length: 101 }, (_, i) => `id${i}`),
    });
    expectRestError(tooMany, 400);
    expect(tooMany.rawBody).toContain('request_too_large');
    const huge = await client.post('/ucp/shop/catalog/lookup', {
      ids: Array.from({ length: 10_000 }, (_, i) => `id${i}`),
    });
    expectRestError(huge, 400);
    let nested: unknown = 'deep';
    for (let i = 0; i < 1000; i += 1) nested = { a: nested };
    expect(
      (await client.postRaw('/ucp/shop/catalog/search', JSON.stringify({ query: 'lamp', context: nested }))).status,
    ).toBe(400);
  });
});

describe('the profile', () => {
  it('names both bindings and the catalog capabilities, at the key and on its own host', async () => {
    const client = at('10.0.3.1');
    const response = await client.get('/ucp/shop/.well-known/ucp');
    expect(response.status, response.rawBody).toBe(200);
    const profile = UcpBusinessProfile.parse(response.body);
    expect(profile.ucp.version).toBe(UCP_VERSION);
    const services = profile.ucp.services['dev.ucp.shopping']!;
    expect(services.map((service) => [service.transport, new URL(service.endpoint!).pathname])).toEqual([
      ['rest', '/ucp/shop'],
      ['mcp', '/ucp/shop/mcp'],
    ]);
    expect(Object.keys(profile.ucp.capabilities ?? {}).sort()).toEqual([
      'dev.ucp.shopping.catalog.lookup',
      'dev.ucp.shopping.catalog.search',
    ]);
    // The proxy's own host: not a path of the contract, so asked without the contract check.
    const onHost = await t.app.inject({
      method: 'GET',
      url: '/.well-known/ucp',
      headers: { host: 'shop.edge.test' },
      remoteAddress: '10.0.3.1',
    });
    expect(onHost.statusCode, onHost.body).toBe(200);
    expect(JSON.parse(onHost.body)).toEqual(response.body);
  });
});

describe('the public MCP endpoint', () => {
  it('serves the three catalog operations to the official client without a token', async () => {
    await t.app.listen({ host: '127.0.0.1', port: 0 });
    const port = (t.app.server.address() as AddressInfo).port;
    const client = new Client(
      { name: 'ucp-storefront-test', version: '1.0.0' },
      { versionNegotiation: { mode: { pin: '2026-07-28' } } },
    );
    await client.connect(new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${port}/ucp/shop/mcp`)));
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name)).toEqual(['search_catalog', 'lookup_catalog', 'get_product']);
    const meta = { 'ucp-agent': { profile: 'https://platform.example/profile.json' } };
    const searched = await client.callTool({ name: 'search_catalog', arguments: { meta, catalog: { query: 'lamp' } } });
    expect(UcpSearchResponse.parse(searched.structuredContent).products.length).toBeGreaterThan(0);
    const looked = await client.callTool({
      name: 'lookup_catalog',
      arguments: { meta, catalog: { ids: ['P3', 'zzz'] } },
    });
    const lookup = UcpLookupResponse.parse(looked.structuredContent);
    expect(lookup.products.map((product) => product.id)).toEqual(['P3']);
    expect(lookup.messages).toEqual([{ type: 'info', code: 'not_found', content: 'zzz' }]);
    const got = await client.callTool({ name: 'get_product', arguments: { meta, catalog: { id: 'P1' } } });
    expect(UcpGetProductResponse.parse(got.structuredContent).product.variants[0]!.availability).toEqual({
      available: true,
    });
    await expect(
      client.callTool({ name: 'search_catalog', arguments: { catalog: { query: 'lamp' } } }),
    ).rejects.toMatchObject({
      code: -32602,
      message: expect.stringContaining('Invalid arguments for tool search_catalog: meta is required'),
    });
    await expect(
      client.callTool({
        name: 'lookup_catalog',
        arguments: { meta, catalog: { ids: Array.from({ length: 101 }, (_, i) => `i${i}`) } },
      }),
    ).rejects.toMatchObject({ code: -32602 });
    await client.close();

    // Counted per operation and outcome, apart from the authenticated /mcp's series.
    const text = (await t.app.inject({ method: 'GET', url: '/metrics' })).body;
    const value = (series: string) => {
      const line = text.split('\n').find((candidate) => candidate.startsWith(`${series} `));
      return line === undefined ? undefined : Number(line.slice(series.length + 1));
    };
    const calls = (tool: string, outcome: string) =>
      value(`commerce_ucp_storefront_tool_calls_total{tool="${tool}",outcome="${outcome}"}`);
    expect(calls('search_catalog', 'ok')).toBe(1);
    expect(calls('search_catalog', 'invalid_params')).toBe(1);
    expect(calls('lookup_catalog', 'ok')).toBe(1);
    expect(calls('lookup_catalog', 'invalid_params')).toBe(1);
    expect(calls('get_product', 'ok')).toBe(1);
    expect(value('commerce_ucp_storefront_tool_call_duration_seconds_count{tool="search_catalog"}')).toBe(2);
    expect(text).not.toContain('commerce_mcp_tool_calls_total{tool="search_catalog"');
  });
});

/** A `tools/list` of a key's storefront MCP endpoint, as a 2026-07-28 client sends it. */
const mcpPost = (key: string, remoteAddress: string) =>
  t.app.inject({
    method: 'POST',
    url: `/ucp/${key}/mcp`,
    remoteAddress,
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2026-07-28',
      'mcp-method': 'tools/list',
    },
    payload: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/list',
      params: {
        _meta: {
          'io.modelcontextprotocol/protocolVersion': '2026-07-28',
          'io.modelcontextprotocol/clientInfo': { name: 'ucp-test', version: '1.0.0' },
          'io.modelcontextprotocol/clientCapabilities': {},
        },
      },
    }),
  });

describe('what the storefront MCP endpoint refuses', () => {
  it('refuses unknown keys, private proxies and keys whose settings leave the catalog out', async () => {
    expect((await mcpPost('shop', '10.0.4.1')).statusCode).toBe(200);
    for (const [key, status] of [
      ['nokey', 404],
      ['hidden', 401],
      ['blog', 404],
      ['NOT_A_KEY', 404],
    ] as const) {
      const response = await mcpPost(key, '10.0.4.1');
      expect(response.statusCode, response.body).toBe(status);
      expect(JSON.parse(response.body).error.code).toBe(status);
    }
  });
});

describe('the limit per client address', () => {
  it('answers 429 with Retry-After beyond SEARCH_EVENTS_PER_MINUTE', async () => {
    const client = at('10.0.9.1');
    for (let i = 0; i < REQUESTS_PER_MINUTE; i += 1) {
      expect((await client.post('/ucp/shop/catalog/lookup', { ids: ['P1'] })).status).toBe(200);
    }
    const refused = await client.post('/ucp/shop/catalog/lookup', { ids: ['P1'] });
    expectRestError(refused, 429);
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    // The MCP endpoint of the storefront counts against the same limit.
    const mcp = await mcpPost('shop', '10.0.9.1');
    expect(mcp.statusCode, mcp.body).toBe(429);
    expect(Number(mcp.headers['retry-after'])).toBeGreaterThan(0);
  });
});
