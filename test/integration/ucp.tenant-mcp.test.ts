/**
 * The UCP catalog operations on the authenticated `/mcp`, with the official client: answers of the
 * token's tenant's catalog in the UCP shapes, a tenant without a catalog (an `isError` result), a
 * key without scope `search` (the 403 challenge), and invalid arguments (-32602).
 */
import type { AddressInfo } from 'node:net';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UcpGetProductResult, UcpLookupResponse, UcpSearchResponse } from '../../src/modules/ucp/ucp.schemas';
import { createKey, createTenant, startTestApp, type Tenant } from '../helpers/app';
import { addStock, createStockWorld, type StockWorld } from './orders.fixtures';

const t = await startTestApp();
let world: StockWorld;
let emptyTenant: Tenant;
let url: URL;
const meta = { 'ucp-agent': { profile: 'https://platform.example/profile.json' } };

async function connect(token: string) {
  const client = new Client(
    { name: 'ucp-tenant-test', version: '1.0.0' },
    { versionNegotiation: { mode: { pin: '2026-07-28' } } },
  );
  await client.connect(
    new StreamableHTTPClientTransport(url, { requestInit: { headers: { authorization: `Bearer ${token}` } } }),
  );
  return client;
}

beforeAll(async () => {
  world = await createStockWorld(t, 'Agents tenant', 2);
  emptyTenant = await createTenant(t.rest, 'No catalog');
  await addStock(t, world, 'SKU-1', 3);
  const token = world.tenant.key;
  const filters = ['product_id', 'sku', 'price'].map((key) => ({ key }));
  expect(
    (
      await t.rest.post('/api/instant/indexes', {
        token,
        body: { data: { name: 'Catalog', alias: 'catalog', filters } },
      })
    ).status,
  ).toBe(201);
  const documents = [
    { id: '1', product_id: 'P1', sku: 'SKU-1', title: 'Desk lamp', price: 1999 },
    { id: '2', product_id: 'P2', sku: 'SKU-2', title: 'Floor lamp', price: 8900 },
  ];
  expect(
    (await t.rest.put('/api/instant/indexes/catalog/documents', { token, body: { data: documents } })).status,
  ).toBe(204);
  const mapping = { product_id: 'product_id', sku: 'sku', title: 'title', price: 'price', currency: 'USD' };
  const put = await t.rest.put('/api/agents/catalog', { token, body: { data: { index: 'catalog', mapping } } });
  expect(put.status, put.rawBody).toBe(200);
  await t.app.listen({ host: '127.0.0.1', port: 0 });
  url = new URL(`http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}/mcp`);
});

afterAll(() => t.app.close());

describe('the catalog on /mcp', () => {
  it("answers from the token's tenant's catalog in the UCP shapes", async () => {
    const client = await connect(await createKey(t.rest, world.tenant.id, ['search']));
    const searched = await client.callTool({ name: 'search_catalog', arguments: { meta, catalog: { query: 'lamp' } } });
    const search = UcpSearchResponse.parse(searched.structuredContent);
    const available = Object.fromEntries(search.products.map((p) => [p.id, p.variants[0]!.availability?.available]));
    expect(available).toEqual({ P1: true, P2: false });
    expect(search.products.find((p) => p.id === 'P2')!.price_range.min).toEqual({ amount: 8900, currency: 'USD' });
    const looked = await client.callTool({ name: 'lookup_catalog', arguments: { meta, catalog: { ids: ['SKU-2'] } } });
    expect(UcpLookupResponse.parse(looked.structuredContent).products.map((p) => p.id)).toEqual(['P2']);
    const missing = await client.callTool({ name: 'get_product', arguments: { meta, catalog: { id: 'nope' } } });
    expect(missing.isError).toBeFalsy();
    expect(UcpGetProductResult.parse(missing.structuredContent)).toMatchObject({ ucp: { status: 'error' } });
    await expect(
      client.callTool({
        name: 'search_catalog',
        arguments: { meta, catalog: { query: 'lamp', pagination: { limit: 0 } } },
      }),
    ).rejects.toMatchObject({ code: -32602 });
    await client.close();
  });

  it('answers a tenant without a catalog with an error result, not a protocol error', async () => {
    const client = await connect(emptyTenant.key);
    const result = await client.callTool({ name: 'search_catalog', arguments: { meta, catalog: { query: 'lamp' } } });
    expect(result.isError).toBe(true);
    expect(result.structuredContent).toMatchObject({ code: 'NOT_FOUND' });
    await client.close();
  });

  it('needs scope search: the 403 challenge names it', async () => {
    const token = await createKey(t.rest, world.tenant.id, ['inventory:read']);
    const params = {
      name: 'search_catalog',
      arguments: { meta, catalog: { query: 'lamp' } },
      _meta: {
        'io.modelcontextprotocol/protocolVersion': '2026-07-28',
        'io.modelcontextprotocol/clientInfo': { name: 'ucp-tenant-test', version: '1.0.0' },
        'io.modelcontextprotocol/clientCapabilities': {},
      },
    };
    const response = await t.app.inject({
      method: 'POST',
      url: '/mcp',
      headers: {
        authorization: `Bearer ${token}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': '2026-07-28',
        'mcp-method': 'tools/call',
        'mcp-name': 'search_catalog',
      },
      payload: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params }),
    });
    expect(response.statusCode, response.body).toBe(403);
    expect(String(response.headers['www-authenticate'])).toMatch(/insufficient_scope.*scope="search"/);
  });
});
