/**
 * `npm run seed` against a service process: the first run makes the demo shop through the API,
 * the second finds everything in place, changes nothing and says so. Counts are read from the
 * database, so that nothing the second run might add goes unseen.
 */
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
      oauth_clients: 1,
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

    const second = await seed();
    expect(second.status, second.stderr + second.stdout).toBe(0);
    expect(second.stdout).toMatch(/^Nothing changed: the demo shop was already complete/m);
    expect(second.stdout).not.toContain('(created)');
    expect(second.stdout).toContain(`API key          ${key}`);
    expect(await counts()).toEqual(after);
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
