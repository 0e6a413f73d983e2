/**
 * Every path that allocates stock applies the same rules, because each rule has one
 * implementation, in the database (src/modules/stock/sql): the stock lock, the allocation walk
 * (`stock_allocate`: first expired, first out), how units join a line (the merge), and the queueing
 * of broadcasts after a ledger write. Reservations go through the batched `reserve_stock_batch`,
 * orders through the stock module's `commit` verb; both walk with `stock_allocate`, so from
 * identical stock both must take the same units from the same lines and leave the same lines
 * (RESERVED for one, COMMITTED for the other), ledgers and broadcasts.
 */
import pg from 'pg';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp } from '../helpers/app';
import { sql } from '../helpers/db';
import { createStockWorld, expectStockInvariants, type StockWorld } from './orders.fixtures';
import { graphqlData } from './stock.fixtures';

const t = await startTestApp();
let world: StockWorld;
let blocker: pg.Client | undefined;

const RESERVE = `mutation($input: CreateReservationInput!) { createReservation(input: $input) { reservation { id } } }`;
const ORDER = `mutation($input: CreateOrderInput!) { createOrder(input: $input) { order { id } } }`;
const DAY = 86_400_000;
const EXPIRY = Date.UTC(2031, 0, 1);

const target = (sku: string, quantity: number) => ({
  business_id: world.catalog.businessId,
  warehouse_id: world.warehouseId,
  channel_id: world.channelId,
  items: [{ sku, quantity }],
});
const reserve = (sku: string, quantity: number, idempotencyKey?: string) =>
  graphqlData(t, world.tenant.key, RESERVE, {
    input: {
      ...target(sku, quantity),
      customer: { name: 'Client' },
      expires_at: Date.now() + 3_600_000,
      ...(idempotencyKey ? { idempotency_key: idempotencyKey } : {}),
    },
  });
const order = (sku: string, quantity: number) =>
  graphqlData(t, world.tenant.key, ORDER, { input: target(sku, quantity) });

/** The same five lines for a SKU: expiries out of order, one without expiry, attributes on some. */
async function stockUp(sku: string) {
  const line = (quantity: number, extra: Record<string, unknown>) => ({
    sku,
    quantity,
    warehouseId: world.warehouseId,
    businessId: world.catalog.businessId,
    ...extra,
  });
  const response = await t.rest.post('/api/inventory/items', {
    token: world.tenant.key,
    body: {
      data: [
        line(4, { batchNumber: 'LATE', expiresAt: EXPIRY + 30 * DAY, cost: { amount: 300, currency: 'EUR' } }),
        line(2, { batchNumber: 'NONE' }),
        line(3, {
          batchNumber: 'EARLY',
          expiresAt: EXPIRY,
          gtin: ['4006381333931'],
          weight: { amount: 2, unit: 'kg' },
        }),
        line(5, { batchNumber: 'MID', expiresAt: EXPIRY + 10 * DAY, position: 'A-01' }),
        line(1, { batchNumber: 'MID', expiresAt: EXPIRY + 10 * DAY }),
      ],
    },
  });
  expect(response.status, JSON.stringify(response.body)).toBe(201);
}

/** What a SKU's reservations hold and its lines are, without ids: comparable across SKUs. */
async function outcomeOf(sku: string) {
  const productId = world.catalog.productIds.get(sku)!;
  const held = `CASE WHEN state IN ('RESERVED', 'COMMITTED') THEN 'HELD' ELSE state::text END`;
  const allocations = await sql<{ holder: string; line: string }>(
    t.databaseUrl,
    `SELECT coalesce(a.reservation_id, a.order_item_id) AS holder,
            concat_ws(' ', a.batch_number, coalesce(p.code, '-'), a.expires_at::date, ${held.replaceAll('state', 'a.state')},
                      a.quantity) AS line
       FROM stock_allocations a LEFT JOIN positions p ON p.id = a.position_id
      WHERE a.tenant_id = $1 AND a.product_id = $2 ORDER BY a.id`,
    [world.tenant.id, productId],
  );
  const byReservation = new Map<string, string[]>();
  for (const row of allocations) byReservation.set(row.holder, [...(byReservation.get(row.holder) ?? []), row.line]);
  const lines = await sql<{ line: string }>(
    t.databaseUrl,
    `SELECT concat_ws(' ', i.batch_number, coalesce(p.code, '-'), i.expires_at::date, ${held.replaceAll('state', 'i.state')}, i.quantity,
                      i.cost_amount,
                      i.cost_currency, i.gtin::text, i.weight_amount, i.weight_unit) AS line
       FROM inventory_items i LEFT JOIN positions p ON p.id = i.position_id
      WHERE i.tenant_id = $1 AND i.product_id = $2 ORDER BY line`,
    [world.tenant.id, productId],
  );
  const ledger = await sql<{ row: string }>(
    t.databaseUrl,
    `SELECT concat_ws(' ', m.source, m.status, m.delta, m.new_quantity) AS row
       FROM stock_mutations m WHERE m.tenant_id = $1 AND m.product_id = $2 ORDER BY m.sequence`,
    [world.tenant.id, productId],
  );
  const broadcasts = await sql<{ n: number }>(
    t.databaseUrl,
    `SELECT count(*)::int AS n FROM stock_broadcasts b JOIN stock_mutations m ON m.id = b.mutation_id
      WHERE m.tenant_id = $1 AND m.product_id = $2`,
    [world.tenant.id, productId],
  );
  // Each reservation's lines sorted, reservations by the units they hold (ids order nothing here).
  const units = (held: string[]) => held.reduce((sum, line) => sum + Number(line.split(' ').at(-1)), 0);
  return {
    allocations: [...byReservation.values()].map((held) => held.sort()).sort((a, b) => units(a) - units(b)),
    lines: lines.map((row) => row.line),
    ledger: ledger.map((row) => row.row),
    broadcasts: broadcasts[0]!.n,
  };
}

beforeAll(async () => {
  world = await createStockWorld(t, 'Stock rules tenant', 4);
  // A channel with a webhook: every ledger row is queued for it, whichever path wrote the row.
  await sql(
    t.databaseUrl,
    `INSERT INTO channel_webhooks (tenant_id, channel_id, url, secret)
     VALUES ($1, $2, 'https://hooks.example.com/stock', 'secret')`,
    [world.tenant.id, world.channelId],
  );
});

afterEach(async () => {
  await blocker?.end();
  blocker = undefined;
});

describe('one implementation of each stock rule', () => {
  it('leaves identical allocations, lines, ledger and broadcasts through the batched and the service path', async () => {
    await stockUp('SKU-1');
    await stockUp('SKU-2');
    // 2 + 4 + 6 = 12 of 15 units: the first takes part of the earliest line, the next ones span lines.
    for (const [index, quantity] of [2, 4, 6].entries()) {
      await reserve('SKU-1', quantity, index === 0 ? undefined : `rules-${index}`);
      await order('SKU-2', quantity);
    }
    const batched = await outcomeOf('SKU-1');
    const service = await outcomeOf('SKU-2');
    expect(batched).toEqual(service);
    // First expired, first out; among equal expiries the line with a position first; no expiry last.
    expect(batched.allocations).toEqual([
      ['EARLY - 2031-01-01 HELD 2'],
      ['EARLY - 2031-01-01 HELD 1', 'MID A-01 2031-01-11 HELD 3'],
      ['LATE - 2031-01-31 HELD 3', 'MID - 2031-01-11 HELD 1', 'MID A-01 2031-01-11 HELD 2'],
    ]);
    // Units joining a RESERVED line keep the attributes of the line they came from.
    expect(batched.lines).toContain('EARLY - 2031-01-01 HELD 3 {4006381333931} 2 kg');
    expect(batched.lines).toContain('LATE - 2031-01-31 HELD 3 300 EUR');
    expect(batched.lines).toContain('MID A-01 2031-01-11 HELD 5');
    expect(batched.ledger.filter((row) => row.startsWith('ALLOCATION'))).toHaveLength(6);
    expect(batched.broadcasts).toBe(batched.ledger.length);
    await expectStockInvariants(t, world.tenant.id);
  });

  it('takes the same stock lock on both paths: an order waits while the lock the batches take is held', async () => {
    const productId = world.catalog.productIds.get('SKU-3')!;
    await t.rest.post('/api/inventory/items', {
      token: world.tenant.key,
      body: {
        data: [{ sku: 'SKU-3', quantity: 5, warehouseId: world.warehouseId, businessId: world.catalog.businessId }],
      },
    });
    blocker = new pg.Client({ connectionString: t.databaseUrl });
    await blocker.connect();
    await blocker.query('BEGIN');
    await blocker.query('SELECT stock_lock($1, ARRAY[$2]::uuid[], ARRAY[$3]::uuid[])', [
      world.tenant.id,
      productId,
      world.warehouseId,
    ]);
    let done = false;
    const pending = order('SKU-3', 1).then(() => (done = true));
    let waiting: unknown[] = [];
    for (let attempt = 0; attempt < 200 && waiting.length === 0; attempt += 1) {
      await new Promise((resolve) => setTimeout(resolve, 25));
      waiting = await sql(
        t.databaseUrl,
        `SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' AND wait_event = 'advisory'`,
      );
    }
    expect(waiting).toHaveLength(1);
    expect(done).toBe(false);
    await blocker.query('ROLLBACK');
    await pending;
    expect(done).toBe(true);
  });
});
