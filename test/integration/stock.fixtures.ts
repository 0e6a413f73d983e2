/**
 * Shared by the stock and catalog test files: GraphQL calls, a catalog to hang stock on, and
 * snapshots of the stock tables for "nothing changed" checks and the ledger invariant.
 */
import { expect } from 'vitest';
import type { Mutation, Query } from '../../src/__generated__/graphql';
import type { TestApp } from '../helpers/app';
import { sql } from '../helpers/db';

/**
 * What `data` of an operation holds, typed from the SDL through codegen: the root fields a test
 * selects are there with their schema types (a test that uses an alias names its own type).
 */
export type OperationData = Query & Mutation;

export interface GraphQLResult<TData = OperationData> {
  status: number;
  body: {
    data?: TData;
    errors?: { message: string; path?: (string | number)[]; extensions?: { code?: string; field?: string } }[];
  };
  rawBody: string;
}

/** POST /graphql (not part of openapi.yaml, so not through the REST contract client). */
export async function graphql<TData = OperationData>(
  t: Pick<TestApp, 'app'>,
  token: string,
  query: string,
  variables?: Record<string, unknown>,
): Promise<GraphQLResult<TData>> {
  const response = await t.app.inject({
    method: 'POST',
    url: '/graphql',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
    payload: JSON.stringify({ query, variables }),
  });
  return { status: response.statusCode, body: JSON.parse(response.body), rawBody: response.body };
}

/** The data of a GraphQL response that must have no errors. */
export async function graphqlData<TData = OperationData>(
  t: Pick<TestApp, 'app'>,
  token: string,
  query: string,
  variables?: Record<string, unknown>,
): Promise<TData> {
  const response = await graphql<TData>(t, token, query, variables);
  expect(response.status, response.rawBody).toBe(200);
  expect(response.body.errors, response.rawBody).toBeUndefined();
  return response.body.data!;
}

/** The first error of a GraphQL response (HTTP 200), which must carry `code`. */
export async function graphqlError(
  t: Pick<TestApp, 'app'>,
  token: string,
  code: string,
  query: string,
  variables?: Record<string, unknown>,
) {
  const response = await graphql(t, token, query, variables);
  expect(response.status, response.rawBody).toBe(200);
  expect(response.body.errors?.[0]?.extensions?.code, response.rawBody).toBe(code);
  return response.body.errors![0]!;
}

/** The input field named by the first error of a GraphQL response, which must fail with `code`. */
export async function graphqlErrorField(
  t: Pick<TestApp, 'app'>,
  token: string,
  code: string,
  query: string,
  variables?: Record<string, unknown>,
) {
  return (await graphqlError(t, token, code, query, variables)).extensions?.field;
}

export interface Catalog {
  businessId: string;
  otherBusinessId: string;
  /** Two warehouses of `businessId`. */
  warehouseIds: [string, string];
  /** A warehouse of `otherBusinessId`. */
  otherWarehouseId: string;
  /** Position codes, B-01 in warehouseIds[0] and A-01 in warehouseIds[1], by `${warehouse}:${code}`. */
  positionIds: Map<string, string>;
  /** sku → product id */
  productIds: Map<string, string>;
}

/** Creates a catalog through the GraphQL mutations: businesses, warehouses, positions and products `SKU-1..n`. */
export async function createCatalog(
  t: TestApp,
  token: string,
  options: { products?: number; prefix?: string } = {},
): Promise<Catalog> {
  const prefix = options.prefix ?? 'SKU';
  const create = async (mutation: string, input: Record<string, unknown>, field: string) => {
    const data = await graphqlData<Record<string, Record<string, { id: string }>>>(
      t,
      token,
      `mutation($input: ${mutation[0]!.toUpperCase()}${mutation.slice(1)}Input!) { ${mutation}(input: $input) { ${field} { id } } }`,
      { input },
    );
    return data[mutation]![field]!.id;
  };
  const businessId = await create('createBusiness', { name: 'Main business' }, 'business');
  const otherBusinessId = await create('createBusiness', { name: 'Other business' }, 'business');
  const warehouseIds: [string, string] = [
    await create('createWarehouse', { business_id: businessId, name: 'Warehouse 1' }, 'warehouse'),
    await create('createWarehouse', { business_id: businessId, name: 'Warehouse 2' }, 'warehouse'),
  ];
  const otherWarehouseId = await create(
    'createWarehouse',
    { business_id: otherBusinessId, name: 'Other warehouse' },
    'warehouse',
  );
  const positionIds = new Map<string, string>();
  for (const [warehouseId, code] of [
    [warehouseIds[0], 'A-01'],
    [warehouseIds[0], 'A-02'],
    [warehouseIds[0], 'B-01'],
    [warehouseIds[1], 'A-01'],
  ] as const) {
    positionIds.set(
      `${warehouseId}:${code}`,
      await create('createPosition', { warehouse_id: warehouseId, code }, 'position'),
    );
  }
  const productIds = new Map<string, string>();
  for (let index = 1; index <= (options.products ?? 3); index += 1) {
    const sku = `${prefix}-${index}`;
    productIds.set(
      sku,
      await create('createProduct', { sku, name: `Product ${index}`, gtin: [`87000000000${index}`] }, 'product'),
    );
  }
  return { businessId, otherBusinessId, warehouseIds, otherWarehouseId, positionIds, productIds };
}

/** Everything stock-related a tenant has in the database, for "a rejected write changed nothing". */
export async function stockSnapshot(t: TestApp, tenantId: string) {
  const [lines, mutations, keys] = await Promise.all([
    sql(t.databaseUrl, `SELECT * FROM inventory_items WHERE tenant_id = $1 ORDER BY id`, [tenantId]),
    sql(t.databaseUrl, `SELECT * FROM stock_mutations WHERE tenant_id = $1 ORDER BY sequence`, [tenantId]),
    sql(t.databaseUrl, `SELECT key, request_hash, response FROM idempotency_keys WHERE tenant_id = $1 ORDER BY key`, [
      tenantId,
    ]),
  ]);
  return { lines, mutations, keys };
}

/**
 * The ledger explains the stock: for every product and warehouse the deltas sum to the current
 * on-hand quantity, and in write order each `new_quantity` is the previous one plus the delta.
 */
export async function expectLedgerExplainsStock(t: TestApp, tenantId: string) {
  const rows = await sql<{ product_id: string; warehouse_id: string; on_hand: string; ledger: string }>(
    t.databaseUrl,
    `SELECT coalesce(s.product_id, l.product_id) AS product_id, coalesce(s.warehouse_id, l.warehouse_id) AS warehouse_id,
            coalesce(s.on_hand, 0)::text AS on_hand, coalesce(l.total, 0)::text AS ledger
       FROM (SELECT product_id, warehouse_id, sum(quantity) AS on_hand FROM inventory_items WHERE tenant_id = $1 GROUP BY 1, 2) s
       FULL JOIN (SELECT product_id, warehouse_id, sum(delta) AS total FROM stock_mutations WHERE tenant_id = $1 GROUP BY 1, 2) l
         ON l.product_id = s.product_id AND l.warehouse_id = s.warehouse_id`,
    [tenantId],
  );
  expect(rows.length).toBeGreaterThan(0);
  for (const row of rows) expect(row.ledger, `${row.product_id} at ${row.warehouse_id}`).toBe(row.on_hand);
  const chain = await sql<{ product_id: string; delta: string; new_quantity: string; previous: string | null }>(
    t.databaseUrl,
    `SELECT product_id, delta::text, new_quantity::text,
            (lag(new_quantity) OVER (PARTITION BY product_id, warehouse_id ORDER BY sequence))::text AS previous
       FROM stock_mutations WHERE tenant_id = $1`,
    [tenantId],
  );
  for (const row of chain) expect(Number(row.previous ?? 0) + Number(row.delta)).toBe(Number(row.new_quantity));
  return rows;
}
