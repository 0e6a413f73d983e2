/**
 * Orders: allocation on creation (COMMITTED, all or none), shipping, cancelling, returns and
 * restock, and the picking corrections (missing, unavailable, available again).
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { createKey, startTestApp } from '../helpers/app';
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
import type { Order } from '../../src/__generated__/graphql';

const t = await startTestApp();
let world: StockWorld;

const ORDER_FIELDS = `id status business { id } warehouse { id } channel { id } created_at updated_at items { id sku quantity state shipped_at product { sku } }`;
const CREATE = `mutation($input: CreateOrderInput!) { createOrder(input: $input) { order { ${ORDER_FIELDS} } } }`;
const mutation = (name: string, input: string) =>
  `mutation($input: ${input}!) { ${name}(input: $input) { order { ${ORDER_FIELDS} } } }`;
const SHIP = mutation('shipOrder', 'ShipOrderInput');
const CANCEL = mutation('cancelOrder', 'CancelOrderInput');
const RETURN = mutation('returnOrderItems', 'ReturnOrderItemsInput');
const DEALLOCATE = mutation('deallocateOrderItems', 'DeallocateOrderItemsInput');
const RESTOCK = mutation('restockOrderItems', 'RestockOrderItemsInput');
const MISSING = mutation('markItemsAsMissing', 'MarkItemsAsMissingInput');
const UNAVAILABLE = mutation('markItemsAsUnavailable', 'MarkItemsAsUnavailableInput');
const AVAILABLE = mutation('markItemsAsAvailable', 'MarkItemsAvailableInput');

const orderInput = (items: { sku: string; quantity: number }[], extra: Record<string, unknown> = {}) => ({
  business_id: world.catalog.businessId,
  warehouse_id: world.warehouseId,
  channel_id: world.channelId,
  items,
  ...extra,
});

const run = async (query: string, input: Record<string, unknown>, name: string) =>
  (await graphqlData<Record<string, { order: Order }>>(t, world.tenant.key, query, { input }))[name]!.order;
const createOrder = (items: { sku: string; quantity: number }[], extra: Record<string, unknown> = {}) =>
  run(CREATE, orderInput(items, extra), 'createOrder');
const position = (code: string) => world.catalog.positionIds.get(`${world.warehouseId}:${code}`)!;

async function ledger(source: string) {
  const data = await graphqlData(
    t,
    world.tenant.key,
    `query($q: QueryFilter) { stockMutations(query: $q, first: 30) { edges { node {
    source delta new_quantity product { sku } location { id } order { id } references { __typename ... on Order { id status } } } } } }`,
    { q: `source=${source}` },
  );
  return data.stockMutations.edges.map((e) => e.node);
}

beforeAll(async () => {
  world = await createStockWorld(t, 'Orders tenant', 6);
  await addStock(t, world, 'SKU-1', 10);
  await addStock(t, world, 'SKU-2', 4, { position: 'A-01' });
  await addStock(t, world, 'SKU-2', 4, { position: 'A-02' });
  await addStock(t, world, 'SKU-3', 5);
  await addStock(t, world, 'SKU-4', 5);
  await addStock(t, world, 'SKU-5', 5);
});

describe('an order from allocation to shipment', () => {
  it('commits the units on creation, ships them, then takes a return back onto a chosen position', async () => {
    const order = await createOrder([
      { sku: 'SKU-1', quantity: 3 },
      { sku: 'SKU-2', quantity: 6 },
    ]);
    expect(order).toMatchObject({
      status: 'OPEN',
      business: { id: world.catalog.businessId },
      warehouse: { id: world.warehouseId },
      channel: { id: world.channelId },
      items: [
        { sku: 'SKU-1', quantity: 3, state: 'ALLOCATED', shipped_at: null, product: { sku: 'SKU-1' } },
        { sku: 'SKU-2', quantity: 6, state: 'ALLOCATED', shipped_at: null, product: { sku: 'SKU-2' } },
      ],
    });
    expect(await levels(t, world, 'SKU-1')).toMatchObject({ quantity: 10, available: 7, committed: 3 });
    // SKU-2 spans two positions: 4 from one and 2 from the other.
    expect(await levels(t, world, 'SKU-2')).toMatchObject({ quantity: 8, available: 2, committed: 6 });
    const allocations = await ledger('ALLOCATION');
    expect(allocations).toHaveLength(3);
    for (const entry of allocations)
      expect(entry).toMatchObject({
        delta: 0,
        order: { id: order.id },
        references: [{ __typename: 'Order', id: order.id, status: 'OPEN' }],
      });

    const shipped = await run(SHIP, { id: order.id }, 'shipOrder');
    expect(shipped.status).toBe('SHIPPED');
    for (const item of shipped.items) expect(item).toMatchObject({ state: 'SHIPPED', shipped_at: expect.any(Number) });
    expect(await levels(t, world, 'SKU-1')).toMatchObject({ quantity: 7, available: 7, committed: 0 });
    expect(await levels(t, world, 'SKU-2')).toMatchObject({ quantity: 2, available: 2, committed: 0 });
    expect(
      (await ledger('ALLOCATION'))
        .filter((e: { delta: number }) => e.delta < 0)
        .map((e: { delta: number }) => e.delta)
        .sort((a: number, b: number) => a - b),
    ).toEqual([-4, -3, -2]);

    const before = await operationsSnapshot(t, world.tenant.id);
    await graphqlError(t, world.tenant.key, 'INVALID_STATE', SHIP, { input: { id: order.id } });
    // Not returned yet: nothing to restock.
    expect(
      await graphqlErrorField(t, world.tenant.key, 'INVALID_STATE', RESTOCK, {
        input: { order_id: order.id, items: [{ item_id: order.items[0]!.id, location_id: world.warehouseId }] },
      }),
    ).toBe('input.items[0].item_id');
    expect(await operationsSnapshot(t, world.tenant.id)).toEqual(before);

    const returned = await run(
      RETURN,
      { order_id: order.id, items: [{ item_id: order.items[1]!.id }] },
      'returnOrderItems',
    );
    expect(returned.items.map((i: { state: string }) => i.state)).toEqual(['SHIPPED', 'RETURNED']);
    const restocked = await run(
      RESTOCK,
      { order_id: order.id, items: [{ item_id: order.items[1]!.id, location_id: position('B-01') }] },
      'restockOrderItems',
    );
    expect(restocked.items[1]!.state).toBe('RESTOCKED');
    expect(await levels(t, world, 'SKU-2')).toMatchObject({ quantity: 8, available: 8 });
    const [restock] = await ledger('RESTOCK');
    expect(restock).toMatchObject({
      delta: 6,
      new_quantity: 8,
      product: { sku: 'SKU-2' },
      location: { id: position('B-01') },
      references: [{ id: order.id }],
    });
    await graphqlError(t, world.tenant.key, 'INVALID_STATE', RESTOCK, {
      input: { order_id: order.id, items: [{ item_id: order.items[1]!.id, location_id: world.warehouseId }] },
    });
    await expectStockInvariants(t, world.tenant.id);
  });

  it('refuses the whole order with OUT_OF_STOCK naming the item when one SKU is short, and changes nothing', async () => {
    const before = await operationsSnapshot(t, world.tenant.id);
    const error = await graphqlError(t, world.tenant.key, 'OUT_OF_STOCK', CREATE, {
      input: orderInput([
        { sku: 'SKU-3', quantity: 1 },
        { sku: 'SKU-3', quantity: 2 },
        { sku: 'SKU-4', quantity: 6 },
      ]),
    });
    expect(error.message).toContain('out of stock');
    expect(error.extensions?.field).toBe('input.items[2].quantity');
    await graphqlError(t, world.tenant.key, 'OUT_OF_STOCK', CREATE, {
      input: orderInput([
        { sku: 'SKU-3', quantity: 3 },
        { sku: 'SKU-3', quantity: 3 },
      ]),
    });
    expect(await operationsSnapshot(t, world.tenant.id)).toEqual(before);
  });

  it.each([
    ['a bad warehouse id', { warehouse_id: 'x' }, 'input.warehouse_id'],
    ['an unknown channel', { channel_id: '0190f5b4-1c5e-7000-8000-00000000beef' }, 'input.channel_id'],
    ['an unknown sku', { items: [{ sku: 'NOPE', quantity: 1 }] }, 'input.items[0].sku'],
    ['a zero quantity', { items: [{ sku: 'SKU-3', quantity: 0 }] }, 'input.items[0].quantity'],
    ['no items', { items: [] }, 'input.items'],
    ['a bad id', { id: 'order-1' }, 'input.id'],
  ])('rejects %s with VALIDATION_ERROR naming the field and changes nothing', async (_name, override, field) => {
    const before = await operationsSnapshot(t, world.tenant.id);
    expect(
      await graphqlErrorField(t, world.tenant.key, 'VALIDATION_ERROR', CREATE, {
        input: orderInput([{ sku: 'SKU-3', quantity: 1 }], override),
      }),
    ).toBe(field);
    expect(await operationsSnapshot(t, world.tenant.id)).toEqual(before);
  });

  it('needs scope orders:write to write and orders:read to read', async () => {
    const inventoryOnly = await createKey(t.rest, world.tenant.id, ['inventory:read', 'inventory:write']);
    const before = await operationsSnapshot(t, world.tenant.id);
    await graphqlError(t, inventoryOnly, 'FORBIDDEN', CREATE, { input: orderInput([{ sku: 'SKU-3', quantity: 1 }]) });
    await graphqlError(t, inventoryOnly, 'FORBIDDEN', `{ orders { edges { node { id } } } }`);
    expect(await operationsSnapshot(t, world.tenant.id)).toEqual(before);
  });

  it('replays a repeated idempotency_key without committing twice', async () => {
    const input = orderInput([{ sku: 'SKU-5', quantity: 2 }], { idempotency_key: 'order-once' });
    const first = await run(CREATE, input, 'createOrder');
    const again = await run(CREATE, input, 'createOrder');
    expect(again.id).toBe(first.id);
    expect(await levels(t, world, 'SKU-5')).toMatchObject({ available: 3, committed: 2 });
    await run(CANCEL, { id: first.id }, 'cancelOrder');
    expect(await levels(t, world, 'SKU-5')).toMatchObject({ available: 5, committed: 0 });
  });
});

describe('cancelling and deallocating', () => {
  it('cancels an open order: commitments are released, and its never-shipped items cannot be restocked', async () => {
    const order = await createOrder([{ sku: 'SKU-3', quantity: 2 }]);
    expect(await levels(t, world, 'SKU-3')).toMatchObject({ available: 3, committed: 2 });
    const cancelled = await run(CANCEL, { id: order.id }, 'cancelOrder');
    expect(cancelled).toMatchObject({ status: 'CANCELLED', items: [{ state: 'CANCELLED', shipped_at: null }] });
    expect(await levels(t, world, 'SKU-3')).toMatchObject({ quantity: 5, available: 5, committed: 0 });
    const before = await operationsSnapshot(t, world.tenant.id);
    await graphqlError(t, world.tenant.key, 'INVALID_STATE', CANCEL, { input: { id: order.id } });
    const error = await graphqlError(t, world.tenant.key, 'INVALID_STATE', RESTOCK, {
      input: { order_id: order.id, items: [{ item_id: order.items[0]!.id, location_id: world.warehouseId }] },
    });
    expect(error.message).toContain('never left stock');
    expect(await operationsSnapshot(t, world.tenant.id)).toEqual(before);
  });

  it('cancels a shipped order: its items become restockable', async () => {
    const order = await createOrder([{ sku: 'SKU-3', quantity: 1 }]);
    await run(SHIP, { id: order.id }, 'shipOrder');
    const cancelled = await run(CANCEL, { id: order.id }, 'cancelOrder');
    expect(cancelled.items[0]).toMatchObject({ state: 'CANCELLED', shipped_at: expect.any(Number) });
    await run(
      RESTOCK,
      { order_id: order.id, items: [{ item_id: order.items[0]!.id, location_id: world.warehouseId }] },
      'restockOrderItems',
    );
    expect(await levels(t, world, 'SKU-3')).toMatchObject({ quantity: 5, available: 5 });
  });

  it('deallocates items of an open order without moving stock, and rejects restocking items of an open unshipped order', async () => {
    const order = await createOrder([
      { sku: 'SKU-4', quantity: 2 },
      { sku: 'SKU-4', quantity: 1 },
    ]);
    const before = await operationsSnapshot(t, world.tenant.id);
    const error = await graphqlError(t, world.tenant.key, 'INVALID_STATE', RESTOCK, {
      input: { order_id: order.id, items: [{ item_id: order.items[0]!.id, location_id: world.warehouseId }] },
    });
    expect(error.message).toContain('open, unshipped order');
    expect(await operationsSnapshot(t, world.tenant.id)).toEqual(before);

    const after = await run(
      DEALLOCATE,
      { order_id: order.id, items: [{ item_id: order.items[0]!.id }] },
      'deallocateOrderItems',
    );
    expect(after.items.map((i: { state: string }) => i.state)).toEqual(['DEALLOCATED', 'ALLOCATED']);
    expect(await levels(t, world, 'SKU-4')).toMatchObject({ quantity: 5, available: 4, committed: 1 });
    const shipped = await run(SHIP, { id: order.id }, 'shipOrder');
    expect(shipped.items.map((i: { state: string }) => i.state)).toEqual(['DEALLOCATED', 'SHIPPED']);
    expect(await levels(t, world, 'SKU-4')).toMatchObject({ quantity: 4, available: 4, committed: 0 });
    await expectStockInvariants(t, world.tenant.id);
  });

  it.each([
    ['an item of another order', 'other', 'input.items[0].item_id'],
    ['the same item twice', 'twice', 'input.items[1].item_id'],
    ['no items', 'none', 'input.items'],
  ])('rejects %s with VALIDATION_ERROR naming the field and changes nothing', async (_name, kind, field) => {
    const order = await createOrder([{ sku: 'SKU-5', quantity: 1 }]);
    const other = await createOrder([{ sku: 'SKU-5', quantity: 1 }]);
    const items =
      kind === 'other'
        ? [{ item_id: other.items[0]!.id }]
        : kind === 'twice'
          ? [{ item_id: order.items[0]!.id }, { item_id: order.items[0]!.id }]
          : [];
    const before = await operationsSnapshot(t, world.tenant.id);
    expect(
      await graphqlErrorField(t, world.tenant.key, 'VALIDATION_ERROR', DEALLOCATE, {
        input: { order_id: order.id, items },
      }),
    ).toBe(field);
    expect(await operationsSnapshot(t, world.tenant.id)).toEqual(before);
    await run(CANCEL, { id: order.id }, 'cancelOrder');
    await run(CANCEL, { id: other.id }, 'cancelOrder');
  });
});

describe('picking corrections', () => {
  it('markItemsAsMissing takes the item off the order and writes a CORRECTION against the inventory', async () => {
    const order = await createOrder([{ sku: 'SKU-5', quantity: 2 }]);
    const after = await run(
      MISSING,
      { order_id: order.id, items: [{ item_id: order.items[0]!.id }] },
      'markItemsAsMissing',
    );
    expect(after.items[0]!.state).toBe('MISSING');
    expect(await levels(t, world, 'SKU-5')).toMatchObject({ quantity: 3, available: 3, committed: 0 });
    const corrections = (await ledger('CORRECTION')).filter(
      (e: { product: { sku: string } }) => e.product.sku === 'SKU-5',
    );
    expect(corrections).toEqual([
      expect.objectContaining({ delta: -2, new_quantity: 3, references: [expect.objectContaining({ id: order.id })] }),
    ]);
    await expectStockInvariants(t, world.tenant.id);
  });

  it('markItemsAsUnavailable keeps the units on hand but unsellable; markItemsAsAvailable brings them back at a location', async () => {
    const order = await createOrder([{ sku: 'SKU-1', quantity: 2 }]);
    const start = await levels(t, world, 'SKU-1');
    const marked = await run(
      UNAVAILABLE,
      { order_id: order.id, items: [{ item_id: order.items[0]!.id }] },
      'markItemsAsUnavailable',
    );
    expect(marked.items[0]!.state).toBe('UNAVAILABLE');
    expect(await levels(t, world, 'SKU-1')).toMatchObject({
      quantity: start.quantity,
      committed: start.committed - 2,
      unavailable: 2,
      available: start.available,
    });

    const before = await operationsSnapshot(t, world.tenant.id);
    expect(
      await graphqlErrorField(t, world.tenant.key, 'VALIDATION_ERROR', AVAILABLE, {
        input: {
          order_id: order.id,
          items: [{ item_id: order.items[0]!.id, location_id: world.catalog.warehouseIds[1] }],
        },
      }),
    ).toBe('input.items[0].location_id');
    await graphqlError(t, world.tenant.key, 'VALIDATION_ERROR', AVAILABLE, {
      input: { order_id: order.id, items: [{ item_id: order.items[0]!.id, location_id: 'nowhere' }] },
    });
    await graphqlError(t, world.tenant.key, 'INVALID_STATE', MISSING, {
      input: { order_id: order.id, items: [{ item_id: order.items[0]!.id }] },
    });
    expect(await operationsSnapshot(t, world.tenant.id)).toEqual(before);

    const found = await run(
      AVAILABLE,
      { order_id: order.id, items: [{ item_id: order.items[0]!.id, location_id: position('A-02') }] },
      'markItemsAsAvailable',
    );
    expect(found.items[0]!.state).toBe('DEALLOCATED');
    expect(await levels(t, world, 'SKU-1')).toMatchObject({
      quantity: start.quantity,
      committed: start.committed - 2,
      unavailable: 0,
      available: start.available + 2,
    });
    const [line] = await sql<{ quantity: string }>(
      t.databaseUrl,
      `SELECT quantity::text FROM inventory_items WHERE position_id = $1 AND product_id = $2 AND state = 'AVAILABLE'`,
      [position('A-02'), world.catalog.productIds.get('SKU-1')],
    );
    expect(line!.quantity).toBe('2');
    const corrections = (await ledger('CORRECTION')).filter(
      (e: { product: { sku: string } }) => e.product.sku === 'SKU-1',
    );
    expect(corrections.map((e: { delta: number }) => e.delta)).toEqual([0, 0]);
    await run(CANCEL, { id: order.id }, 'cancelOrder');
    await expectStockInvariants(t, world.tenant.id);
  });
});

describe('order queries', () => {
  it('lists orders by status and finds one by id, only within the tenant', async () => {
    const order = await createOrder([{ sku: 'SKU-1', quantity: 1 }]);
    const list = async (status?: string) =>
      (
        await graphqlData(
          t,
          world.tenant.key,
          `query($s: OrderStatus) { orders(status: $s, first: 100) { edges { node { id status } } } }`,
          { s: status },
        )
      ).orders.edges.map((e: { node: { id: string } }) => e.node.id);
    expect(await list('OPEN')).toContain(order.id);
    expect(await list('SHIPPED')).not.toContain(order.id);
    expect((await list()).length).toBeGreaterThan(5);
    const found = await graphqlData(t, world.tenant.key, `query($id: ID!) { order(id: $id) { id items { state } } }`, {
      id: order.id,
    });
    expect(found.order).toEqual({ id: order.id, items: [{ state: 'ALLOCATED' }] });
    const other = await createStockWorld(t, 'Other orders tenant', 1);
    await graphqlError(t, other.tenant.key, 'NOT_FOUND', `query($id: ID!) { order(id: $id) { id } }`, { id: order.id });
    // Another tenant can neither read nor change the order: every write is a 404 that changes nothing.
    const before = await operationsSnapshot(t, world.tenant.id);
    const items = [{ item_id: order.items[0]!.id }];
    for (const [query, input] of [
      [SHIP, { id: order.id }],
      [CANCEL, { id: order.id }],
      [DEALLOCATE, { order_id: order.id, items }],
      [MISSING, { order_id: order.id, items }],
    ] as const) {
      await graphqlError(t, other.tenant.key, 'NOT_FOUND', query, { input });
    }
    expect(await operationsSnapshot(t, world.tenant.id)).toEqual(before);
    const unchanged = await graphqlData(
      t,
      world.tenant.key,
      `query($id: ID!) { order(id: $id) { status items { state } } }`,
      {
        id: order.id,
      },
    );
    expect(unchanged.order).toEqual({ status: 'OPEN', items: [{ state: 'ALLOCATED' }] });
    await run(CANCEL, { id: order.id }, 'cancelOrder');
  });
});
