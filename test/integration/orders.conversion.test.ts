/**
 * Reservations that become orders: `createOrder(input: {reservation_id})` commits the reserved
 * units in one step, with no moment in which another buyer can take them, releases what the order
 * does not take, and records both entities in the ledger.
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
import { graphql, graphqlData, graphqlError, graphqlErrorField } from './stock.fixtures';

const t = await startTestApp();
let world: StockWorld;

const RESERVE = `mutation($input: CreateReservationInput!) { createReservation(input: $input) { reservation { id } } }`;
const CREATE_ORDER = `mutation($input: CreateOrderInput!) { createOrder(input: $input) { order {
  id status business { id } warehouse { id } channel { id } items { id sku quantity state } } } }`;
const RESERVATION = `query($id: ID!) { reservation(id: $id) { id status order_id released_at } }`;

const inAnHour = () => Date.now() + 3_600_000;

async function reserve(items: { sku: string; quantity: number }[], key = world.tenant.key) {
  const data = await graphqlData(t, key, RESERVE, {
    input: {
      business_id: world.catalog.businessId,
      warehouse_id: world.warehouseId,
      channel_id: world.channelId,
      customer: { name: 'Grace Hopper' },
      items,
      expires_at: inAnHour(),
    },
  });
  return data.createReservation.reservation.id as string;
}

const convert = async (input: Record<string, unknown>) =>
  (await graphqlData(t, world.tenant.key, CREATE_ORDER, { input })).createOrder.order;

beforeAll(async () => {
  world = await createStockWorld(t, 'Conversion tenant', 4);
  await addStock(t, world, 'SKU-1', 20);
  await addStock(t, world, 'SKU-2', 10, { position: 'A-01' });
  await addStock(t, world, 'SKU-3', 100);
});

describe('createOrder with reservation_id', () => {
  it('commits every reserved unit to the order, converts the reservation and names both in the ledger', async () => {
    const reservationId = await reserve([
      { sku: 'SKU-1', quantity: 3 },
      { sku: 'SKU-2', quantity: 2 },
    ]);
    const before = { sku1: await levels(t, world, 'SKU-1'), sku2: await levels(t, world, 'SKU-2') };
    const order = await convert({ reservation_id: reservationId });
    expect(order).toMatchObject({
      status: 'OPEN',
      business: { id: world.catalog.businessId },
      warehouse: { id: world.warehouseId },
      channel: { id: world.channelId },
    });
    expect(order.items.map((item) => [item.sku, item.quantity, item.state])).toEqual([
      ['SKU-1', 3, 'ALLOCATED'],
      ['SKU-2', 2, 'ALLOCATED'],
    ]);
    expect(await levels(t, world, 'SKU-1')).toEqual({
      ...before.sku1,
      reserved: before.sku1.reserved - 3,
      committed: before.sku1.committed + 3,
    });
    expect(await levels(t, world, 'SKU-2')).toEqual({
      ...before.sku2,
      reserved: before.sku2.reserved - 2,
      committed: before.sku2.committed + 2,
    });
    const reservation = (await graphqlData(t, world.tenant.key, RESERVATION, { id: reservationId })).reservation;
    expect(reservation).toMatchObject({ status: 'CONVERTED', order_id: order.id, released_at: expect.any(Number) });
    const references = await sql<{ references: { type: string; id: string }[] }>(
      t.databaseUrl,
      `SELECT "references" FROM stock_mutations WHERE tenant_id = $1 AND "references" @> $2::jsonb`,
      [world.tenant.id, JSON.stringify([{ type: 'Order', id: order.id }])],
    );
    expect(references.length).toBeGreaterThan(0);
    for (const row of references) {
      expect(row.references).toEqual([
        { type: 'Order', id: order.id },
        { type: 'Reservation', id: reservationId },
      ]);
    }
    await expectStockInvariants(t, world.tenant.id);
  });

  it('orders fewer units than reserved and releases the rest; idempotent with a key', async () => {
    const reservationId = await reserve([{ sku: 'SKU-1', quantity: 5 }]);
    const before = await levels(t, world, 'SKU-1');
    const input = { reservation_id: reservationId, items: [{ sku: 'SKU-1', quantity: 2 }], idempotency_key: 'conv-1' };
    const order = await convert(input);
    expect(order.items.map((item) => [item.sku, item.quantity])).toEqual([['SKU-1', 2]]);
    expect(await levels(t, world, 'SKU-1')).toEqual({
      ...before,
      reserved: before.reserved - 5,
      committed: before.committed + 2,
      available: before.available + 3,
    });
    const snapshot = await operationsSnapshot(t, world.tenant.id);
    expect(await convert(input)).toEqual(order);
    expect(await operationsSnapshot(t, world.tenant.id)).toEqual(snapshot);
    await expectStockInvariants(t, world.tenant.id);
  });

  it('refuses bad input with the precise code and changes nothing', async () => {
    const reservationId = await reserve([
      { sku: 'SKU-1', quantity: 2 },
      { sku: 'SKU-2', quantity: 1 },
    ]);
    const before = await operationsSnapshot(t, world.tenant.id);
    const field = (input: Record<string, unknown>) =>
      graphqlErrorField(t, world.tenant.key, 'VALIDATION_ERROR', CREATE_ORDER, { input });
    expect(await field({ reservation_id: reservationId, items: [{ sku: 'SKU-1', quantity: 3 }] })).toBe(
      'input.items[0].quantity',
    );
    expect(
      await field({
        reservation_id: reservationId,
        items: [
          { sku: 'SKU-2', quantity: 1 },
          { sku: 'SKU-2', quantity: 1 },
        ],
      }),
    ).toBe('input.items[1].quantity');
    expect(await field({ reservation_id: reservationId, items: [{ sku: 'SKU-3', quantity: 1 }] })).toBe(
      'input.items[0].sku',
    );
    expect(await field({ reservation_id: reservationId, warehouse_id: world.warehouseId })).toBe('input.warehouse_id');
    expect(await field({ reservation_id: 'not-an-id' })).toBe('input.reservation_id');
    expect(await field({ business_id: world.catalog.businessId, warehouse_id: world.warehouseId })).toBe(
      'input.channel_id',
    );
    await graphqlError(t, world.tenant.key, 'NOT_FOUND', CREATE_ORDER, {
      input: { reservation_id: '0190f5b4-1c5e-7000-8000-0000000000aa' },
    });
    const other = await createStockWorld(t, 'Other converter', 1);
    await graphqlError(t, other.tenant.key, 'NOT_FOUND', CREATE_ORDER, { input: { reservation_id: reservationId } });
    expect(await operationsSnapshot(t, world.tenant.id)).toEqual(before);
  });

  it('refuses an expired, removed or already converted reservation with INVALID_STATE and changes nothing', async () => {
    const expired = await reserve([{ sku: 'SKU-1', quantity: 1 }]);
    await sql(t.databaseUrl, `UPDATE reservations SET expires_at = now() - interval '1 second' WHERE id = $1`, [
      expired,
    ]);
    const removed = await reserve([{ sku: 'SKU-1', quantity: 1 }]);
    await graphqlData(
      t,
      world.tenant.key,
      `mutation($id: ID!) { removeReservation(input: {id: $id}) { reservation { id } } }`,
      {
        id: removed,
      },
    );
    const converted = await reserve([{ sku: 'SKU-1', quantity: 1 }]);
    await convert({ reservation_id: converted });
    const before = await operationsSnapshot(t, world.tenant.id);
    for (const [id, status] of [
      [expired, 'EXPIRED'],
      [removed, 'REMOVED'],
      [converted, 'CONVERTED'],
    ] as const) {
      const error = await graphqlError(t, world.tenant.key, 'INVALID_STATE', CREATE_ORDER, {
        input: { reservation_id: id },
      });
      expect(error.message).toContain(status);
    }
    expect(await operationsSnapshot(t, world.tenant.id)).toEqual(before);
    await expectStockInvariants(t, world.tenant.id);
  });

  it('converts 50 reservations while 50 other buyers reserve the same SKU: no unit sold twice', async () => {
    const sku = 'SKU-4';
    await addStock(t, world, sku, 100);
    const reservations = await Promise.all(Array.from({ length: 50 }, () => reserve([{ sku, quantity: 1 }])));
    expect(await levels(t, world, sku)).toMatchObject({ available: 50, reserved: 50 });
    const [conversions, rivals] = await Promise.all([
      Promise.all(
        reservations.map((id) => graphql(t, world.tenant.key, CREATE_ORDER, { input: { reservation_id: id } })),
      ),
      Promise.all(
        Array.from({ length: 50 }, () =>
          graphql(t, world.tenant.key, RESERVE, {
            input: {
              business_id: world.catalog.businessId,
              warehouse_id: world.warehouseId,
              channel_id: world.channelId,
              customer: { name: 'Rival' },
              items: [{ sku, quantity: 2 }],
              expires_at: inAnHour(),
            },
          }),
        ),
      ),
    ]);
    for (const conversion of conversions) expect(conversion.body.errors, conversion.rawBody).toBeUndefined();
    const won = rivals.filter((rival) => !rival.body.errors).length;
    for (const rival of rivals.filter((candidate) => candidate.body.errors)) {
      expect(rival.body.errors![0]!.extensions?.code, rival.rawBody).toBe('OUT_OF_STOCK');
    }
    expect(won).toBe(25);
    expect(await levels(t, world, sku)).toMatchObject({ quantity: 100, committed: 50, reserved: 50, available: 0 });
    await expectStockInvariants(t, world.tenant.id);
  });
});
