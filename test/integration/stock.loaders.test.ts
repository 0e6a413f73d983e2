/**
 * A page of inventory nodes costs a bounded number of database queries, whatever its size: the
 * warehouse, position, business and product of every node are loaded in one batch per kind.
 * Queries are counted with Prisma's query events on the app's own client.
 */
import { PrismaPg } from '@prisma/adapter-pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PrismaClient } from '../../src/__generated__/prisma/client';
import { buildApp } from '../../src/app';
import { loadConfig } from '../../src/kernel/config';
import { uuidv7 } from '../../src/kernel/ids';
import type { TestApp } from '../helpers/app';
import { createTenant, TEST_MASTER_KEY, type Tenant } from '../helpers/app';
import { createTestDatabase, sql } from '../helpers/db';
import { createRestClient } from '../helpers/rest';
import { createCatalog, graphql } from './stock.fixtures';

const databaseUrl = await createTestDatabase();
const db = new PrismaClient({
  adapter: new PrismaPg({ connectionString: databaseUrl, max: 5 }),
  log: [{ emit: 'event', level: 'query' }],
});
let queries: string[] = [];
db.$on('query', (event) => queries.push(event.query));
const config = loadConfig({ DATABASE_URL: databaseUrl, MASTER_KEY: TEST_MASTER_KEY, LOG_LEVEL: 'silent' });
// No background workers (their periodic queries would be counted), and the key stays cached
// however slow the machine is.
const { app, services } = await buildApp({
  config,
  db,
  masterKey: TEST_MASTER_KEY,
  backgroundWorkers: false,
  authCacheTtlMs: 10 * 60_000,
});
await app.ready();
const t = { app, services, db, databaseUrl, config, rest: createRestClient(app) } as TestApp;
afterAll(async () => {
  await app.close();
  await db.$disconnect();
});

let tenant: Tenant;
let otherKey: string;

beforeAll(async () => {
  tenant = await createTenant(t.rest, 'Loader tenant');
  otherKey = (await createTenant(t.rest, 'Other loader tenant')).key;
  const catalog = await createCatalog(t, tenant.key, { products: 1 });
  // 120 products, each with stock at up to 4 places: 2 warehouses x (no position, A-01).
  const products = Array.from({ length: 120 }, (_, index) => ({
    id: uuidv7(),
    sku: `BULK-${String(index).padStart(3, '0')}`,
  }));
  await sql(
    databaseUrl,
    `INSERT INTO products (id, tenant_id, sku, name) SELECT unnest($1::uuid[]), $2, unnest($3::text[]), 'Bulk'`,
    [products.map((p) => p.id), tenant.id, products.map((p) => p.sku)],
  );
  const data = products.flatMap((product, index) =>
    catalog.warehouseIds.flatMap((warehouseId) =>
      [undefined, 'A-01'].map((position) => ({
        sku: product.sku,
        warehouseId,
        businessId: catalog.businessId,
        quantity: index + 1,
        position,
      })),
    ),
  );
  const response = await t.rest.post('/api/inventory/items', { token: tenant.key, body: { data } });
  expect(response.status, response.rawBody).toBe(201);
});

const PAGE = `query($first: Int) { inventory(first: $first) { edges { node {
  sku quantity product { id sku name } warehouse { id name business { id name } } position { id code warehouse { id name } }
} } } }`;

async function countQueries(first: number, token = tenant.key) {
  queries = [];
  const response = await graphql(t, token, PAGE, { first });
  expect(response.body.errors, response.rawBody).toBeUndefined();
  expect(response.body.data!.inventory.edges).toHaveLength(first);
  return queries.length;
}

describe('inventory with nested warehouse, position, business and product', () => {
  it('costs the same handful of queries for 10 nodes and for 100', async () => {
    await countQueries(5); // the key is verified and cached on the first request
    const ten = await countQueries(10);
    const hundred = await countQueries(100);
    expect(hundred).toBe(ten);
    // The page (one row more tells whether another follows), then one batch each of products,
    // warehouses, positions and businesses.
    expect(hundred).toBe(5);
  });

  it('loads nothing of another tenant through the loaders', async () => {
    const response = await graphql(t, otherKey, PAGE, { first: 10 });
    expect(response.body.data!.inventory.edges).toEqual([]);
  });
});
