/**
 * Orders and reservations through a sales channel without a warehouse: each item's units come from
 * the channel's warehouses by allocation strategy (PRIORITY, MOST_STOCK, SINGLE_WAREHOUSE), split
 * when one warehouse has too few, all items or none, never overselling under concurrency.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { startTestApp } from '../helpers/app';
import {
  addStock,
  createStockWorld,
  expectStockInvariants,
  levels,
  operationsSnapshot,
  type StockWorld,
} from './orders.fixtures';
import { graphql, graphqlData, graphqlError, graphqlErrorField } from './stock.fixtures';

const t = await startTestApp();
let world: StockWorld;
/** Three warehouses of the business, in the channel's priority order. */
let warehouses: [string, string, string];

const CREATE_ORDER = `mutation($input: CreateOrderInput!) { createOrder(input: $input) { order {
  id warehouse { id } items { id sku quantity state allocations { warehouse { id } state quantity } } } } }`;
const RESERVE = `mutation($input: CreateReservationInput!) { createReservation(input: $input) { reservation {
  id status warehouse { id } items { sku quantity } } } }`;
const SET_WAREHOUSES = `mutation($input: SetSalesChannelWarehousesInput!) {
  setSalesChannelWarehouses(input: $input) { sales_channel { allocation_strategy warehouses { id } } } }`;

const channelOrder = (items: { sku: string; quantity: number }[], extra: Record<string, unknown> = {}) => ({
  business_id: world.catalog.businessId,
  channel_id: world.channelId,
  items,
  ...extra,
});

async function order(items: { sku: string; quantity: number }[], extra: Record<string, unknown> = {}) {
  return (await graphqlData(t, world.tenant.key, CREATE_ORDER, { input: channelOrder(items, extra) })).createOrder
    .order;
}

/** 3, 5 and 10 units of the SKU at the three warehouses: each test stocks SKUs of its own. */
async function stockUp(sku: string) {
  for (const [index, quantity] of [3, 5, 10].entries())
    await addStock(t, world, sku, quantity, { warehouseId: warehouses[index] });
}

/** Committed units of the SKU per warehouse, in the order of `warehouses`. */
const committed = async (sku: string) =>
  Promise.all(warehouses.map(async (id) => (await levels(t, world, sku, id)).committed));

beforeAll(async () => {
  world = await createStockWorld(t, 'Multi-warehouse tenant', 8);
  const third = await graphqlData(
    t,
    world.tenant.key,
    `mutation($input: CreateWarehouseInput!) { createWarehouse(input: $input) { warehouse { id } } }`,
    { input: { business_id: world.catalog.businessId, name: 'Warehouse 3' } },
  );
  warehouses = [world.catalog.warehouseIds[0], world.catalog.warehouseIds[1], third.createWarehouse.warehouse.id];
  await graphqlData(t, world.tenant.key, SET_WAREHOUSES, {
    input: { channel_id: world.channelId, warehouse_ids: warehouses },
  });
});

describe('orders through a sales channel', () => {
  it('PRIORITY (the default) splits an item over the warehouses in the channel order', async () => {
    await stockUp('SKU-1');
    const created = await order([{ sku: 'SKU-1', quantity: 6 }]);
    expect(created.warehouse.id).toBe(warehouses[0]);
    expect(created.items[0]!.allocations.map((a) => [a.warehouse.id, a.state, a.quantity]).sort()).toEqual(
      [
        [warehouses[0], 'COMMITTED', 3],
        [warehouses[1], 'COMMITTED', 3],
      ].sort(),
    );
    expect(await committed('SKU-1')).toEqual([3, 3, 0]);
    await expectStockInvariants(t, world.tenant.id);
  });

  it('MOST_STOCK takes from the fullest warehouse first, per request or as the channel default', async () => {
    await stockUp('SKU-2');
    await order([{ sku: 'SKU-2', quantity: 4 }], { allocation_strategy: 'MOST_STOCK' });
    expect(await committed('SKU-2')).toEqual([0, 0, 4]);
    const set = await graphqlData(t, world.tenant.key, SET_WAREHOUSES, {
      input: { channel_id: world.channelId, warehouse_ids: warehouses, allocation_strategy: 'MOST_STOCK' },
    });
    expect(set.setSalesChannelWarehouses.sales_channel.allocation_strategy).toBe('MOST_STOCK');
    await order([{ sku: 'SKU-2', quantity: 3 }]);
    expect(await committed('SKU-2')).toEqual([0, 0, 7]);
    await graphqlData(t, world.tenant.key, SET_WAREHOUSES, {
      input: { channel_id: world.channelId, warehouse_ids: warehouses, allocation_strategy: 'PRIORITY' },
    });
  });

  it('SINGLE_WAREHOUSE takes every item from one warehouse, or refuses', async () => {
    await stockUp('SKU-3');
    await addStock(t, world, 'SKU-4', 4, { warehouseId: warehouses[2] });
    const created = await order(
      [
        { sku: 'SKU-3', quantity: 4 },
        { sku: 'SKU-4', quantity: 2 },
      ],
      { allocation_strategy: 'SINGLE_WAREHOUSE' },
    );
    expect(created.warehouse.id).toBe(warehouses[2]);
    expect(await committed('SKU-3')).toEqual([0, 0, 4]);
    const before = await operationsSnapshot(t, world.tenant.id);
    await graphqlError(t, world.tenant.key, 'OUT_OF_STOCK', CREATE_ORDER, {
      input: channelOrder(
        [
          { sku: 'SKU-3', quantity: 7 },
          { sku: 'SKU-4', quantity: 1 },
        ],
        { allocation_strategy: 'SINGLE_WAREHOUSE' },
      ),
    });
    expect(await operationsSnapshot(t, world.tenant.id)).toEqual(before);
  });

  it('refuses what no strategy can meet, and bad input, changing nothing', async () => {
    await stockUp('SKU-5');
    const before = await operationsSnapshot(t, world.tenant.id);
    expect(
      await graphqlErrorField(t, world.tenant.key, 'OUT_OF_STOCK', CREATE_ORDER, {
        input: channelOrder([{ sku: 'SKU-5', quantity: 19 }]),
      }),
    ).toBe('input.items[0].quantity');
    const field = (input: Record<string, unknown>) =>
      graphqlErrorField(t, world.tenant.key, 'VALIDATION_ERROR', CREATE_ORDER, { input });
    // Refused by the schema while coercing the variables: the message names the field.
    const unknown = await graphqlError(t, world.tenant.key, 'VALIDATION_ERROR', CREATE_ORDER, {
      input: channelOrder([{ sku: 'SKU-5', quantity: 1 }], { allocation_strategy: 'FASTEST' }),
    });
    expect(unknown.message).toContain('allocation_strategy');
    expect(
      await field(
        channelOrder([{ sku: 'SKU-5', quantity: 1 }], { warehouse_id: warehouses[0], allocation_strategy: 'PRIORITY' }),
      ),
    ).toBe('input.allocation_strategy');
    const other = await createStockWorld(t, 'Other channel owner', 1);
    expect(await field(channelOrder([{ sku: 'SKU-5', quantity: 1 }], { channel_id: other.channelId }))).toBe(
      'input.channel_id',
    );
    const bare = await graphqlData(
      t,
      world.tenant.key,
      `mutation($input: CreateSalesChannelInput!) { createSalesChannel(input: $input) { sales_channel { id } } }`,
      { input: { name: 'No warehouses' } },
    );
    const noWarehouses = await graphqlError(t, world.tenant.key, 'VALIDATION_ERROR', CREATE_ORDER, {
      input: channelOrder([{ sku: 'SKU-5', quantity: 1 }], { channel_id: bare.createSalesChannel.sales_channel.id }),
    });
    expect(noWarehouses.message).toContain('sells from no warehouse of the business');
    expect(await operationsSnapshot(t, world.tenant.id)).toEqual(before);
  });

  it('ships, and cancels, an order split over warehouses', async () => {
    await stockUp('SKU-6');
    const shipped = await order([{ sku: 'SKU-6', quantity: 6 }]);
    await graphqlData(t, world.tenant.key, `mutation($id: ID!) { shipOrder(input: {id: $id}) { order { id } } }`, {
      id: shipped.id,
    });
    expect(await Promise.all(warehouses.map(async (id) => (await levels(t, world, 'SKU-6', id)).quantity))).toEqual([
      0, 2, 10,
    ]);
    const cancelled = await order([{ sku: 'SKU-6', quantity: 4 }], { allocation_strategy: 'MOST_STOCK' });
    await graphqlData(t, world.tenant.key, `mutation($id: ID!) { cancelOrder(input: {id: $id}) { order { id } } }`, {
      id: cancelled.id,
    });
    expect(await committed('SKU-6')).toEqual([0, 0, 0]);
    await expectStockInvariants(t, world.tenant.id);
  });
});

describe('reservations through a sales channel', () => {
  it('split over warehouses, become an order whose items keep their warehouses', async () => {
    await addStock(t, world, 'SKU-7', 2, { warehouseId: warehouses[0] });
    await addStock(t, world, 'SKU-7', 2, { warehouseId: warehouses[1] });
    const reservation = (
      await graphqlData(t, world.tenant.key, RESERVE, {
        input: {
          business_id: world.catalog.businessId,
          channel_id: world.channelId,
          customer: { name: 'Ada' },
          items: [{ sku: 'SKU-7', quantity: 3 }],
          expires_at: Date.now() + 3_600_000,
        },
      })
    ).createReservation.reservation;
    expect(reservation).toMatchObject({ status: 'ACTIVE', warehouse: { id: warehouses[0] } });
    expect((await levels(t, world, 'SKU-7', warehouses[0])).reserved).toBe(2);
    expect((await levels(t, world, 'SKU-7', warehouses[1])).reserved).toBe(1);
    const converted = (
      await graphqlData(t, world.tenant.key, CREATE_ORDER, { input: { reservation_id: reservation.id } })
    ).createOrder.order;
    expect(converted.items[0]!.allocations.map((a) => [a.warehouse.id, a.quantity]).sort()).toEqual(
      [
        [warehouses[0], 2],
        [warehouses[1], 1],
      ].sort(),
    );
    expect((await levels(t, world, 'SKU-7', warehouses[1])).committed).toBe(1);
    await expectStockInvariants(t, world.tenant.id);
  });

  it('never oversells under concurrency: 40 clients reserve 1 unit of 30 spread over three warehouses', async () => {
    for (const id of warehouses) await addStock(t, world, 'SKU-8', 10, { warehouseId: id });
    const answers = await Promise.all(
      Array.from({ length: 40 }, () =>
        graphql(t, world.tenant.key, RESERVE, {
          input: {
            business_id: world.catalog.businessId,
            channel_id: world.channelId,
            customer: { name: 'Rush' },
            items: [{ sku: 'SKU-8', quantity: 1 }],
            expires_at: Date.now() + 3_600_000,
          },
        }),
      ),
    );
    const reserved = answers.filter((answer) => !answer.body.errors);
    expect(reserved).toHaveLength(30);
    for (const answer of answers.filter((candidate) => candidate.body.errors))
      expect(answer.body.errors![0]!.extensions?.code, answer.rawBody).toBe('OUT_OF_STOCK');
    for (const id of warehouses)
      expect(await levels(t, world, 'SKU-8', id)).toMatchObject({ available: 0, reserved: 10 });
    await expectStockInvariants(t, world.tenant.id);
  });
});
