/**
 * Reservations of the same SKUs that arrive while earlier ones hold the SKU's stock lock go to the
 * database together: each is still all or none and checked against what the earlier ones left,
 * one statement per SKU waits on the lock at a time, and a batch cut off changes nothing.
 */
import pg from 'pg';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
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
import { graphql, graphqlData } from './stock.fixtures';

const t = await startTestApp();
let world: StockWorld;
let blocker: pg.Client | undefined;

const CREATE = `mutation($input: CreateReservationInput!) { createReservation(input: $input) { reservation { id status items { sku quantity } } } }`;

const input = (items: { sku: string; quantity: number }[], extra: Record<string, unknown> = {}) => ({
  business_id: world.catalog.businessId,
  warehouse_id: world.warehouseId,
  channel_id: world.channelId,
  customer: { name: 'Client' },
  items,
  expires_at: Date.now() + 3_600_000,
  ...extra,
});

/** Holds the stock lock of `sku` from another connection until `release`. */
async function holdStockLock(sku: string) {
  blocker = new pg.Client({ connectionString: t.databaseUrl });
  await blocker.connect();
  await blocker.query('BEGIN');
  await blocker.query('SELECT stock_lock($1, ARRAY[$2]::uuid[], ARRAY[$3]::uuid[])', [
    world.tenant.id,
    world.catalog.productIds.get(sku)!,
    world.warehouseId,
  ]);
  const pid = (blocker as unknown as { processID: number }).processID;
  return {
    /** Backends other than the holder waiting on an advisory lock. */
    waiting: async () =>
      (
        await sql<{ pid: number }>(
          t.databaseUrl,
          `SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' AND wait_event = 'advisory' AND pid <> $1 ORDER BY pid`,
          [pid],
        )
      ).map((row) => row.pid),
    release: async () => {
      await blocker!.query('ROLLBACK');
      await blocker!.end();
      blocker = undefined;
    },
  };
}

/** Polls `read` until `done` holds of its value (at most ~5 s). */
async function until<T>(read: () => Promise<T>, done: (value: T) => boolean): Promise<T> {
  let value = await read();
  for (let attempt = 0; attempt < 200 && !done(value); attempt += 1) {
    await new Promise((resolve) => setTimeout(resolve, 25));
    value = await read();
  }
  return value;
}

const outcome = (response: Awaited<ReturnType<typeof graphql>>) => {
  const error = response.body.errors?.[0];
  return error
    ? `${error.extensions?.code}${error.extensions?.field ? ` ${error.extensions.field}` : ''}: ${error.message}`
    : 'ok';
};

beforeAll(async () => {
  world = await createStockWorld(t, 'Batched reservations tenant', 4);
});

// A failed test must not leave the lock held for the next one.
afterEach(async () => {
  await blocker?.end();
  blocker = undefined;
});

describe('batched reservations', () => {
  it('answers every reservation of a batch on its own, each against what the earlier ones left', async () => {
    await addStock(t, world, 'SKU-1', 10);
    const taken = (await graphqlData(t, world.tenant.key, CREATE, { input: input([{ sku: 'SKU-1', quantity: 1 }]) }))
      .createReservation.reservation.id;
    const lock = await holdStockLock('SKU-1');
    const clientId = '0190f5b4-1c5e-7000-8000-00000000b001';
    const pending = [
      ...[1, 2, 3].map(() => input([{ sku: 'SKU-1', quantity: 4 }])),
      input([{ sku: 'SKU-1', quantity: 1 }], { id: clientId }),
      input([{ sku: 'SKU-1', quantity: 1 }], { id: clientId }),
      input([{ sku: 'SKU-1', quantity: 1 }], { id: taken }),
      input([{ sku: 'SKU-1', quantity: 1 }], { channel_id: '0190f5b4-1c5e-7000-8000-00000000b0ff' }),
    ].map((request) => graphql(t, world.tenant.key, CREATE, { input: request }));
    // One statement waits on the lock; the other six wait in the service, not in the database.
    expect(await until(lock.waiting, (pids) => pids.length >= 1)).toHaveLength(1);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(await lock.waiting()).toHaveLength(1);
    await lock.release();

    const outcomes = (await Promise.all(pending)).map(outcome);
    const big = outcomes.slice(0, 3);
    expect(big.filter((o) => o === 'ok')).toHaveLength(2);
    expect(big.filter((o) => o !== 'ok')).toEqual([
      expect.stringMatching(
        /^OUT_OF_STOCK input\.items\[0\]\.quantity: .*out of stock: SKU "SKU-1" has [12] available .*, 4 requested$/,
      ),
    ]);
    expect(outcomes.slice(3, 5).sort()).toEqual([
      expect.stringMatching(new RegExp(`^ID_TAKEN: .*a reservation with id "${clientId}" already exists$`)),
      'ok',
    ]);
    expect(outcomes[5]).toMatch(new RegExp(`^ID_TAKEN: .*a reservation with id "${taken}" already exists$`));
    expect(outcomes[6]).toMatch(/^VALIDATION_ERROR input\.channel_id: /);
    expect(await levels(t, world, 'SKU-1')).toMatchObject({ quantity: 10, available: 0, reserved: 10 });
    const [count] = await sql<{ n: number }>(
      t.databaseUrl,
      'SELECT count(*)::int AS n FROM reservations WHERE tenant_id = $1',
      [world.tenant.id],
    );
    expect(count!.n).toBe(4);
    await expectStockInvariants(t, world.tenant.id);
  });

  it('takes each reservation of a batch from the lines in allocation order, continuing where the previous one stopped', async () => {
    await addStock(t, world, 'SKU-3', 2, { position: 'A-01' });
    await addStock(t, world, 'SKU-3', 3, { position: 'A-02' });
    await addStock(t, world, 'SKU-3', 5);
    const lock = await holdStockLock('SKU-3');
    const send = (quantity: number) =>
      graphql(t, world.tenant.key, CREATE, { input: input([{ sku: 'SKU-3', quantity }]) });
    // The first occupies the one statement allowed per SKU; the next four queue, in arrival order,
    // and go as one batch.
    const first = [send(1)];
    expect(await until(lock.waiting, (pids) => pids.length === 1)).toHaveLength(1);
    const second = send(1);
    await new Promise((resolve) => setTimeout(resolve, 100));
    const batch = [second, send(3), send(3), send(3)];
    await new Promise((resolve) => setTimeout(resolve, 100));
    await lock.release();
    const responses = await Promise.all([...first, ...batch]);
    expect(responses.map(outcome).sort()).toEqual([
      expect.stringMatching(
        /^OUT_OF_STOCK input\.items\[0\]\.quantity: .*out of stock: SKU "SKU-3" has 2 available .*, 3 requested$/,
      ),
      'ok',
      'ok',
      'ok',
      'ok',
    ]);
    // A-01 (2), then A-02 (3), then the line without a position (5): 1 + 1 + 3 + 3 = 8 units taken in that order.
    const held = await sql<{ reservation: string; position: string | null; quantity: number }>(
      t.databaseUrl,
      `SELECT a.reservation_id AS reservation, p.code AS position, a.quantity::int AS quantity
         FROM stock_allocations a LEFT JOIN positions p ON p.id = a.position_id
        WHERE a.tenant_id = $1 AND a.product_id = $2 ORDER BY a.reservation_id, p.code NULLS LAST`,
      [world.tenant.id, world.catalog.productIds.get('SKU-3')],
    );
    const byReservation = new Map<string, string[]>();
    for (const row of held)
      byReservation.set(row.reservation, [
        ...(byReservation.get(row.reservation) ?? []),
        `${row.position ?? '-'}:${row.quantity}`,
      ]);
    expect([...byReservation.values()].map((lines) => lines.join(' ')).sort()).toEqual([
      '-:3',
      'A-01:1',
      'A-01:1',
      'A-02:3',
    ]);
    expect(await levels(t, world, 'SKU-3')).toMatchObject({ quantity: 10, available: 2, reserved: 8 });
    await expectStockInvariants(t, world.tenant.id);
  });

  it('fails every reservation of a batch whose statement is cut off with a retryable error, and writes none of them', async () => {
    await addStock(t, world, 'SKU-2', 20);
    const before = await operationsSnapshot(t, world.tenant.id);
    const lock = await holdStockLock('SKU-2');
    const send = () => graphql(t, world.tenant.key, CREATE, { input: input([{ sku: 'SKU-2', quantity: 1 }]) });
    const first = [send()];
    const firstWaiting = await until(lock.waiting, (pids) => pids.length === 1);
    expect(firstWaiting).toHaveLength(1);
    const batch = Array.from({ length: 6 }, send);
    // The six queue behind the first; cutting it off sends the six as one statement.
    await new Promise((resolve) => setTimeout(resolve, 100));
    for (const pid of firstWaiting) await sql(t.databaseUrl, 'SELECT pg_terminate_backend($1)', [pid]);
    const batchWaiting = await until(lock.waiting, (pids) => pids.length === 1 && !firstWaiting.includes(pids[0]!));
    expect(batchWaiting).toHaveLength(1);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(await lock.waiting()).toEqual(batchWaiting);
    await sql(t.databaseUrl, 'SELECT pg_terminate_backend($1)', [batchWaiting[0]]);
    const outcomes = (await Promise.all([...first, ...batch])).map(outcome);
    await lock.release();
    expect(outcomes).toEqual(
      Array(7).fill(
        expect.stringMatching(
          /^WRITE_INTERRUPTED: .*the write was interrupted before it committed and changed nothing; send it again/,
        ),
      ),
    );
    expect(await operationsSnapshot(t, world.tenant.id)).toEqual(before);
    // Sent again, they all succeed.
    expect((await Promise.all(Array.from({ length: 7 }, send))).map(outcome)).toEqual(Array(7).fill('ok'));
    expect(await levels(t, world, 'SKU-2')).toMatchObject({ available: 13, reserved: 7 });
    await expectStockInvariants(t, world.tenant.id);
  });
});
