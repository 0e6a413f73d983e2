/**
 * The UCP catalog operations on the authenticated `/mcp`: over the catalog the token's tenant
 * names, behind the `search` scope, each answer checked against the UCP schemas.
 */
import type { AddressInfo } from 'node:net';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { beforeAll, describe, expect, it } from 'vitest';
import { UcpGetProductResponse, UcpLookupResponse, UcpSearchResponse } from '../../src/modules/ucp/ucp.schemas';
import { createKey, startTestApp } from '../helpers/app';
import { addStock, createStockWorld, type StockWorld } from './orders.fixtures';

const t = await startTestApp();
await t.app.listen({ host: '127.0.0.1', port: 0 });
const base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
let world: StockWorld;
let bare: StockWorld;

const meta = { 'ucp-agent': { profile: 'https://platform.example/profile.json' } };
const MAPPING = {
  product_id: 'product_id',
  sku: 'sku',
  title: 'title',
  price: 'price',
  price_scale: 2,
  currency: 'EUR',
};

async function connect(token: string) {
  const client = new Client(
    { name: 'mcp-catalog-test', version: '1.0.0' },
    { versionNegotiation: { mode: { pin: '2026-07-28' } } },
  );
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${base}/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${token}` } },
    }),
  );
  return client;
}

beforeAll(async () => {
  world = await createStockWorld(t, 'MCP catalog tenant', 2);
  bare = await createStockWorld(t, 'MCP tenant without a catalog', 2);
  await addStock(t, world, 'SKU-1', 3);
  const created = await t.rest.post('/api/instant/indexes', {
    token: world.tenant.key,
    body: {
      data: { name: 'products', alias: 'products', filters: [{ key: 'product_id' }, { key: 'sku' }, { key: 'price' }] },
    },
  });
  expect(created.status, created.rawBody).toBe(201);
  const documents = [
    { id: 'd1', product_id: 'P1', sku: 'SKU-1', title: 'Desk lamp', price: 25.5 },
    { id: 'd2', product_id: 'P2', sku: 'SKU-2', title: 'Floor lamp', price: 80 },
  ];
  const put = await t.rest.put('/api/instant/indexes/products/documents', {
    token: world.tenant.key,
    body: { data: documents },
  });
  expect(put.status, put.rawBody).toBe(204);
  // Sent around the contract-checking client: the catalog setting is the UCP module's operation.
  const catalog = await t.app.inject({
    method: 'PUT',
    url: '/api/agents/catalog',
    headers: { authorization: `Bearer ${world.tenant.key}` },
    payload: { data: { index: 'products', mapping: MAPPING } },
  });
  expect(catalog.statusCode, catalog.body).toBe(200);
});

describe('catalog operations on /mcp', () => {
  it("search, look up and read products of the tenant's catalog, available as stock allows", async () => {
    const client = await connect(world.tenant.key);
    const searched = await client.callTool({ name: 'search_catalog', arguments: { meta, catalog: { query: 'lamp' } } });
    expect(searched.isError ?? false, JSON.stringify(searched)).toBe(false);
    const search = UcpSearchResponse.parse(searched.structuredContent);
    expect(search.products.map((product) => product.id).sort()).toEqual(['P1', 'P2']);
    const looked = await client.callTool({ name: 'lookup_catalog', arguments: { meta, catalog: { ids: ['P2'] } } });
    expect(UcpLookupResponse.parse(looked.structuredContent).products.map((product) => product.id)).toEqual(['P2']);
    const got = await client.callTool({ name: 'get_product', arguments: { meta, catalog: { id: 'P1' } } });
    const product = UcpGetProductResponse.parse(got.structuredContent).product;
    expect(product.variants[0]!.availability).toEqual({ available: true });
    const floor = await client.callTool({ name: 'get_product', arguments: { meta, catalog: { id: 'P2' } } });
    expect(UcpGetProductResponse.parse(floor.structuredContent).product.variants[0]!.availability).toEqual({
      available: false,
    });
    // On the tenant's own endpoint the credential names the caller: no profile needed.
    const bare = await client.callTool({ name: 'search_catalog', arguments: { catalog: { query: 'lamp' } } });
    expect(UcpSearchResponse.parse(bare.structuredContent).products.length).toBeGreaterThan(0);
  });

  it("answers a tenant without a catalog NOT_FOUND, never another tenant's products", async () => {
    const client = await connect(bare.tenant.key);
    const searched = await client.callTool({ name: 'search_catalog', arguments: { meta, catalog: { query: 'lamp' } } });
    expect(searched.isError).toBe(true);
    expect((searched.structuredContent as { code: string }).code).toBe('NOT_FOUND');
  });

  it('needs the search scope', async () => {
    const key = await createKey(t.rest, world.tenant.id, ['inventory:read']);
    const response = await fetch(`${base}/mcp`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${key}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': '2026-07-28',
        'mcp-method': 'tools/call',
        'mcp-name': 'search_catalog',
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: {
          name: 'search_catalog',
          arguments: { meta, catalog: { query: 'lamp' } },
          _meta: {
            'io.modelcontextprotocol/protocolVersion': '2026-07-28',
            'io.modelcontextprotocol/clientInfo': { name: 'x', version: '1' },
            'io.modelcontextprotocol/clientCapabilities': {},
          },
        },
      }),
    });
    expect(response.status).toBe(403);
    expect(response.headers.get('www-authenticate')).toContain('scope="search"');
  });
});
