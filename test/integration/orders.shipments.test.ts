/**
 * Partial shipments: `createShipment` ships some units of an order, splitting an item shipped in
 * part; the order is PARTIALLY_SHIPPED until nothing is left to ship, and returns and restock work
 * on the shipped units.
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

const ORDER = `id status items { id sku quantity state shipped_at }`;
const CREATE_ORDER = `mutation($input: CreateOrderInput!) { createOrder(input: $input) { order { ${ORDER} } } }`;
const SHIPMENT = `mutation($input: CreateShipmentInput!) { createShipment(input: $input) {
  order { ${ORDER} } shipped_items { id sku quantity state shipped_at } } }`;

interface Item {
  id: string;
  sku: string;
  quantity: number;
  state: string;
  shipped_at: number | null;
}

async function createOrder(items: { sku: string; quantity: number }[]) {
  const data = await graphqlData(t, world.tenant.key, CREATE_ORDER, {
    input: {
      business_id: world.catalog.businessId,
      warehouse_id: world.warehouseId,
      channel_id: world.channelId,
      items,
    },
  });
  return data.createOrder.order as { id: string; status: string; items: Item[] };
}

const ship = async (input: Record<string, unknown>) =>
  (await graphqlData(t, world.tenant.key, SHIPMENT, { input })).createShipment as {
    order: { id: string; status: string; items: Item[] };
    shipped_items: Item[];
  };

beforeAll(async () => {
  world = await createStockWorld(t, 'Shipping tenant', 3);
  await addStock(t, world, 'SKU-1', 50);
  await addStock(t, world, 'SKU-2', 50);
});

describe('createShipment', () => {
  it('ships part of an item by splitting it, then the rest; the order is PARTIALLY_SHIPPED in between', async () => {
    const order = await createOrder([
      { sku: 'SKU-1', quantity: 5 },
      { sku: 'SKU-2', quantity: 2 },
    ]);
    const [first, second] = order.items as [Item, Item];
    const before = await levels(t, world, 'SKU-1');
    const partial = await ship({ order_id: order.id, items: [{ item_id: first.id, quantity: 2 }] });
    expect(partial.order.status).toBe('PARTIALLY_SHIPPED');
    expect(partial.shipped_items).toEqual([
      { id: expect.any(String), sku: 'SKU-1', quantity: 2, state: 'SHIPPED', shipped_at: expect.any(Number) },
    ]);
    const split = partial.shipped_items[0]!;
    expect(split.id).not.toBe(first.id);
    expect(partial.order.items.map((item) => [item.id, item.sku, item.quantity, item.state])).toEqual([
      [first.id, 'SKU-1', 3, 'ALLOCATED'],
      [second.id, 'SKU-2', 2, 'ALLOCATED'],
      [split.id, 'SKU-1', 2, 'SHIPPED'],
    ]);
    expect(await levels(t, world, 'SKU-1')).toEqual({
      ...before,
      quantity: before.quantity - 2,
      committed: before.committed - 2,
    });
    const [allocated] = await sql<{ quantity: string }>(
      t.databaseUrl,
      'SELECT sum(quantity)::text AS quantity FROM stock_allocations WHERE order_item_id = $1',
      [first.id],
    );
    expect(allocated!.quantity).toBe('3');

    const rest = await ship({
      order_id: order.id,
      items: [
        { item_id: first.id, quantity: 3 },
        { item_id: second.id, quantity: 2 },
      ],
    });
    expect(rest.order.status).toBe('SHIPPED');
    expect(rest.shipped_items.map((item) => [item.id, item.quantity])).toEqual([
      [first.id, 3],
      [second.id, 2],
    ]);
    expect(rest.order.items.every((item) => item.state === 'SHIPPED')).toBe(true);
    expect(await levels(t, world, 'SKU-1')).toEqual({
      ...before,
      quantity: before.quantity - 5,
      committed: before.committed - 5,
    });
    await expectStockInvariants(t, world.tenant.id);
  });

  it('returns and restocks the shipped units while the rest of the order waits', async () => {
    const order = await createOrder([{ sku: 'SKU-2', quantity: 4 }]);
    const shipped = (await ship({ order_id: order.id, items: [{ item_id: order.items[0]!.id, quantity: 1 }] }))
      .shipped_items[0]!;
    const before = await levels(t, world, 'SKU-2');
    await graphqlData(
      t,
      world.tenant.key,
      `mutation($input: ReturnOrderItemsInput!) { returnOrderItems(input: $input) { order { id } } }`,
      { input: { order_id: order.id, items: [{ item_id: shipped.id }] } },
    );
    const restocked = await graphqlData(
      t,
      world.tenant.key,
      `mutation($input: RestockOrderItemsInput!) { restockOrderItems(input: $input) { order { status items { id state } } } }`,
      { input: { order_id: order.id, items: [{ item_id: shipped.id, location_id: world.warehouseId }] } },
    );
    expect(restocked.restockOrderItems.order.status).toBe('PARTIALLY_SHIPPED');
    expect(restocked.restockOrderItems.order.items.find((item) => item.id === shipped.id)?.state).toBe('RESTOCKED');
    expect(await levels(t, world, 'SKU-2')).toEqual({
      ...before,
      quantity: before.quantity + 1,
      available: before.available + 1,
    });
    await expectStockInvariants(t, world.tenant.id);
  });

  it('replays a shipment sent again with its idempotency key', async () => {
    const order = await createOrder([{ sku: 'SKU-1', quantity: 3 }]);
    const input = {
      order_id: order.id,
      items: [{ item_id: order.items[0]!.id, quantity: 1 }],
      idempotency_key: 'ship-1',
    };
    const first = await ship(input);
    const snapshot = await operationsSnapshot(t, world.tenant.id);
    expect(await ship(input)).toEqual(first);
    expect(await operationsSnapshot(t, world.tenant.id)).toEqual(snapshot);
  });

  it('refuses bad shipments with the precise code and changes nothing', async () => {
    const order = await createOrder([
      { sku: 'SKU-1', quantity: 2 },
      { sku: 'SKU-2', quantity: 1 },
    ]);
    const [first, second] = order.items as [Item, Item];
    const shippedOrder = await createOrder([{ sku: 'SKU-2', quantity: 1 }]);
    await ship({ order_id: shippedOrder.id, items: [{ item_id: shippedOrder.items[0]!.id, quantity: 1 }] });
    const before = await operationsSnapshot(t, world.tenant.id);
    const field = (code: string, input: Record<string, unknown>) =>
      graphqlErrorField(t, world.tenant.key, code, SHIPMENT, { input });

    expect(await field('VALIDATION_ERROR', { order_id: order.id, items: [{ item_id: first.id, quantity: 3 }] })).toBe(
      'input.items[0].quantity',
    );
    expect(await field('VALIDATION_ERROR', { order_id: order.id, items: [{ item_id: first.id, quantity: 0 }] })).toBe(
      'input.items[0].quantity',
    );
    expect(
      await field('VALIDATION_ERROR', {
        order_id: order.id,
        items: [
          { item_id: second.id, quantity: 1 },
          { item_id: second.id, quantity: 1 },
        ],
      }),
    ).toBe('input.items[1].item_id');
    expect(
      await field('VALIDATION_ERROR', {
        order_id: order.id,
        items: [{ item_id: shippedOrder.items[0]!.id, quantity: 1 }],
      }),
    ).toBe('input.items[0].item_id');
    expect(await field('VALIDATION_ERROR', { order_id: order.id, items: [] })).toBe('input.items');
    expect(
      await field('INVALID_STATE', {
        order_id: shippedOrder.id,
        items: [{ item_id: shippedOrder.items[0]!.id, quantity: 1 }],
      }),
    ).toBe('input.order_id');
    await graphqlError(t, world.tenant.key, 'NOT_FOUND', SHIPMENT, {
      input: { order_id: '0190f5b4-1c5e-7000-8000-0000000000ab', items: [{ item_id: first.id, quantity: 1 }] },
    });
    const other = await createStockWorld(t, 'Other shipper', 1);
    await graphqlError(t, other.tenant.key, 'NOT_FOUND', SHIPMENT, {
      input: { order_id: order.id, items: [{ item_id: first.id, quantity: 1 }] },
    });
    expect(await operationsSnapshot(t, world.tenant.id)).toEqual(before);

    // An item that is not ALLOCATED: deallocated first.
    await graphqlData(
      t,
      world.tenant.key,
      `mutation($input: DeallocateOrderItemsInput!) { deallocateOrderItems(input: $input) { order { id } } }`,
      { input: { order_id: order.id, items: [{ item_id: second.id }] } },
    );
    const deallocated = await operationsSnapshot(t, world.tenant.id);
    expect(
      await field('INVALID_STATE', {
        order_id: order.id,
        items: [
          { item_id: first.id, quantity: 1 },
          { item_id: second.id, quantity: 1 },
        ],
      }),
    ).toBe('input.items[1].item_id');
    expect(await operationsSnapshot(t, world.tenant.id)).toEqual(deallocated);
    await expectStockInvariants(t, world.tenant.id);
  });
});
