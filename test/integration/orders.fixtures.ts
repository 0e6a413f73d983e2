/**
 * Shared by the order and reservation test files: a tenant with a catalog and a sales channel,
 * stock added through REST, stock levels read through GraphQL, and the invariant checks.
 */
import { expect } from 'vitest';
import { createTenant, type TestApp, type Tenant } from '../helpers/app';
import { sql } from '../helpers/db';
import { createCatalog, expectLedgerExplainsStock, graphqlData, type Catalog } from './stock.fixtures';

export interface StockWorld {
  tenant: Tenant;
  catalog: Catalog;
  channelId: string;
  /** warehouseIds[0] */
  warehouseId: string;
}

export async function createStockWorld(t: TestApp, name: string, products = 4): Promise<StockWorld> {
  const tenant = await createTenant(t.rest, name);
  const catalog = await createCatalog(t, tenant.key, { products });
  const data = await graphqlData(
    t,
    tenant.key,
    `mutation($input: CreateSalesChannelInput!) { createSalesChannel(input: $input) { sales_channel { id } } }`,
    {
      input: { name: 'Web shop' },
    },
  );
  return { tenant, catalog, channelId: data.createSalesChannel.sales_channel.id, warehouseId: catalog.warehouseIds[0] };
}

/** Adds AVAILABLE units through `POST /api/inventory/items`. */
export async function addStock(
  t: TestApp,
  world: StockWorld,
  sku: string,
  quantity: number,
  options: { position?: string; warehouseId?: string; batchNumber?: string } = {},
) {
  const response = await t.rest.post('/api/inventory/items', {
    token: world.tenant.key,
    body: {
      data: [
        {
          sku,
          quantity,
          warehouseId: options.warehouseId ?? world.warehouseId,
          businessId: world.catalog.businessId,
          position: options.position,
          batchNumber: options.batchNumber,
        },
      ],
    },
  });
  expect(response.status, JSON.stringify(response.body)).toBe(201);
}

export interface Levels {
  quantity: number;
  available: number;
  committed: number;
  reserved: number;
  unavailable: number;
  expected: number;
}

/** A SKU's quantities at a warehouse, summed over positions, as the `inventory` query reports them. */
export async function levels(
  t: TestApp,
  world: StockWorld,
  sku: string,
  warehouseId = world.warehouseId,
): Promise<Levels> {
  const data = await graphqlData(
    t,
    world.tenant.key,
    `query($sku: String, $w: ID) { inventory(sku: $sku, warehouse_id: $w, first: 100) { edges { node {
       quantity quantity_available quantity_committed quantity_reserved quantity_unavailable quantity_expected } } } }`,
    { sku, w: warehouseId },
  );
  const sum: Levels = { quantity: 0, available: 0, committed: 0, reserved: 0, unavailable: 0, expected: 0 };
  for (const { node } of data.inventory.edges) {
    sum.quantity += node.quantity;
    sum.available += node.quantity_available;
    sum.committed += node.quantity_committed;
    sum.reserved += node.quantity_reserved;
    sum.unavailable += node.quantity_unavailable;
    sum.expected += node.quantity_expected;
  }
  expect(sum.quantity).toBe(sum.available + sum.committed + sum.reserved + sum.unavailable);
  return sum;
}

/** Every table a stock operation writes, for "a rejected write changed nothing". */
export async function operationsSnapshot(t: TestApp, tenantId: string) {
  const tables = [
    'inventory_items',
    'stock_mutations',
    'idempotency_keys',
    'reservations',
    'reservation_items',
    'stock_allocations',
    'orders',
    'order_items',
  ];
  const result: Record<string, unknown[]> = {};
  for (const table of tables) {
    result[table] = await sql(t.databaseUrl, `SELECT * FROM ${table} WHERE tenant_id = $1 ORDER BY 1, 2`, [tenantId]);
  }
  return result;
}

/**
 * The invariants of every stock state: no line is negative, the units allocations hold are on
 * their lines (COMMITTED, RESERVED and allocated UNAVAILABLE units), and the ledger explains the stock.
 */
export async function expectStockInvariants(t: TestApp, tenantId: string) {
  const negative = await sql(t.databaseUrl, 'SELECT id FROM inventory_items WHERE tenant_id = $1 AND quantity < 0', [
    tenantId,
  ]);
  expect(negative).toEqual([]);
  const uncovered = await sql(
    t.databaseUrl,
    `SELECT a.product_id, a.state, a.held, coalesce(l.on_line, 0) AS on_line FROM
       (SELECT product_id, warehouse_id, position_id, batch_number, serial_number, expires_at, state, sum(quantity) AS held
          FROM stock_allocations WHERE tenant_id = $1 GROUP BY 1, 2, 3, 4, 5, 6, 7) a
       LEFT JOIN (SELECT product_id, warehouse_id, position_id, batch_number, serial_number, expires_at, state, sum(quantity) AS on_line
          FROM inventory_items WHERE tenant_id = $1 GROUP BY 1, 2, 3, 4, 5, 6, 7) l
         ON l.product_id = a.product_id AND l.warehouse_id = a.warehouse_id AND l.position_id IS NOT DISTINCT FROM a.position_id
        AND l.batch_number IS NOT DISTINCT FROM a.batch_number AND l.serial_number IS NOT DISTINCT FROM a.serial_number
        AND l.expires_at IS NOT DISTINCT FROM a.expires_at AND l.state = a.state
      WHERE a.held > coalesce(l.on_line, 0)`,
    [tenantId],
  );
  expect(uncovered).toEqual([]);
  const ledger = await sql(t.databaseUrl, 'SELECT 1 FROM stock_mutations WHERE tenant_id = $1 LIMIT 1', [tenantId]);
  if (ledger.length > 0) await expectLedgerExplainsStock(t, tenantId);
}
