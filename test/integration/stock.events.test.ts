/**
 * Low-stock and out-of-stock events: a fall of what is available of a SKU at a warehouse to its
 * reorder point (stock.low) or to nothing (stock.out) is recorded once per fall, by whichever
 * write caused it, and POSTed, signed, to the webhooks of the channels selling from the warehouse.
 * Real receivers on 127.0.0.1.
 */
import { createHmac } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { sql } from '../helpers/db';
import { downUrl, receiver, startBroadcastApp, until, type Received } from './broadcasts.fixtures';
import { addStock, createStockWorld, expectStockInvariants, levels, type StockWorld } from './orders.fixtures';
import { graphql, graphqlData, graphqlError, graphqlErrorField } from './stock.fixtures';

const t = await startBroadcastApp();
const SECRET = 'channel-secret-0123456789';

let world: StockWorld;
/** A channel without a warehouse list (sells from all), and one selling from the second warehouse only. */
let everywhere: Awaited<ReturnType<typeof receiver>>;
let secondOnly: Awaited<ReturnType<typeof receiver>>;
let everywhereId: string;
let secondOnlyId: string;

interface StockEvent {
  id: string;
  type: 'STOCK_LOW' | 'STOCK_OUT';
  sku: string;
  warehouse: { id: string };
  available: number;
  reorder_point: number | null;
  stock_mutation_id: string;
  status: string;
  messages: { channel_id: string; status: string; delivery_id: string; attempts: number }[];
  created_at: number;
}

const EVENT_FIELDS = `id type sku warehouse { id } available reorder_point stock_mutation_id status
  messages { channel_id status delivery_id attempts } created_at`;

async function eventsOf(sku: string, target: StockWorld = world): Promise<StockEvent[]> {
  const data = await graphqlData<{ stockEvents: { edges: { node: StockEvent }[] } }>(
    t,
    target.tenant.key,
    `query($sku: String) { stockEvents(sku: $sku, first: 50) { edges { node { ${EVENT_FIELDS} } } } }`,
    { sku },
  );
  return data.stockEvents.edges.map((edge) => edge.node);
}

/** The events of a SKU once none is PENDING any more (the worker delivers in the background). */
const settledEventsOf = (sku: string, target: StockWorld = world) =>
  until(
    () => eventsOf(sku, target),
    (events) => events.every((event) => event.status !== 'PENDING'),
  );

/** The event bodies (stock.low, stock.out) a receiver got for a SKU, in the order they arrived. */
const eventBodies = (target: { received: Received[] }, sku: string) =>
  target.received
    .map((delivery) => JSON.parse(delivery.body))
    .filter((body) => body.type !== 'stock.mutation' && body.sku === sku);

async function createChannel(target: StockWorld, name: string, url: string) {
  const data = await graphqlData(
    t,
    target.tenant.key,
    `mutation($input: CreateSalesChannelInput!) { createSalesChannel(input: $input) { sales_channel { id } } }`,
    { input: { name } },
  );
  const channelId = data.createSalesChannel.sales_channel.id as string;
  await graphqlData(
    t,
    target.tenant.key,
    `mutation($input: SetSalesChannelWebhookInput!) { setSalesChannelWebhook(input: $input) { url } }`,
    { input: { channel_id: channelId, url, secret: SECRET } },
  );
  return channelId;
}

async function createPreference(sku: string, reorderPoint: number, warehouseId = world.warehouseId) {
  const data = await graphqlData(
    t,
    world.tenant.key,
    `mutation($i: CreateItemPreferencesInput!) { createItemPreferences(input: $i) { preferences { id } } }`,
    {
      i: {
        preferences: [
          {
            sku,
            warehouse_id: warehouseId,
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
  return data.createItemPreferences.preferences[0]!.id;
}

const orderInput = (sku: string, quantity: number, warehouseId = world.warehouseId) => ({
  business_id: world.catalog.businessId,
  warehouse_id: warehouseId,
  channel_id: world.channelId,
  items: [{ sku, quantity }],
});
const CREATE_ORDER = `mutation($input: CreateOrderInput!) { createOrder(input: $input) { order { id } } }`;
const order = (sku: string, quantity: number, warehouseId = world.warehouseId) =>
  graphqlData(t, world.tenant.key, CREATE_ORDER, { input: orderInput(sku, quantity, warehouseId) });

const CREATE_RESERVATION = `mutation($input: CreateReservationInput!) {
  createReservation(input: $input) { reservation { id } } }`;
const reserve = async (sku: string, quantity: number) =>
  (
    await graphqlData(t, world.tenant.key, CREATE_RESERVATION, {
      input: { ...orderInput(sku, quantity), customer: { name: 'Ada' }, expires_at: Date.now() + 3_600_000 },
    })
  ).createReservation.reservation.id as string;

const sourceOf = async (mutationId: string) =>
  (
    await sql<{ source: string }>(t.databaseUrl, 'SELECT source::text FROM stock_mutations WHERE id = $1', [mutationId])
  )[0]!.source;

beforeAll(async () => {
  world = await createStockWorld(t, 'Stock event tenant', 10);
  everywhere = await receiver(() => 200);
  secondOnly = await receiver(() => 200);
  everywhereId = await createChannel(world, 'Everywhere', everywhere.url);
  secondOnlyId = await createChannel(world, 'Second warehouse only', secondOnly.url);
  await graphqlData(
    t,
    world.tenant.key,
    `mutation($i: SetSalesChannelWarehousesInput!) { setSalesChannelWarehouses(input: $i) { sales_channel { id } } }`,
    { i: { channel_id: secondOnlyId, warehouse_ids: [world.catalog.warehouseIds[1]] } },
  );
});

describe('stock events', () => {
  it('fires stock.low once when orders cross the reorder point, stock.out at nothing, and again after a restock', async () => {
    await addStock(t, world, 'SKU-1', 10);
    await createPreference('SKU-1', 5);
    await order('SKU-1', 4); // 6 left: above the reorder point
    expect(await eventsOf('SKU-1')).toEqual([]);
    await order('SKU-1', 1); // 5: at the reorder point
    await order('SKU-1', 2); // 3: further below, no second event
    expect((await eventsOf('SKU-1')).map((event) => event.type)).toEqual(['STOCK_LOW']);
    await order('SKU-1', 3); // 0: out of stock
    await addStock(t, world, 'SKU-1', 4); // 4: back, but not above the reorder point
    await order('SKU-1', 1); // 3: still low, no event
    await addStock(t, world, 'SKU-1', 7); // 10: above the reorder point
    await order('SKU-1', 6); // 4: a new fall

    const events = await settledEventsOf('SKU-1');
    expect(events.map(({ type, available, reorder_point }) => [type, available, reorder_point])).toEqual([
      ['STOCK_LOW', 5, 5],
      ['STOCK_OUT', 0, 5],
      ['STOCK_LOW', 4, 5],
    ]);
    for (const event of events) {
      expect(event).toMatchObject({ sku: 'SKU-1', warehouse: { id: world.warehouseId }, status: 'PROCESSED' });
      expect(await sourceOf(event.stock_mutation_id)).toBe('ALLOCATION');
      // Delivered to the channel selling from every warehouse, not to the one selling from the second only.
      expect(event.messages).toEqual([
        { channel_id: everywhereId, status: 'PROCESSED', delivery_id: expect.any(String), attempts: 1 },
      ]);
    }
    expect(await levels(t, world, 'SKU-1')).toMatchObject({ available: 4 });

    // Deliveries go out concurrently: compared in the events' order.
    const bodies = eventBodies(everywhere, 'SKU-1').sort(
      (a, b) => events.findIndex((e) => e.id === a.stock_event_id) - events.findIndex((e) => e.id === b.stock_event_id),
    );
    expect(bodies).toEqual(
      events.map((event) => ({
        type: event.type === 'STOCK_LOW' ? 'stock.low' : 'stock.out',
        delivery_id: event.messages[0]!.delivery_id,
        stock_event_id: event.id,
        stock_mutation_id: event.stock_mutation_id,
        channel_id: everywhereId,
        sku: 'SKU-1',
        product_id: world.catalog.productIds.get('SKU-1'),
        warehouse_id: world.warehouseId,
        available: event.available,
        reorder_point: 5,
        created_at: event.created_at,
      })),
    );
    expect(eventBodies(secondOnly, 'SKU-1')).toEqual([]);
    await expectStockInvariants(t, world.tenant.id);
  });

  it('signs every delivery like the ledger broadcasts, which keep their body with type stock.mutation', async () => {
    const deliveries = await until(
      async () => everywhere.received,
      (received) => received.some((delivery) => JSON.parse(delivery.body).type === 'stock.mutation'),
    );
    expect(deliveries.length).toBeGreaterThan(3);
    for (const delivery of deliveries) {
      expect(delivery.headers['x-signature-256']).toBe(
        `sha256=${createHmac('sha256', SECRET).update(delivery.body).digest('hex')}`,
      );
      expect(delivery.headers['x-delivery-id']).toBe(JSON.parse(delivery.body).delivery_id);
    }
    const mutation = deliveries.map((delivery) => JSON.parse(delivery.body)).find((b) => b.type === 'stock.mutation');
    expect(Object.keys(mutation).sort()).toEqual(
      [
        'type',
        'delivery_id',
        'stock_mutation_id',
        'channel_id',
        'sku',
        'product_id',
        'warehouse_id',
        'position_id',
        'source',
        'delta',
        'new_quantity',
        'created_at',
      ].sort(),
    );
  });

  it('fires stock.out without an item preference, to the channels selling from that warehouse', async () => {
    const second = world.catalog.warehouseIds[1];
    await addStock(t, world, 'SKU-2', 2, { warehouseId: second });
    await order('SKU-2', 2, second);
    const [event, ...more] = await settledEventsOf('SKU-2');
    expect(more).toEqual([]);
    expect(event).toMatchObject({ type: 'STOCK_OUT', available: 0, reorder_point: null, warehouse: { id: second } });
    expect(event!.messages.map((message) => message.channel_id).sort()).toEqual([everywhereId, secondOnlyId].sort());
    expect(eventBodies(secondOnly, 'SKU-2')).toMatchObject([{ type: 'stock.out', reorder_point: null }]);
  });

  it('fires on a reservation (the batched path), is reset by its expiry, and fires again on the next one', async () => {
    await addStock(t, world, 'SKU-3', 3);
    const reservation = await reserve('SKU-3', 3);
    expect((await eventsOf('SKU-3')).map((event) => [event.type, event.available])).toEqual([['STOCK_OUT', 0]]);
    await sql(t.databaseUrl, `UPDATE reservations SET expires_at = now() - interval '1 second' WHERE id = $1`, [
      reservation,
    ]);
    await t.services.reservations.releaseExpired();
    expect(await levels(t, world, 'SKU-3')).toMatchObject({ available: 3, reserved: 0 });
    expect(await eventsOf('SKU-3')).toHaveLength(1);
    await reserve('SKU-3', 2);
    await reserve('SKU-3', 1);
    const events = await settledEventsOf('SKU-3');
    expect(events.map((event) => [event.type, event.available])).toEqual([
      ['STOCK_OUT', 0],
      ['STOCK_OUT', 0],
    ]);
    for (const event of events) expect(await sourceOf(event.stock_mutation_id)).toBe('ALLOCATION');
    // Deliveries go out concurrently: their order is not the events' order.
    expect(
      eventBodies(everywhere, 'SKU-3')
        .map((body) => body.stock_event_id)
        .sort(),
    ).toEqual(events.map((e) => e.id).sort());
  });

  it('fires when a transfer takes units out of a warehouse, and not at the warehouse that receives them', async () => {
    const [source, destination] = world.catalog.warehouseIds;
    await addStock(t, world, 'SKU-4', 5, { warehouseId: source });
    await createPreference('SKU-4', 2, source);
    const transfer = await graphqlData(
      t,
      world.tenant.key,
      `mutation($input: CreateTransferInput!) { createTransfer(input: $input) { transfer { id } } }`,
      { input: { from_warehouse_id: source, to_warehouse_id: destination, items: [{ sku: 'SKU-4', quantity: 4 }] } },
    );
    const id = transfer.createTransfer.transfer.id;
    for (const mutation of ['shipTransfer', 'receiveTransfer']) {
      await graphqlData(
        t,
        world.tenant.key,
        `mutation($input: ${mutation[0]!.toUpperCase()}${mutation.slice(1)}Input!) { ${mutation}(input: $input) { transfer { id } } }`,
        { input: { id } },
      );
    }
    expect(await levels(t, world, 'SKU-4', destination)).toMatchObject({ available: 4 });
    const events = await settledEventsOf('SKU-4');
    expect(events.map((event) => [event.type, event.available, event.warehouse.id])).toEqual([
      ['STOCK_LOW', 1, source],
    ]);
  });

  it('fires on a count (setInventoryQuantities)', async () => {
    await addStock(t, world, 'SKU-5', 8);
    await createPreference('SKU-5', 3);
    const [line] = await sql<{ id: string }>(
      t.databaseUrl,
      `SELECT id FROM inventory_items WHERE tenant_id = $1 AND product_id = $2 AND state = 'AVAILABLE'`,
      [world.tenant.id, world.catalog.productIds.get('SKU-5')],
    );
    const count = (quantity: number) =>
      graphqlData(
        t,
        world.tenant.key,
        `mutation($input: SetInventoryQuantitiesInput!) { setInventoryQuantities(input: $input) { items { id } } }`,
        { input: { items: [{ item_id: line!.id, quantity }] } },
      );
    await count(2);
    await count(1);
    await count(0);
    const events = await settledEventsOf('SKU-5');
    expect(events.map((event) => [event.type, event.available])).toEqual([
      ['STOCK_LOW', 2],
      ['STOCK_OUT', 0],
    ]);
    expect(await sourceOf(events[0]!.stock_mutation_id)).toBe('CORRECTION');
  });

  it('fires nothing for a rejected order, and the rejection changes no level', async () => {
    await addStock(t, world, 'SKU-6', 2);
    await createPreference('SKU-6', 1);
    const states = () =>
      sql(t.databaseUrl, 'SELECT * FROM stock_alert_states WHERE tenant_id = $1 ORDER BY product_id, warehouse_id', [
        world.tenant.id,
      ]);
    const before = await states();
    await graphqlError(t, world.tenant.key, 'OUT_OF_STOCK', CREATE_ORDER, { input: orderInput('SKU-6', 3) });
    expect(await states()).toEqual(before);
    expect(await eventsOf('SKU-6')).toEqual([]);
    expect(await levels(t, world, 'SKU-6')).toMatchObject({ available: 2 });
  });

  it('counts a preference created or changed below the reorder point as the level, not as a fall', async () => {
    await addStock(t, world, 'SKU-7', 3);
    const preference = await createPreference('SKU-7', 5); // 3 is low already: no event
    await addStock(t, world, 'SKU-7', 1); // 4, still low: no event
    await order('SKU-7', 2); // 2, still low: no event
    expect(await eventsOf('SKU-7')).toEqual([]);
    await graphqlData(
      t,
      world.tenant.key,
      `mutation($i: RemoveItemPreferencesInput!) { removeItemPreferences(input: $i) { ids } }`,
      { i: { ids: [preference] } },
    );
    await createPreference('SKU-7', 1); // 2 is above 1
    await order('SKU-7', 1); // 1: a fall to the new reorder point
    expect((await eventsOf('SKU-7')).map((event) => [event.type, event.available, event.reorder_point])).toEqual([
      ['STOCK_LOW', 1, 1],
    ]);
  });

  it('fires exactly once when concurrent orders and reservations cross together', async () => {
    await addStock(t, world, 'SKU-8', 20);
    await addStock(t, world, 'SKU-9', 20);
    await createPreference('SKU-8', 10);
    await createPreference('SKU-9', 10);
    const orders = await Promise.all(
      Array.from({ length: 10 }, () => graphql(t, world.tenant.key, CREATE_ORDER, { input: orderInput('SKU-8', 2) })),
    );
    expect(orders.map((answer) => answer.body.errors)).toEqual(Array(10).fill(undefined));
    const reservations = await Promise.all(
      Array.from({ length: 10 }, () =>
        graphql(t, world.tenant.key, CREATE_RESERVATION, {
          input: { ...orderInput('SKU-9', 1), customer: { name: 'Ada' }, expires_at: Date.now() + 3_600_000 },
        }),
      ),
    );
    expect(reservations.map((answer) => answer.body.errors)).toEqual(Array(10).fill(undefined));
    const ordered = await settledEventsOf('SKU-8');
    expect(ordered.map((event) => [event.type, event.available])).toEqual([
      ['STOCK_LOW', 10],
      ['STOCK_OUT', 0],
    ]);
    // Reservations arriving together are written in batches; whichever batch crosses, it leaves 10.
    const reserved = await settledEventsOf('SKU-9');
    expect(reserved.map((event) => [event.type, event.available])).toEqual([['STOCK_LOW', 10]]);
    expect(await levels(t, world, 'SKU-9')).toMatchObject({ available: 10, reserved: 10 });
    expect(eventBodies(everywhere, 'SKU-8')).toHaveLength(2);
    expect(eventBodies(everywhere, 'SKU-9')).toHaveLength(1);
    await expectStockInvariants(t, world.tenant.id);
  });
});

describe('the delivery of stock events', () => {
  it('makes the event FAILING after the retries; retryStockEvent delivers it again with the same delivery id', async () => {
    let answer = 500;
    const failing = await receiver(() => answer);
    const other = await createStockWorld(t, 'Failing receiver tenant', 1);
    await createChannel(other, 'Failing', failing.url);
    await addStock(t, other, 'SKU-1', 1);
    await graphqlData(t, other.tenant.key, CREATE_ORDER, {
      input: {
        business_id: other.catalog.businessId,
        warehouse_id: other.warehouseId,
        channel_id: other.channelId,
        items: [{ sku: 'SKU-1', quantity: 1 }],
      },
    });
    const [event] = await settledEventsOf('SKU-1', other);
    expect(event).toMatchObject({
      type: 'STOCK_OUT',
      status: 'FAILING',
      messages: [{ status: 'FAILING', attempts: 3 }],
    });
    expect(eventBodies(failing, 'SKU-1')).toHaveLength(3);

    const RETRY = `mutation($input: RetryStockEventInput!) { retryStockEvent(input: $input) { id } }`;
    await graphqlError(t, other.tenant.key, 'NOT_FOUND', RETRY, {
      input: { id: '0190f5b4-1c5e-7000-8000-000000000abc' },
    });
    // Another tenant's event is not found either.
    await graphqlError(t, world.tenant.key, 'NOT_FOUND', RETRY, { input: { id: event!.id } });

    answer = 200;
    expect(await graphqlData(t, other.tenant.key, RETRY, { input: { id: event!.id } })).toEqual({
      retryStockEvent: { id: event!.id },
    });
    const [retried] = await until(
      () => eventsOf('SKU-1', other),
      (events) => events[0]?.status === 'PROCESSED',
    );
    expect(retried).toMatchObject({ status: 'PROCESSED', messages: [{ status: 'PROCESSED', attempts: 1 }] });
    const attempts = failing.received.filter((delivery) => JSON.parse(delivery.body).type === 'stock.out');
    expect(attempts).toHaveLength(4);
    expect(new Set(attempts.map((delivery) => delivery.headers['x-delivery-id']))).toEqual(
      new Set([event!.messages[0]!.delivery_id]),
    );
    await graphqlError(t, other.tenant.key, 'INVALID_STATE', RETRY, { input: { id: event!.id } });
  });

  it('drops the undelivered deliveries of a removed webhook from its events', async () => {
    const other = await createStockWorld(t, 'Removed webhook tenant', 1);
    const channelId = await createChannel(other, 'Down', await downUrl());
    await addStock(t, other, 'SKU-1', 1);
    await graphqlData(t, other.tenant.key, CREATE_ORDER, {
      input: {
        business_id: other.catalog.businessId,
        warehouse_id: other.warehouseId,
        channel_id: other.channelId,
        items: [{ sku: 'SKU-1', quantity: 1 }],
      },
    });
    const [failed] = await settledEventsOf('SKU-1', other);
    expect(failed).toMatchObject({ type: 'STOCK_OUT', status: 'FAILING', messages: [{ channel_id: channelId }] });
    await graphqlData(
      t,
      other.tenant.key,
      `mutation($input: RemoveSalesChannelWebhookInput!) { removeSalesChannelWebhook(input: $input) { channel_id } }`,
      { input: { channel_id: channelId } },
    );
    expect(await eventsOf('SKU-1', other)).toMatchObject([{ id: failed!.id, status: 'PROCESSED', messages: [] }]);
  });

  it('filters by type, pages, and refuses a malformed filter', async () => {
    expect(
      await graphqlErrorField(
        t,
        world.tenant.key,
        'VALIDATION_ERROR',
        `{ stockEvents(warehouse_id: "not-an-id") { edges { cursor } } }`,
      ),
    ).toBe('warehouse_id');
    const page = await graphqlData(
      t,
      world.tenant.key,
      `{ stockEvents(type: STOCK_OUT, first: 2) {
      edges { node { type } } pageInfo { hasNextPage endCursor } } }`,
    );
    expect(page.stockEvents.edges.map((edge: { node: { type: string } }) => edge.node.type)).toEqual([
      'STOCK_OUT',
      'STOCK_OUT',
    ]);
    expect(page.stockEvents.pageInfo.hasNextPage).toBe(true);
  });
});
