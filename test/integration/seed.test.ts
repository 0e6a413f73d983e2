/**
 * `npm run seed` against a service process: the first run makes the demo shop through the API,
 * the second finds everything in place, changes nothing and says so. Counts are read from the
 * database, so that nothing the second run might add goes unseen.
 */
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { beforeAll, describe, expect, it } from 'vitest';
import { runAdmin, type AdminRun } from '../helpers/admin-cli';
import { TEST_MASTER_KEY } from '../helpers/app';
import { createTestDatabase, sql } from '../helpers/db';
import { callService, startServiceProcess, temporaryDir, type ServiceProcess } from '../helpers/service-process';

let service: ServiceProcess;
let databaseUrl: string;
let dataDir: string;
let origin: string;

beforeAll(async () => {
  databaseUrl = await createTestDatabase();
  dataDir = temporaryDir('commerce-seed-');
  service = await startServiceProcess({ DATABASE_URL: databaseUrl, MASTER_KEY: TEST_MASTER_KEY });
  origin = `http://127.0.0.1:${service.port}`;
});

/** `npm run seed` as a person runs it, finding the service by HOST and PORT as the service listens. */
const seed = (args: string[] = []): Promise<AdminRun> =>
  runAdmin('', args, '', { HOST: '127.0.0.1', PORT: String(service.port), DATA_DIR: dataDir }, 'scripts/seed.ts');

/** Rows of the demo tenant per table: what a second run must leave as it is. */
async function counts() {
  const tables = [
    'tenants',
    'api_keys',
    'businesses',
    'warehouses',
    'sales_channels',
    'products',
    'inventory_items',
    'stock_mutations',
    'search_indexes',
    'search_documents',
    'proxies',
    'oauth_clients',
    'users',
    'prices',
    'tax_zones',
    'shipping_methods',
    'discounts',
  ];
  const result: Record<string, number> = {};
  for (const table of tables) {
    const [row] = await sql<{ n: string }>(databaseUrl, `SELECT count(*) AS n FROM ${table}`);
    result[table] = Number(row!.n);
  }
  const [quantity] = await sql<{ total: string }>(
    databaseUrl,
    'SELECT coalesce(sum(quantity), 0) AS total FROM inventory_items',
  );
  result.quantity = Number(quantity!.total);
  return result;
}

describe('npm run seed', () => {
  it('makes the demo shop through the API once, and a second run changes nothing and says so', async () => {
    const first = await seed();
    expect(first.status, first.stderr + first.stdout).toBe(0);
    expect(first.stdout).toMatch(/^Seeded in [\d.]+ s: /m);
    expect(first.stdout).toContain(`demo page        ${origin}/demo/demo-shop`);
    const key = /^API key +(cpk_\S+) \(created\)$/m.exec(first.stdout)![1]!;
    expect(first.stdout).toMatch(
      new RegExp(`^console +${origin}/console/\\?client_id=\\S+ \\(sign in as the user below\\)`, 'm'),
    );
    const after = await counts();
    expect(after).toMatchObject({
      tenants: 1,
      api_keys: 1,
      businesses: 1,
      warehouses: 3,
      sales_channels: 1,
      products: 1000,
      inventory_items: expect.any(Number),
      search_indexes: 1,
      search_documents: 1000,
      proxies: 1,
      // the demo storefront's client and the console's
      oauth_clients: 2,
      users: 1,
      prices: 1000,
      tax_zones: 1,
      shipping_methods: 2,
      discounts: 1,
    });
    const [sandbox] = await sql<{ on: boolean }>(databaseUrl, 'SELECT sandbox_enabled AS on FROM payment_settings');
    expect(sandbox?.on).toBe(true);
    expect(after.inventory_items).toBeGreaterThan(2000);

    // The public search engine answers without a token: facets, sorts from the settings, typos.
    const settings = await fetch(`${origin}/api/instant/search/demo-shop/settings`).then((r) => r.json());
    expect(settings.data.indexes[0].sort_options.map((o: { label: string }) => o.label)).toContain('Best rated');
    const search = await fetch(`${origin}/api/instant/search/demo-shop`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ data: [{ q: 'headphnes', facets: ['brand', 'category'], limit: 3 }] }),
    }).then((r) => r.json());
    const result = search.data[0].results[0];
    expect(result.count).toBeGreaterThan(0);
    expect(Object.keys(result.facets.category)).toEqual(['Audio']);
    expect(result.hits[0].click_url).toMatch(
      /^http:\/\/127\.0\.0\.1:\d+\/api\/instant\/search\/demo-products\/click\//,
    );
    // The storefront catalog of the proxy key serves the products to agents (UCP), with no token.
    const catalog = await fetch(`${origin}/ucp/demo-shop/catalog/search`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'UCP-Agent': 'profile="https://agent.example/profile.json"' },
      body: JSON.stringify({ query: 'headphones', pagination: { limit: 2 } }),
    }).then((r) => r.json());
    expect(catalog.products).toHaveLength(2);
    expect(catalog.products[0].variants[0].price.currency).toBe('EUR');
    expect(catalog.products[0].variants[0].availability.available).toBe(true);
    // The key it printed works.
    expect((await callService(service, 'GET', '/api/instant/indexes/demo-products', { token: key })).status).toBe(200);
    // It ends with the shell lines the guides go on from: the key and the shop's ids.
    const exports = first.stdout.trimEnd().split('\n').slice(-7);
    expect(
      exports.every((line) => /^export [A-Z_]+=\S+$/.test(line)),
      exports.join('\n'),
    ).toBe(true);
    const exported = Object.fromEntries(
      exports.map((line) => line.slice('export '.length).split('=') as [string, string]),
    );
    expect(Object.keys(exported)).toEqual([
      'BASE',
      'KEY',
      'TENANT_ID',
      'BUSINESS_ID',
      'CHANNEL_ID',
      'WAREHOUSE_ID',
      'PROXY_KEY',
    ]);
    expect(exported).toMatchObject({ BASE: origin, KEY: key, PROXY_KEY: 'demo-shop' });
    const channel = await callService(service, 'POST', '/graphql', {
      token: key,
      body: { query: `{ salesChannel(id: "${exported.CHANNEL_ID}") { warehouses { id business { id } } } }` },
    });
    expect(channel.body.data.salesChannel.warehouses[0], JSON.stringify(channel.body)).toEqual({
      id: exported.WAREHOUSE_ID,
      business: { id: exported.BUSINESS_ID },
    });

    const second = await seed();
    expect(second.status, second.stderr + second.stdout).toBe(0);
    expect(second.stdout).toMatch(/^Nothing changed: the demo shop was already complete/m);
    expect(second.stdout).not.toContain('(created)');
    expect(second.stdout).toContain(`API key          ${key}`);
    expect(second.stdout.trimEnd().split('\n').slice(-7)).toEqual(exports);
    expect(await counts()).toEqual(after);

    // The agents guide's five minutes on the seeded shop: with the official client and the exported
    // key, a search without a profile, then a reservation naming neither business nor channel.
    const client = new Client({ name: 'five-minute-agent', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${exported.BASE}/mcp`), {
        requestInit: { headers: { authorization: `Bearer ${exported.KEY}` } },
      }),
    );
    const call = async (name: string, args: Record<string, unknown>) => {
      const result = await client.callTool({ name, arguments: args });
      expect(result.isError, JSON.stringify(result)).toBeFalsy();
      return result.structuredContent as any;
    };
    const found = await call('search_catalog', { catalog: { query: 'headphones', pagination: { limit: 3 } } });
    const product = found.products.find((p: any) => p.variants[0].availability.available);
    const sku = product.variants[0].id as string;
    expect((await call('check_availability', { skus: [sku] })).items[0].sellable).toBeGreaterThan(2);
    expect((await call('list_locations', {})).defaults).toEqual({
      business_id: exported.BUSINESS_ID,
      channel_id: exported.CHANNEL_ID,
    });
    const { reservation } = await call('reserve_items', {
      items: [{ sku, quantity: 2 }],
      customer: { name: 'Ada Lovelace', email: 'ada@example.com' },
      idempotency_key: `agent-${sku}-1`,
    });
    expect(reservation).toMatchObject({
      status: 'ACTIVE',
      business_id: exported.BUSINESS_ID,
      channel_id: exported.CHANNEL_ID,
      items: [{ sku, quantity: 2 }],
    });
    await client.close();
  });

  it('refuses a command line it cannot use, without a stack trace', async () => {
    const run = await seed(['--products', 'many']);
    expect(run.status).toBe(2);
    expect(run.stderr).toContain('--products must be a whole number from 1 to 1000');
    expect(run.stderr).not.toMatch(/^\s+at /m);
    const help = await seed(['--help']);
    expect(help.status).toBe(0);
    expect(help.stdout).toContain('Usage: npm run seed');
  });
});
