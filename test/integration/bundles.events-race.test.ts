/**
 * A bundle's low-stock event when two transactions write two different components of it at once:
 * each holds only its own component's stock lock, so the bundle's level is checked when each
 * commits, one after the other, and the fall raises exactly one event whichever commits first.
 * Two connections on the real database write the components' lines and ledger rows as a stock
 * write does.
 */
import pg from 'pg';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { sql } from '../helpers/db';
import { startBroadcastApp } from './broadcasts.fixtures';
import { addStock, createStockWorld, type StockWorld } from './orders.fixtures';
import { graphqlData } from './stock.fixtures';

const t = await startBroadcastApp();
let world: StockWorld;
const open: pg.Client[] = [];

afterEach(async () => {
  await Promise.all(open.splice(0).map((client) => client.end()));
});

async function defineKit(sku: string, components: string[], reorderPoint: number) {
  const token = world.tenant.key;
  await graphqlData(
    t,
    token,
    `mutation($input: CreateProductInput!) { createProduct(input: $input) { product { id } } }`,
    {
      input: { sku, name: sku },
    },
  );
  await graphqlData(
    t,
    token,
    `mutation($input: SetBundleComponentsInput!) { setBundleComponents(input: $input) { product { id } } }`,
    { input: { sku, components: components.map((component) => ({ sku: component, quantity: 1 })) } },
  );
  await graphqlData(
    t,
    token,
    `mutation($i: CreateItemPreferencesInput!) { createItemPreferences(input: $i) { preferences { id } } }`,
    {
      i: {
        preferences: [
          {
            sku,
            warehouse_id: world.warehouseId,
            business_id: world.catalog.businessId,
            minimum_quantity: 0,
            optimal_quantity: reorderPoint,
            maximum_quantity: 1000,
            reorder_point: reorderPoint,
            is_backorder_allowed: false,
            is_restricted_to_single_position: false,
          },
        ],
      },
    },
  );
}

/** A transaction on a connection of its own that takes one unit of `sku` and writes its ledger row, left open. */
async function takeOne(sku: string) {
  const client = new pg.Client({ connectionString: t.databaseUrl });
  await client.connect();
  open.push(client);
  const productId = world.catalog.productIds.get(sku)!;
  await client.query('BEGIN');
  const [line] = (
    await client.query<{ quantity: string }>(
      `UPDATE inventory_items SET quantity = quantity - 1
        WHERE tenant_id = $1 AND product_id = $2 AND warehouse_id = $3 AND state = 'AVAILABLE'
        RETURNING quantity`,
      [world.tenant.id, productId, world.warehouseId],
    )
  ).rows;
  await client.query(
    `INSERT INTO stock_mutations (id, tenant_id, source, delta, new_quantity, product_id, warehouse_id, actor_type, actor_id)
     VALUES (gen_random_uuid(), $1, 'CORRECTION', -1, $2, $3, $4, 'test', 'race')`,
    [world.tenant.id, line!.quantity, productId, world.warehouseId],
  );
  return client;
}

const kitEvents = async (sku: string) =>
  sql<{ type: string; available: string }>(
    t.databaseUrl,
    `SELECT e.type::text AS type, e.available::text AS available FROM stock_events e
       JOIN products p ON p.id = e.product_id WHERE p.sku = $1 ORDER BY e.id`,
    [sku],
  );
const pendingChecks = async () =>
  Number((await sql<{ n: string }>(t.databaseUrl, 'SELECT count(*) AS n FROM stock_alert_bundle_checks'))[0]!.n);

beforeAll(async () => {
  world = await createStockWorld(t, 'Bundle race tenant', 4);
  for (const sku of ['SKU-1', 'SKU-2', 'SKU-3', 'SKU-4']) await addStock(t, world, sku, 5);
  // 5 of each kit, with a reorder point of 4: one unit less of either component makes it low.
  await defineKit('KIT-A', ['SKU-1', 'SKU-2'], 4);
  await defineKit('KIT-B', ['SKU-3', 'SKU-4'], 4);
});

describe('two writes of two components of one bundle at once', () => {
  it.each([
    ['the first', 'KIT-A', 'SKU-1', 'SKU-2', [0, 1]],
    ['the second', 'KIT-B', 'SKU-3', 'SKU-4', [1, 0]],
  ] as const)(
    'raise one low-stock event of the bundle when %s to write commits first',
    async (_first, kit, one, other, order) => {
      expect(await kitEvents(kit)).toEqual([]);
      const writers = [await takeOne(one), await takeOne(other)];
      // Both wrote; neither has committed: the bundle is checked at commit.
      expect(await kitEvents(kit)).toEqual([]);
      await writers[order[0]]!.query('COMMIT');
      expect(await kitEvents(kit)).toEqual([{ type: 'STOCK_LOW', available: '4' }]);
      await writers[order[1]]!.query('COMMIT');
      // The second saw the first's level stored: its own write leaves the kit at 4, still low.
      expect(await kitEvents(kit)).toEqual([{ type: 'STOCK_LOW', available: '4' }]);
      expect(await pendingChecks()).toBe(0);
    },
  );

  it('leave no check behind when one rolls back, and the other raises the event alone', async () => {
    const stays = await takeOne('SKU-1'); // KIT-A: 3 once committed (SKU-1: 3, SKU-2: 4)
    const undone = await takeOne('SKU-2');
    await undone.query('ROLLBACK');
    expect(await pendingChecks()).toBe(0);
    await stays.query('COMMIT');
    expect(await kitEvents('KIT-A')).toEqual([{ type: 'STOCK_LOW', available: '4' }]);
    expect(await pendingChecks()).toBe(0);
  });
});
