/**
 * Reservations: units move from available to reserved (ALLOCATION), all items or none, and back
 * on removal or at `expires_at`, which counts at once and is recorded in the ledger exactly once.
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

const CREATE = `mutation($input: CreateReservationInput!) { createReservation(input: $input) { reservation {
  id status expires_at notes released_at created_at customer { name email phone }
  business { id } warehouse { id } channel { id } items { sku quantity product { id sku } } } } }`;
const REMOVE = `mutation($input: RemoveReservationInput!) { removeReservation(input: $input) { reservation { id status released_at } } }`;

const inAnHour = () => Date.now() + 3_600_000;

function reservationInput(items: { sku: string; quantity: number }[], extra: Record<string, unknown> = {}) {
  return {
    business_id: world.catalog.businessId,
    warehouse_id: world.warehouseId,
    channel_id: world.channelId,
    customer: { name: 'Ada Lovelace', email: 'ada@example.com' },
    items,
    expires_at: inAnHour(),
    ...extra,
  };
}

const reserve = async (items: { sku: string; quantity: number }[], extra: Record<string, unknown> = {}) =>
  (await graphqlData(t, world.tenant.key, CREATE, { input: reservationInput(items, extra) })).createReservation
    .reservation;

beforeAll(async () => {
  world = await createStockWorld(t, 'Reservations tenant', 6);
  await addStock(t, world, 'SKU-1', 10);
  await addStock(t, world, 'SKU-2', 5, { position: 'A-01' });
  await addStock(t, world, 'SKU-3', 5);
});

describe('createReservation', () => {
  it('moves units from available to reserved and writes ALLOCATION mutations naming the reservation', async () => {
    const id = '0190f5b4-1c5e-7000-8000-000000000001';
    const expiresAt = inAnHour();
    const reservation = await reserve(
      [
        { sku: 'SKU-1', quantity: 3 },
        { sku: 'SKU-2', quantity: 2 },
      ],
      { id, notes: 'hold for pickup', expires_at: expiresAt },
    );
    expect(reservation).toMatchObject({
      id,
      status: 'ACTIVE',
      expires_at: expiresAt,
      notes: 'hold for pickup',
      released_at: null,
      customer: { name: 'Ada Lovelace', email: 'ada@example.com', phone: null },
      business: { id: world.catalog.businessId },
      warehouse: { id: world.warehouseId },
      channel: { id: world.channelId },
      items: [
        { sku: 'SKU-1', quantity: 3, product: { id: world.catalog.productIds.get('SKU-1'), sku: 'SKU-1' } },
        { sku: 'SKU-2', quantity: 2, product: { id: world.catalog.productIds.get('SKU-2'), sku: 'SKU-2' } },
      ],
    });
    expect(await levels(t, world, 'SKU-1')).toMatchObject({ quantity: 10, available: 7, reserved: 3 });
    expect(await levels(t, world, 'SKU-2')).toMatchObject({ quantity: 5, available: 3, reserved: 2 });

    const data = await graphqlData(
      t,
      world.tenant.key,
      `{ stockMutations(query: "source=ALLOCATION", first: 10) { edges { node {
      source delta new_quantity product { sku } location { position { code } } references { __typename ... on Reservation { id status } } } } } }`,
    );
    const nodes = data.stockMutations.edges.map((e) => e.node);
    expect(nodes).toHaveLength(2);
    for (const node of nodes)
      expect(node).toMatchObject({
        source: 'ALLOCATION',
        delta: 0,
        references: [{ __typename: 'Reservation', id, status: 'ACTIVE' }],
      });
    expect(nodes.find((n: { product: { sku: string } }) => n.product.sku === 'SKU-2')).toMatchObject({
      new_quantity: 5,
      location: { position: { code: 'A-01' } },
    });

    const found = await graphqlData(
      t,
      world.tenant.key,
      `query($id: ID!) { reservation(id: $id) { id status items { sku quantity } } }`,
      { id },
    );
    expect(found.reservation).toMatchObject({ id, status: 'ACTIVE' });
    await graphqlData(t, world.tenant.key, REMOVE, { input: { id } });
    await expectStockInvariants(t, world.tenant.id);
  });

  it('takes all items or none: one short SKU refuses the whole reservation with OUT_OF_STOCK naming the item', async () => {
    const before = await operationsSnapshot(t, world.tenant.id);
    const error = await graphqlError(t, world.tenant.key, 'OUT_OF_STOCK', CREATE, {
      input: reservationInput([
        { sku: 'SKU-1', quantity: 2 },
        { sku: 'SKU-3', quantity: 6 },
      ]),
    });
    expect(error.message).toContain('out of stock');
    expect(error.message).toContain('SKU-3');
    expect(error.extensions?.field).toBe('input.items[1].quantity');
    expect(await operationsSnapshot(t, world.tenant.id)).toEqual(before);
  });

  it('checks two items naming the same SKU against their summed quantity', async () => {
    const before = await operationsSnapshot(t, world.tenant.id);
    await graphqlError(t, world.tenant.key, 'OUT_OF_STOCK', CREATE, {
      input: reservationInput([
        { sku: 'SKU-3', quantity: 3 },
        { sku: 'SKU-3', quantity: 3 },
      ]),
    });
    expect(await operationsSnapshot(t, world.tenant.id)).toEqual(before);
    const reservation = await reserve([
      { sku: 'SKU-3', quantity: 2 },
      { sku: 'SKU-3', quantity: 3 },
    ]);
    expect(reservation.items).toEqual([
      expect.objectContaining({ sku: 'SKU-3', quantity: 2 }),
      expect.objectContaining({ sku: 'SKU-3', quantity: 3 }),
    ]);
    expect(await levels(t, world, 'SKU-3')).toMatchObject({ available: 0, reserved: 5 });
    await graphqlData(t, world.tenant.key, REMOVE, { input: { id: reservation.id } });
    expect(await levels(t, world, 'SKU-3')).toMatchObject({ available: 5, reserved: 0 });
  });

  it.each([
    ['business_id', { business_id: 'nope' }, 'input.business_id'],
    ['an unknown business', { business_id: '0190f5b4-1c5e-7000-8000-00000000dead' }, 'input.business_id'],
    ['a warehouse of another business', { business_id: 'OTHER' }, 'input.warehouse_id'],
    ['an unknown channel', { channel_id: '0190f5b4-1c5e-7000-8000-00000000beef' }, 'input.channel_id'],
    ['no items', { items: [] }, 'input.items'],
    ['an unknown sku', { items: [{ sku: 'NOPE', quantity: 1 }] }, 'input.items[0].sku'],
    ['a zero quantity', { items: [{ sku: 'SKU-1', quantity: 0 }] }, 'input.items[0].quantity'],
    ['a negative quantity', { items: [{ sku: 'SKU-1', quantity: -2 }] }, 'input.items[0].quantity'],
    ['an expiry in the past', { expires_at: 1_000 }, 'input.expires_at'],
    ['an expiry too far ahead', { expires_at: Date.now() + 400 * 86_400_000 }, 'input.expires_at'],
    ['a blank customer name', { customer: { name: ' ' } }, 'input.customer.name'],
    ['a bad e-mail address', { customer: { name: 'A', email: 'not-an-address' } }, 'input.customer.email'],
    ['a bad id', { id: 'abc' }, 'input.id'],
    ['oversize notes', { notes: 'x'.repeat(2001) }, 'input.notes'],
    ['a bad idempotency key', { idempotency_key: 'with space' }, 'input.idempotency_key'],
  ])('rejects %s with VALIDATION_ERROR naming the field and changes nothing', async (_name, override, field) => {
    const input = reservationInput([{ sku: 'SKU-1', quantity: 1 }], override);
    if ((override as { business_id?: string }).business_id === 'OTHER')
      input.business_id = world.catalog.otherBusinessId;
    const before = await operationsSnapshot(t, world.tenant.id);
    expect(await graphqlErrorField(t, world.tenant.key, 'VALIDATION_ERROR', CREATE, { input })).toBe(field);
    expect(await operationsSnapshot(t, world.tenant.id)).toEqual(before);
  });

  it('rejects missing and unknown input fields and wrong types before running', async () => {
    const before = await operationsSnapshot(t, world.tenant.id);
    const { customer: _customer, ...withoutCustomer } = reservationInput([{ sku: 'SKU-1', quantity: 1 }]);
    await graphqlError(t, world.tenant.key, 'VALIDATION_ERROR', CREATE, { input: withoutCustomer });
    await graphqlError(t, world.tenant.key, 'VALIDATION_ERROR', CREATE, {
      input: { ...reservationInput([{ sku: 'SKU-1', quantity: 1 }]), colour: 'red' },
    });
    await graphqlError(t, world.tenant.key, 'VALIDATION_ERROR', CREATE, {
      input: reservationInput([{ sku: 'SKU-1', quantity: 'one' as unknown as number }]),
    });
    expect(await operationsSnapshot(t, world.tenant.id)).toEqual(before);
  });

  it('needs scope inventory:write and sees only the tenant’s own reservations', async () => {
    const reader = await (await import('../helpers/app')).createKey(t.rest, world.tenant.id, ['inventory:read']);
    const before = await operationsSnapshot(t, world.tenant.id);
    await graphqlError(t, reader, 'FORBIDDEN', CREATE, { input: reservationInput([{ sku: 'SKU-1', quantity: 1 }]) });
    expect(await operationsSnapshot(t, world.tenant.id)).toEqual(before);
    const reservation = await reserve([{ sku: 'SKU-1', quantity: 1 }]);
    const other = await createStockWorld(t, 'Other reservations tenant', 1);
    await graphqlError(t, other.tenant.key, 'NOT_FOUND', `query($id: ID!) { reservation(id: $id) { id } }`, {
      id: reservation.id,
    });
    await graphqlError(t, other.tenant.key, 'NOT_FOUND', REMOVE, { input: { id: reservation.id } });
    await graphqlData(t, world.tenant.key, REMOVE, { input: { id: reservation.id } });
  });

  it('replays the first result for a repeated idempotency_key and refuses the key with another input', async () => {
    const input = reservationInput([{ sku: 'SKU-1', quantity: 1 }], { idempotency_key: 'reserve-once' });
    const first = (await graphqlData(t, world.tenant.key, CREATE, { input })).createReservation.reservation;
    const again = (await graphqlData(t, world.tenant.key, CREATE, { input })).createReservation.reservation;
    expect(again.id).toBe(first.id);
    expect(await levels(t, world, 'SKU-1')).toMatchObject({ reserved: 1 });
    await graphqlError(t, world.tenant.key, 'CONFLICT', CREATE, { input: { ...input, notes: 'different' } });
    await graphqlData(t, world.tenant.key, REMOVE, { input: { id: first.id } });
  });
});

describe('removeReservation', () => {
  it('releases the units early, once', async () => {
    const reservation = await reserve([{ sku: 'SKU-1', quantity: 4 }]);
    expect(await levels(t, world, 'SKU-1')).toMatchObject({ available: 6, reserved: 4 });
    const removed = (await graphqlData(t, world.tenant.key, REMOVE, { input: { id: reservation.id } }))
      .removeReservation.reservation;
    expect(removed.status).toBe('REMOVED');
    expect(removed.released_at).toEqual(expect.any(Number));
    expect(await levels(t, world, 'SKU-1')).toMatchObject({ available: 10, reserved: 0 });
    const before = await operationsSnapshot(t, world.tenant.id);
    await graphqlError(t, world.tenant.key, 'INVALID_STATE', REMOVE, { input: { id: reservation.id } });
    await graphqlError(t, world.tenant.key, 'NOT_FOUND', REMOVE, {
      input: { id: '0190f5b4-1c5e-7000-8000-0000000000ff' },
    });
    expect(await operationsSnapshot(t, world.tenant.id)).toEqual(before);
    await expectStockInvariants(t, world.tenant.id);
  });
});

describe('extendReservation', () => {
  const EXTEND = `mutation($input: ExtendReservationInput!) {
    extendReservation(input: $input) { reservation { id status expires_at } } }`;
  const expire = (id: string) =>
    sql(t.databaseUrl, `UPDATE reservations SET expires_at = now() - interval '1 second' WHERE id = $1`, [id]);

  it('moves the expiry later and keeps the units held, writing no stock mutation', async () => {
    const reservation = await reserve([{ sku: 'SKU-3', quantity: 2 }]);
    const before = await levels(t, world, 'SKU-3');
    const ledgerBefore = await sql(
      t.databaseUrl,
      'SELECT count(*)::int AS n FROM stock_mutations WHERE tenant_id = $1',
      [world.tenant.id],
    );
    const later = reservation.expires_at + 86_400_000;
    const extended = (
      await graphqlData(t, world.tenant.key, EXTEND, { input: { id: reservation.id, expires_at: later } })
    ).extendReservation.reservation;
    expect(extended).toEqual({ id: reservation.id, status: 'ACTIVE', expires_at: later });
    expect(await levels(t, world, 'SKU-3')).toEqual(before);
    expect(
      await sql(t.databaseUrl, 'SELECT count(*)::int AS n FROM stock_mutations WHERE tenant_id = $1', [
        world.tenant.id,
      ]),
    ).toEqual(ledgerBefore);
    await graphqlData(t, world.tenant.key, REMOVE, { input: { id: reservation.id } });
  });

  it('refuses an earlier or too distant expiry, and an expired, removed or unknown reservation, changing nothing', async () => {
    const reservation = await reserve([{ sku: 'SKU-3', quantity: 1 }]);
    const before = await operationsSnapshot(t, world.tenant.id);
    expect(
      await graphqlErrorField(t, world.tenant.key, 'VALIDATION_ERROR', EXTEND, {
        input: { id: reservation.id, expires_at: reservation.expires_at - 1000 },
      }),
    ).toBe('input.expires_at');
    expect(
      await graphqlErrorField(t, world.tenant.key, 'VALIDATION_ERROR', EXTEND, {
        input: { id: reservation.id, expires_at: Date.now() + 31 * 86_400_000 },
      }),
    ).toBe('input.expires_at');
    await graphqlError(t, world.tenant.key, 'NOT_FOUND', EXTEND, {
      input: { id: '0190f5b4-1c5e-7000-8000-0000000000fe', expires_at: inAnHour() },
    });
    const other = await createStockWorld(t, 'Other extender', 1);
    await graphqlError(t, other.tenant.key, 'NOT_FOUND', EXTEND, {
      input: { id: reservation.id, expires_at: inAnHour() + 60_000 },
    });
    expect(await operationsSnapshot(t, world.tenant.id)).toEqual(before);

    await expire(reservation.id);
    const expired = await graphqlError(t, world.tenant.key, 'INVALID_STATE', EXTEND, {
      input: { id: reservation.id, expires_at: inAnHour() },
    });
    expect(expired.message).toContain('EXPIRED');
    const removed = await reserve([{ sku: 'SKU-3', quantity: 1 }]);
    await graphqlData(t, world.tenant.key, REMOVE, { input: { id: removed.id } });
    await graphqlError(t, world.tenant.key, 'INVALID_STATE', EXTEND, {
      input: { id: removed.id, expires_at: inAnHour() + 60_000 },
    });
    const [row] = await sql<{ status: string }>(t.databaseUrl, 'SELECT status::text FROM reservations WHERE id = $1', [
      removed.id,
    ]);
    expect(row!.status).toBe('REMOVED');
    await expectStockInvariants(t, world.tenant.id);
  });
});

describe('expiry', () => {
  /** Moves reservations' expiry into the past, as if their time ran out. */
  const expire = (ids: string[]) =>
    sql(t.databaseUrl, `UPDATE reservations SET expires_at = now() - interval '1 second' WHERE id = ANY($1)`, [ids]);

  async function expiredReservation(items: { sku: string; quantity: number }[]) {
    const reservation = await reserve(items);
    await expire([reservation.id]);
    return reservation.id as string;
  }

  const releases = async (id: string) =>
    sql(
      t.databaseUrl,
      `SELECT id FROM stock_mutations WHERE tenant_id = $1 AND "references" @> $2::jsonb AND actor_type = 'system'`,
      [world.tenant.id, JSON.stringify([{ type: 'Reservation', id }])],
    );

  it('stops counting the moment expires_at passes, before anything is swept', async () => {
    const id = await expiredReservation([{ sku: 'SKU-1', quantity: 10 }]);
    expect(await levels(t, world, 'SKU-1')).toMatchObject({ quantity: 10, available: 10, reserved: 0 });
    const data = await graphqlData(t, world.tenant.key, `query($id: ID!) { reservation(id: $id) { status } }`, { id });
    expect(data.reservation).toEqual({ status: 'EXPIRED' });
    // A new reservation can take the expired units right away; the release is recorded once (by
    // that write, or by the background sweeper if it came first).
    const next = await reserve([{ sku: 'SKU-1', quantity: 10 }]);
    expect(await releases(id)).toHaveLength(1);
    expect(await levels(t, world, 'SKU-1')).toMatchObject({ available: 0, reserved: 10 });
    await graphqlData(t, world.tenant.key, REMOVE, { input: { id: next.id } });
    await expectStockInvariants(t, world.tenant.id);
  });

  it('lets an order sell the units of an expired reservation at once, beside the active ones', async () => {
    await addStock(t, world, 'SKU-6', 5);
    const active = await Promise.all([1, 2, 3].map(() => reserve([{ sku: 'SKU-6', quantity: 1 }])));
    const expired = await expiredReservation([{ sku: 'SKU-6', quantity: 2 }]);
    expect(await levels(t, world, 'SKU-6')).toMatchObject({ quantity: 5, available: 2, reserved: 3 });
    const order = (
      await graphqlData(
        t,
        world.tenant.key,
        `mutation($input: CreateOrderInput!) { createOrder(input: $input) { order { id status items { state } } } }`,
        {
          input: {
            business_id: world.catalog.businessId,
            warehouse_id: world.warehouseId,
            channel_id: world.channelId,
            items: [{ sku: 'SKU-6', quantity: 2 }],
          },
        },
      )
    ).createOrder.order;
    expect(order).toMatchObject({ status: 'OPEN', items: [{ state: 'ALLOCATED' }] });
    expect(await releases(expired)).toHaveLength(1);
    expect(await levels(t, world, 'SKU-6')).toMatchObject({ quantity: 5, available: 0, committed: 2, reserved: 3 });
    for (const reservation of active) await graphqlData(t, world.tenant.key, REMOVE, { input: { id: reservation.id } });
    await expectStockInvariants(t, world.tenant.id);
  });

  it('is recorded exactly once when several sweepers run at the same time', async () => {
    const ids: string[] = [
      (
        await reserve([
          { sku: 'SKU-2', quantity: 1 },
          { sku: 'SKU-1', quantity: 1 },
        ])
      ).id,
      (await reserve([{ sku: 'SKU-1', quantity: 2 }])).id,
    ];
    await expire(ids);
    const released = await Promise.all(Array.from({ length: 4 }, () => t.services.reservations.releaseExpired()));
    // The app's own background sweeper may take part too: between them, each is released once.
    expect(released.reduce((a, b) => a + b, 0)).toBeLessThanOrEqual(2);
    expect(await releases(ids[0]!)).toHaveLength(2);
    expect(await releases(ids[1]!)).toHaveLength(1);
    expect(await t.services.reservations.releaseExpired()).toBe(0);
    const statuses = await sql<{ status: string; released_at: Date | null }>(
      t.databaseUrl,
      'SELECT status::text, released_at FROM reservations WHERE id = ANY($1)',
      [ids],
    );
    for (const row of statuses) expect(row.status).toBe('EXPIRED');
    expect(await levels(t, world, 'SKU-1')).toMatchObject({ available: 10, reserved: 0 });
    await expectStockInvariants(t, world.tenant.id);
  });

  it('lists reservations by their effective status', async () => {
    const active = await reserve([{ sku: 'SKU-1', quantity: 1 }]);
    const expired = await expiredReservation([{ sku: 'SKU-1', quantity: 1 }]);
    const list = async (status: string) =>
      (
        await graphqlData(
          t,
          world.tenant.key,
          `query($s: ReservationStatus) { reservations(status: $s, first: 100) { edges { node { id status } } } }`,
          { s: status },
        )
      ).reservations.edges.map((e: { node: { id: string } }) => e.node.id);
    expect(await list('ACTIVE')).toEqual([active.id]);
    expect(await list('EXPIRED')).toContain(expired);
    expect(await list('REMOVED')).not.toContain(active.id);
    await graphqlData(t, world.tenant.key, REMOVE, { input: { id: active.id } });
  });
});

describe('GraphQL result of an interrupted request', () => {
  it('refuses a reservation whose transaction was killed halfway with a retryable error, leaving nothing behind', async () => {
    // Release what earlier tests left expired, so the background sweeper changes nothing meanwhile.
    await t.services.reservations.releaseExpired();
    const before = await operationsSnapshot(t, world.tenant.id);
    // Hold the stock lock of SKU-5 from another connection so the write stops halfway, inside its transaction.
    const { default: pg } = await import('pg');
    const blocker = new pg.Client({ connectionString: t.databaseUrl });
    await blocker.connect();
    await blocker.query('BEGIN');
    const key = (await import('node:crypto'))
      .createHash('sha256')
      .update(`stock:${world.tenant.id}:${world.catalog.productIds.get('SKU-5')}:${world.warehouseId}`)
      .digest()
      .readBigInt64BE(0);
    await addStock(t, world, 'SKU-5', 3);
    const afterStock = await operationsSnapshot(t, world.tenant.id);
    await blocker.query('SELECT pg_advisory_xact_lock($1::bigint)', [String(key)]);
    const input = reservationInput([{ sku: 'SKU-5', quantity: 2 }], { idempotency_key: 'killed-halfway' });
    const pending = graphql(t, world.tenant.key, CREATE, { input });
    let pid: number | undefined;
    for (let attempt = 0; attempt < 200 && pid === undefined; attempt += 1) {
      const rows = await sql<{ pid: number }>(
        t.databaseUrl,
        `SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' AND wait_event = 'advisory' AND pid <> $1`,
        [(blocker as unknown as { processID: number }).processID],
      );
      pid = rows[0]?.pid;
      if (pid === undefined) await new Promise((resolve) => setTimeout(resolve, 25));
    }
    expect(pid).toBeDefined();
    await sql(t.databaseUrl, 'SELECT pg_terminate_backend($1)', [pid]);
    const response = await pending;
    await blocker.query('ROLLBACK');
    await blocker.end();
    expect(response.body.errors?.[0]?.extensions?.code, response.rawBody).toBe('WRITE_INTERRUPTED');
    expect(response.body.errors?.[0]?.message).toContain('send it again');
    expect(await operationsSnapshot(t, world.tenant.id)).toEqual(afterStock);
    expect(before.reservations).toEqual(afterStock.reservations);
    // Retrying with the same key works.
    const retried = (await graphqlData(t, world.tenant.key, CREATE, { input })).createReservation.reservation;
    expect(retried.status).toBe('ACTIVE');
    expect(await levels(t, world, 'SKU-5')).toMatchObject({ available: 1, reserved: 2 });
    await graphqlData(t, world.tenant.key, REMOVE, { input: { id: retried.id } });
  });
});

describe('the background sweeper', () => {
  it('records the release of an expired reservation without any request', async () => {
    const reservation = await reserve([{ sku: 'SKU-3', quantity: 1 }]);
    await sql(t.databaseUrl, `UPDATE reservations SET expires_at = now() - interval '1 second' WHERE id = $1`, [
      reservation.id,
    ]);
    let status = 'ACTIVE';
    for (let attempt = 0; attempt < 100 && status === 'ACTIVE'; attempt += 1) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      status = (
        await sql<{ status: string }>(t.databaseUrl, 'SELECT status::text FROM reservations WHERE id = $1', [
          reservation.id,
        ])
      )[0]!.status;
    }
    expect(status).toBe('EXPIRED');
    const rows = await sql(
      t.databaseUrl,
      `SELECT 1 FROM stock_mutations WHERE "references" @> $1::jsonb AND actor_type = 'system'`,
      [JSON.stringify([{ type: 'Reservation', id: reservation.id }])],
    );
    expect(rows).toHaveLength(1);
  });
});
