/**
 * Item preferences: create, replace (every field), remove and list; their levels are validated,
 * backorders let orders exceed availability until the preorder deadline, and a SKU restricted to a
 * single position never gets a second one.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { startTestApp } from '../helpers/app';
import { sql } from '../helpers/db';
import {
  addStock,
  createStockWorld,
  expectStockInvariants,
  levels,
  operationsSnapshot,
  type StockWorld,
} from './orders.fixtures';
import { graphqlData, graphqlError, graphqlErrorField } from './stock.fixtures';

const t = await startTestApp();
let world: StockWorld;

const FIELDS = `id sku product { sku } warehouse { id } business { id } minimum_quantity optimal_quantity maximum_quantity reorder_point
  is_backorder_allowed is_restricted_to_single_position preorder_deadline_at created_at updated_at`;
const CREATE = `mutation($input: CreateItemPreferencesInput!) { createItemPreferences(input: $input) { preferences { ${FIELDS} } } }`;
const UPDATE = `mutation($input: UpdateItemPreferencesInput!) { updateItemPreferences(input: $input) { preferences { ${FIELDS} } } }`;
const REMOVE = `mutation($input: RemoveItemPreferencesInput!) { removeItemPreferences(input: $input) { ids } }`;
const CREATE_ORDER = `mutation($input: CreateOrderInput!) { createOrder(input: $input) { order { id items { id state quantity } } } }`;

const levelsOf = { minimum_quantity: 1, optimal_quantity: 5, maximum_quantity: 10, reorder_point: 2 };
const preference = (sku: string, extra: Record<string, unknown> = {}) => ({
  sku,
  warehouse_id: world.warehouseId,
  business_id: world.catalog.businessId,
  ...levelsOf,
  is_backorder_allowed: false,
  is_restricted_to_single_position: false,
  ...extra,
});
const create = async (entries: Record<string, unknown>[]) =>
  (await graphqlData(t, world.tenant.key, CREATE, { input: { preferences: entries } })).createItemPreferences
    .preferences;
const snapshot = async () => ({
  ...(await operationsSnapshot(t, world.tenant.id)),
  preferences: await sql(t.databaseUrl, 'SELECT * FROM item_preferences WHERE tenant_id = $1 ORDER BY id', [
    world.tenant.id,
  ]),
});
const order = (items: { sku: string; quantity: number }[]) => ({
  business_id: world.catalog.businessId,
  warehouse_id: world.warehouseId,
  channel_id: world.channelId,
  items,
});

beforeAll(async () => {
  world = await createStockWorld(t, 'Preferences tenant', 6);
});

describe('createItemPreferences, updateItemPreferences, removeItemPreferences, stockPreferences', () => {
  it('creates, lists, replaces and removes a preference', async () => {
    const created = (await create([preference('SKU-1', { preorder_deadline_at: 1_900_000_000_000 })]))[0]!;
    expect(created).toMatchObject({
      sku: 'SKU-1',
      product: { sku: 'SKU-1' },
      warehouse: { id: world.warehouseId },
      business: { id: world.catalog.businessId },
      ...levelsOf,
      is_backorder_allowed: false,
      is_restricted_to_single_position: false,
      preorder_deadline_at: 1_900_000_000_000,
    });
    const listed = await graphqlData(
      t,
      world.tenant.key,
      `query($sku: String) { stockPreferences(sku: $sku) { edges { node { id } } } }`,
      { sku: 'SKU-1' },
    );
    expect(listed.stockPreferences.edges).toEqual([{ node: { id: created.id } }]);

    const replacement = {
      id: created.id,
      warehouse_id: world.catalog.warehouseIds[1],
      minimum_quantity: 0,
      optimal_quantity: 0,
      maximum_quantity: 0,
      reorder_point: 0,
      is_backorder_allowed: true,
      is_restricted_to_single_position: true,
      preorder_deadline_at: null,
    };
    const [updated] = (await graphqlData(t, world.tenant.key, UPDATE, { input: { preferences: [replacement] } }))
      .updateItemPreferences.preferences;
    const { warehouse_id: _warehouse, ...values } = replacement;
    expect(updated).toMatchObject({ ...values, sku: 'SKU-1', warehouse: { id: world.catalog.warehouseIds[1] } });

    const removed = await graphqlData(t, world.tenant.key, REMOVE, { input: { ids: [created.id] } });
    expect(removed.removeItemPreferences.ids).toEqual([created.id]);
    expect(
      (await graphqlData(t, world.tenant.key, `{ stockPreferences { edges { node { id } } } }`)).stockPreferences.edges,
    ).toEqual([]);
  });

  it.each([
    ['optimal below minimum', { minimum_quantity: 5, optimal_quantity: 4 }, 'input.preferences[0].optimal_quantity'],
    ['maximum below optimal', { maximum_quantity: 4 }, 'input.preferences[0].maximum_quantity'],
    ['a reorder point above maximum', { reorder_point: 11 }, 'input.preferences[0].reorder_point'],
    ['a reorder point below minimum', { reorder_point: 0 }, 'input.preferences[0].reorder_point'],
    ['a negative minimum', { minimum_quantity: -1 }, 'input.preferences[0].minimum_quantity'],
    ['an unknown sku', { sku: 'NOPE' }, 'input.preferences[0].sku'],
    ['a warehouse of another business', { warehouse_id: 'OTHER' }, 'input.preferences[0].warehouse_id'],
    ['a bad id', { id: 'pref' }, 'input.preferences[0].id'],
  ])('rejects %s with VALIDATION_ERROR naming the field and changes nothing', async (_name, override, field) => {
    const entry = preference('SKU-2', override);
    if (entry.warehouse_id === 'OTHER') entry.warehouse_id = world.catalog.otherWarehouseId;
    const before = await snapshot();
    expect(
      await graphqlErrorField(t, world.tenant.key, 'VALIDATION_ERROR', CREATE, {
        input: { preferences: [entry] },
      }),
    ).toBe(field);
    expect(await snapshot()).toEqual(before);
  });

  it('refuses a second preference for the same SKU and warehouse, and an update that leaves a field out', async () => {
    const created = (await create([preference('SKU-2')]))[0]!;
    const before = await snapshot();
    expect(
      await graphqlErrorField(t, world.tenant.key, 'ID_TAKEN', CREATE, {
        input: { preferences: [preference('SKU-2')] },
      }),
    ).toBe('input.preferences[0].sku');
    const full = {
      id: created.id,
      warehouse_id: world.warehouseId,
      ...levelsOf,
      is_backorder_allowed: true,
      is_restricted_to_single_position: false,
      preorder_deadline_at: null,
    };
    const { preorder_deadline_at: _deadline, ...withoutDeadline } = full;
    expect(
      await graphqlErrorField(t, world.tenant.key, 'VALIDATION_ERROR', UPDATE, {
        input: { preferences: [withoutDeadline] },
      }),
    ).toBe('input.preferences[0].preorder_deadline_at');
    const { reorder_point: _reorder, ...withoutReorder } = full;
    await graphqlError(t, world.tenant.key, 'VALIDATION_ERROR', UPDATE, { input: { preferences: [withoutReorder] } });
    await graphqlError(t, world.tenant.key, 'VALIDATION_ERROR', UPDATE, {
      input: { preferences: [{ ...full, optimal_quantity: 100 }] },
    });
    await graphqlError(t, world.tenant.key, 'VALIDATION_ERROR', REMOVE, {
      input: { ids: ['0190f5b4-1c5e-7000-8000-000000000abc'] },
    });
    expect(await snapshot()).toEqual(before);
    await graphqlData(t, world.tenant.key, REMOVE, { input: { ids: [created.id] } });
  });
});

describe('backorders', () => {
  it('lets an order exceed availability only when the preference allows it and the preorder deadline has not passed', async () => {
    await addStock(t, world, 'SKU-3', 2);
    const before = await snapshot();
    await graphqlError(t, world.tenant.key, 'OUT_OF_STOCK', CREATE_ORDER, {
      input: order([{ sku: 'SKU-3', quantity: 5 }]),
    });
    expect(await snapshot()).toEqual(before);

    const allowing = (
      await create([preference('SKU-3', { is_backorder_allowed: true, preorder_deadline_at: Date.now() + 3_600_000 })])
    )[0]!;
    const created = (
      await graphqlData(t, world.tenant.key, CREATE_ORDER, {
        input: order([
          { sku: 'SKU-3', quantity: 2 },
          { sku: 'SKU-3', quantity: 3 },
        ]),
      })
    ).createOrder.order;
    expect(created.items.map((i: { state: string }) => i.state)).toEqual(['ALLOCATED', 'BACKORDERED']);
    // Nothing goes negative: the backordered units are simply not held yet.
    expect(await levels(t, world, 'SKU-3')).toMatchObject({ quantity: 2, available: 0, committed: 2 });
    // The backordered item does not hold back the allocated one: it ships, and the order waits for the rest.
    const shipped = (
      await graphqlData(
        t,
        world.tenant.key,
        `mutation($input: ShipOrderInput!) { shipOrder(input: $input) { order { status items { state } } } }`,
        { input: { id: created.id } },
      )
    ).shipOrder.order;
    expect(shipped).toEqual({ status: 'PARTIALLY_SHIPPED', items: [{ state: 'SHIPPED' }, { state: 'BACKORDERED' }] });
    expect(await levels(t, world, 'SKU-3')).toMatchObject({ quantity: 0, available: 0, committed: 0 });

    const past = {
      id: allowing.id,
      warehouse_id: world.warehouseId,
      ...levelsOf,
      is_backorder_allowed: true,
      is_restricted_to_single_position: false,
      preorder_deadline_at: Date.now() - 1000,
    };
    await graphqlData(t, world.tenant.key, UPDATE, { input: { preferences: [past] } });
    const beforeLate = await snapshot();
    await graphqlError(t, world.tenant.key, 'OUT_OF_STOCK', CREATE_ORDER, {
      input: order([{ sku: 'SKU-3', quantity: 1 }]),
    });
    expect(await snapshot()).toEqual(beforeLate);
    await graphqlData(
      t,
      world.tenant.key,
      `mutation($input: CancelOrderInput!) { cancelOrder(input: $input) { order { id } } }`,
      { input: { id: created.id } },
    );
    await expectStockInvariants(t, world.tenant.id);
  });
});

describe('single position', () => {
  it('refuses every write that would place a restricted SKU at a second position', async () => {
    await create([preference('SKU-4', { is_restricted_to_single_position: true })]);
    await addStock(t, world, 'SKU-4', 3, { position: 'A-01' });
    await addStock(t, world, 'SKU-4', 2, { position: 'A-01', batchNumber: 'B2' });
    const before = await snapshot();
    const post = await t.rest.post('/api/inventory/items', {
      token: world.tenant.key,
      body: {
        data: [
          {
            sku: 'SKU-4',
            quantity: 1,
            warehouseId: world.warehouseId,
            businessId: world.catalog.businessId,
            position: 'A-02',
          },
        ],
      },
    });
    expect(post.status).toBe(409);
    const [line] = await sql<{ id: string }>(
      t.databaseUrl,
      `SELECT id FROM inventory_items WHERE tenant_id = $1 AND product_id = $2 LIMIT 1`,
      [world.tenant.id, world.catalog.productIds.get('SKU-4')],
    );
    const patch = await t.rest.request('PATCH', '/api/inventory/items', {
      token: world.tenant.key,
      body: { data: [{ id: line!.id, position: 'B-01' }] },
    });
    expect(patch.status).toBe(409);
    expect(await snapshot()).toEqual(before);

    // Restocking a returned item elsewhere is refused too; at the SKU's own position it is fine.
    const created = (
      await graphqlData(t, world.tenant.key, CREATE_ORDER, { input: order([{ sku: 'SKU-4', quantity: 1 }]) })
    ).createOrder.order;
    const itemId = created.items[0]!.id;
    await graphqlData(
      t,
      world.tenant.key,
      `mutation($input: ShipOrderInput!) { shipOrder(input: $input) { order { id } } }`,
      { input: { id: created.id } },
    );
    await graphqlData(
      t,
      world.tenant.key,
      `mutation($input: ReturnOrderItemsInput!) { returnOrderItems(input: $input) { order { id } } }`,
      { input: { order_id: created.id, items: [{ item_id: itemId }] } },
    );
    const RESTOCK = `mutation($input: RestockOrderItemsInput!) { restockOrderItems(input: $input) { order { items { state } } } }`;
    const beforeRestock = await snapshot();
    expect(
      await graphqlErrorField(t, world.tenant.key, 'CONFLICT', RESTOCK, {
        input: {
          order_id: created.id,
          items: [{ item_id: itemId, location_id: world.catalog.positionIds.get(`${world.warehouseId}:A-02`) }],
        },
      }),
    ).toBe('input.items[0].location_id');
    expect(await snapshot()).toEqual(beforeRestock);
    const restocked = await graphqlData(t, world.tenant.key, RESTOCK, {
      input: {
        order_id: created.id,
        items: [{ item_id: itemId, location_id: world.catalog.positionIds.get(`${world.warehouseId}:A-01`) }],
      },
    });
    expect(restocked.restockOrderItems.order.items).toEqual([{ state: 'RESTOCKED' }]);
    expect(await levels(t, world, 'SKU-4')).toMatchObject({ quantity: 5, available: 5 });
    await expectStockInvariants(t, world.tenant.id);
  });
});
