/**
 * REST inventory writes (`/api/inventory/items`): adding, correcting and removing lines, merging
 * identical lines, the REGISTER/CORRECTION ledger entries they write, and idempotent retries.
 * Rejected input lives in inventory.errors.test.ts, concurrency and the ledger invariant in
 * stock.ledger.test.ts.
 */
import pg from 'pg';
import { beforeAll, describe, expect, it } from 'vitest';
import { createTenant, startTestApp, type Tenant } from '../helpers/app';
import { sql } from '../helpers/db';
import { createCatalog, expectLedgerExplainsStock, stockSnapshot, type Catalog } from './stock.fixtures';

const t = await startTestApp();
const { rest } = t;
const ITEMS = '/api/inventory/items';

let tenant: Tenant;
let catalog: Catalog;

beforeAll(async () => {
  tenant = await createTenant(rest, 'Stock tenant');
  catalog = await createCatalog(t, tenant.key);
});

const post = (data: unknown[], headers?: Record<string, string>, token = tenant.key) =>
  rest.post(ITEMS, { token, body: { data }, headers });
const patch = (data: unknown[], headers?: Record<string, string>, token = tenant.key) =>
  rest.request('PATCH', ITEMS, { token, body: { data }, headers });
const item = (sku: string, extra: Record<string, unknown> = {}) => ({
  sku,
  warehouseId: catalog.warehouseIds[0],
  businessId: catalog.businessId,
  ...extra,
});

async function mutationsOf(lineId: string) {
  return sql<{
    source: string;
    delta: string;
    new_quantity: string;
    actor_type: string;
    references: { type: string; id: string }[];
  }>(
    t.databaseUrl,
    `SELECT source::text, delta::text, new_quantity::text, actor_type, "references" FROM stock_mutations WHERE inventory_item_id = $1 ORDER BY sequence`,
    [lineId],
  );
}

describe('POST /api/inventory/items', () => {
  it('adds stock and answers 201 with the resulting lines', async () => {
    const response = await post([
      item('SKU-1', {
        quantity: 5,
        position: 'A-01',
        gtin: ['8700000000011'],
        rfid: 'E200-1',
        cost: { amount: 1250, currency: 'EUR' },
        batchNumber: 'B-2025-01',
        serialNumber: 'SN-1',
        weight: { amount: 0.25, unit: 'kg' },
        expiresAt: 1_893_456_000_000,
      }),
    ]);
    expect(response.status, response.rawBody).toBe(201);
    expect(response.body.page).toBeNull();
    const [line] = response.body.data;
    expect(line).toMatchObject({
      sku: 'SKU-1',
      warehouseId: catalog.warehouseIds[0],
      businessId: catalog.businessId,
      position: 'A-01',
      quantity: 5,
      state: 'AVAILABLE',
      reason: null,
      gtin: ['8700000000011'],
      rfid: 'E200-1',
      cost: { amount: 1250, currency: 'EUR' },
      batchNumber: 'B-2025-01',
      serialNumber: 'SN-1',
      weight: { amount: 0.25, unit: 'kg' },
      expiresAt: 1_893_456_000_000,
    });
    expect(typeof line.createdAt).toBe('number');
    const mutations = await mutationsOf(line.id);
    expect(mutations).toHaveLength(1);
    expect(mutations[0]).toMatchObject({ source: 'REGISTER', delta: '5', new_quantity: '5', actor_type: 'api_key' });
    expect(mutations[0]!.references).toEqual([{ type: 'InventoryList', id: expect.any(String) }]);
  });

  it('defaults to one unit, AVAILABLE, no position; unavailable stock keeps its reason', async () => {
    const response = await post([
      item('SKU-2'),
      item('SKU-2', { state: 'UNAVAILABLE', reason: 'BROKEN', quantity: 2 }),
      item('SKU-2', { state: 'UNAVAILABLE' }),
    ]);
    expect(response.status, response.rawBody).toBe(201);
    expect(response.body.data.map((l: any) => [l.quantity, l.state, l.reason, l.position])).toEqual([
      [1, 'AVAILABLE', null, null],
      [2, 'UNAVAILABLE', 'BROKEN', null],
      [1, 'UNAVAILABLE', 'NONE', null],
    ]);
  });

  it('merges entries with the same identity, within a request and with an existing line', async () => {
    const first = await post([
      item('SKU-3', { quantity: 2, batchNumber: 'L1' }),
      item('SKU-3', { quantity: 3, batchNumber: 'L1' }),
    ]);
    expect(first.status, first.rawBody).toBe(201);
    expect(first.body.data).toHaveLength(1);
    expect(first.body.data[0].quantity).toBe(5);
    const lineId = first.body.data[0].id;

    const second = await post([
      item('SKU-3', { quantity: 4, batchNumber: 'L1', rfid: 'TAG' }),
      item('SKU-3', { quantity: 1, batchNumber: 'L2' }),
    ]);
    expect(second.status, second.rawBody).toBe(201);
    expect(second.body.data.map((l: any) => [l.id === lineId, l.quantity, l.batchNumber, l.rfid])).toEqual([
      [true, 9, 'L1', 'TAG'],
      [false, 1, 'L2', null],
    ]);
    // One REGISTER per affected line and request; new_quantity is the SKU's total at the warehouse.
    expect((await mutationsOf(lineId)).map((m) => [m.delta, m.new_quantity])).toEqual([
      ['5', '5'],
      ['4', '9'],
    ]);
    expect((await mutationsOf(second.body.data[1].id)).map((m) => [m.delta, m.new_quantity])).toEqual([['1', '10']]);
    await expectLedgerExplainsStock(t, tenant.id);
  });

  it('keeps lines apart when any identity attribute differs', async () => {
    const base = { quantity: 1, batchNumber: 'X', serialNumber: 'S', expiresAt: 1_900_000_000_000, position: 'A-02' };
    const response = await post([
      item('SKU-1', base),
      item('SKU-1', { ...base, batchNumber: 'Y' }),
      item('SKU-1', { ...base, serialNumber: 'T' }),
      item('SKU-1', { ...base, expiresAt: 1_900_000_000_001 }),
      item('SKU-1', { ...base, position: 'B-01' }),
      item('SKU-1', { ...base, state: 'UNAVAILABLE' }),
      item('SKU-1', { ...base, state: 'UNAVAILABLE', reason: 'BROKEN' }),
      item('SKU-1', { ...base, warehouseId: catalog.warehouseIds[1], position: 'A-01' }),
      item('SKU-2', base),
      item('SKU-1', base),
    ]);
    expect(response.status, response.rawBody).toBe(201);
    expect(response.body.data).toHaveLength(9);
    expect(new Set(response.body.data.map((l: any) => l.id)).size).toBe(9);
    expect(response.body.data[0].quantity).toBe(2);
  });
});

describe('PATCH /api/inventory/items', () => {
  it('replaces the given fields, answers 200 with the lines and writes CORRECTION mutations', async () => {
    const created = (
      await post([
        item('SKU-1', { quantity: 10, batchNumber: 'P1', rfid: 'R1', cost: { amount: 100, currency: 'EUR' } }),
      ])
    ).body.data[0];
    const response = await patch([
      { id: created.id, quantity: 7, position: 'B-01', rfid: null, cost: { amount: 90, currency: 'USD' } },
    ]);
    expect(response.status, response.rawBody).toBe(200);
    expect(response.body.page).toBeNull();
    expect(response.body.data).toEqual([
      expect.objectContaining({
        id: created.id,
        quantity: 7,
        position: 'B-01',
        rfid: null,
        batchNumber: 'P1',
        cost: { amount: 90, currency: 'USD' },
      }),
    ]);
    expect((await mutationsOf(created.id)).map((m) => [m.source, m.delta])).toEqual([
      ['REGISTER', '10'],
      ['CORRECTION', '-3'],
    ]);
    await expectLedgerExplainsStock(t, tenant.id);
  });

  it('marks a line unavailable with a reason, and available again without one', async () => {
    const created = (await post([item('SKU-2', { quantity: 3, batchNumber: 'U1' })])).body.data[0];
    const broken = await patch([{ id: created.id, state: 'UNAVAILABLE', reason: 'BROKEN' }]);
    expect(broken.status, broken.rawBody).toBe(200);
    expect(broken.body.data[0]).toMatchObject({ id: created.id, state: 'UNAVAILABLE', reason: 'BROKEN', quantity: 3 });
    const available = await patch([{ id: created.id, state: 'AVAILABLE' }]);
    expect(available.body.data[0]).toMatchObject({ id: created.id, state: 'AVAILABLE', reason: null, quantity: 3 });
    expect((await mutationsOf(created.id)).map((m) => [m.source, m.delta])).toEqual([
      ['REGISTER', '3'],
      ['CORRECTION', '0'],
      ['CORRECTION', '0'],
    ]);
  });

  it('merges a line into the line it comes to equal, keeping the total', async () => {
    const [a, b] = (
      await post([
        item('SKU-3', { quantity: 2, batchNumber: 'M1', position: 'A-01' }),
        item('SKU-3', { quantity: 5, batchNumber: 'M1', position: 'A-02' }),
      ])
    ).body.data;
    const response = await patch([{ id: a.id, position: 'A-02' }]);
    expect(response.status, response.rawBody).toBe(200);
    expect(response.body.data).toEqual([expect.objectContaining({ id: b.id, quantity: 7, position: 'A-02' })]);
    expect(await sql(t.databaseUrl, 'SELECT id FROM inventory_items WHERE id = $1', [a.id])).toEqual([]);
    await expectLedgerExplainsStock(t, tenant.id);
  });

  it('applies entries in order and returns each resulting line once', async () => {
    const [a, b] = (
      await post([item('SKU-3', { quantity: 1, batchNumber: 'O1' }), item('SKU-3', { quantity: 1, batchNumber: 'O2' })])
    ).body.data;
    const response = await patch([
      { id: a.id, batchNumber: 'O2' },
      { id: b.id, quantity: 10 },
    ]);
    expect(response.status, response.rawBody).toBe(200);
    expect(response.body.data).toEqual([expect.objectContaining({ id: b.id, quantity: 10, batchNumber: 'O2' })]);
    await expectLedgerExplainsStock(t, tenant.id);
  });
});

describe('DELETE /api/inventory/items', () => {
  it('removes one line with filter[id][eq], answering 204, and books the quantity off', async () => {
    const created = (await post([item('SKU-1', { quantity: 4, batchNumber: 'D1' })])).body.data[0];
    const response = await rest.delete(`${ITEMS}?filter[id][eq]=${created.id}`, { token: tenant.key });
    expect(response.status, response.rawBody).toBe(204);
    expect(response.rawBody).toBe('');
    expect(await sql(t.databaseUrl, 'SELECT id FROM inventory_items WHERE id = $1', [created.id])).toEqual([]);
    expect((await mutationsOf(created.id)).map((m) => [m.source, m.delta])).toEqual([
      ['REGISTER', '4'],
      ['CORRECTION', '-4'],
    ]);
    await expectLedgerExplainsStock(t, tenant.id);
  });

  it('removes several lines with filter[id][in]', async () => {
    const lines = (
      await post([
        item('SKU-2', { batchNumber: 'D2' }),
        item('SKU-2', { batchNumber: 'D3' }),
        item('SKU-2', { batchNumber: 'D4' }),
      ])
    ).body.data;
    const response = await rest.delete(`${ITEMS}?filter[id][in]=${lines[0].id},${lines[2].id}`, { token: tenant.key });
    expect(response.status, response.rawBody).toBe(204);
    const left = await sql<{ id: string }>(t.databaseUrl, 'SELECT id FROM inventory_items WHERE id = ANY($1)', [
      lines.map((l: any) => l.id),
    ]);
    expect(left.map((row) => row.id)).toEqual([lines[1].id]);
    await expectLedgerExplainsStock(t, tenant.id);
  });

  it('names in its 404 only the lines another write removed meanwhile, not those it deleted itself, and keeps them', async () => {
    const [kept, taken] = (await post([item('SKU-3', { batchNumber: 'D5' }), item('SKU-3', { batchNumber: 'D6' })]))
      .body.data;
    // Hold the SKU's stock lock: the DELETE reads both lines, then waits for the lock.
    const blocker = new pg.Client({ connectionString: t.databaseUrl });
    await blocker.connect();
    try {
      await blocker.query('BEGIN');
      await blocker.query('SELECT stock_lock($1, ARRAY[$2]::uuid[], ARRAY[$3]::uuid[])', [
        tenant.id,
        catalog.productIds.get('SKU-3'),
        catalog.warehouseIds[0],
      ]);
      const pending = rest.delete(`${ITEMS}?filter[id][in]=${kept.id},${taken.id}`, { token: tenant.key });
      for (let attempt = 0; attempt < 200; attempt += 1) {
        const waiting = await sql(
          t.databaseUrl,
          `SELECT 1 FROM pg_stat_activity WHERE datname = current_database() AND wait_event = 'advisory'`,
        );
        if (waiting.length > 0) break;
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
      // Another writer removes one of the two lines, then lets the DELETE go on.
      await blocker.query('DELETE FROM inventory_items WHERE id = $1', [taken.id]);
      await blocker.query('COMMIT');
      const response = await pending;
      expect(response.status, response.rawBody).toBe(404);
      expect(response.body.error.message).toContain(`"${taken.id}"`);
      expect(response.body.error.message).not.toContain(`"${kept.id}"`);
    } finally {
      await blocker.end();
    }
    // Rejected: the line it had deleted is back, with no ledger row for it.
    expect(await sql(t.databaseUrl, 'SELECT id FROM inventory_items WHERE id = $1', [kept.id])).toHaveLength(1);
    expect((await mutationsOf(kept.id)).map((m) => m.source)).toEqual(['REGISTER']);
  });
});

describe('Idempotency-Key', () => {
  it('replays the first response of a POST without adding twice', async () => {
    const body = [item('SKU-1', { quantity: 3, batchNumber: 'I1' })];
    const first = await post(body, { 'Idempotency-Key': 'add-I1' });
    expect(first.status, first.rawBody).toBe(201);
    const before = await stockSnapshot(t, tenant.id);
    const again = await post([{ ...body[0], batchNumber: 'I1' }], { 'Idempotency-Key': 'add-I1' });
    expect(again.status).toBe(201);
    expect(again.body).toEqual(first.body);
    expect(await stockSnapshot(t, tenant.id)).toEqual(before);
  });

  it('replays the first response of a PATCH without correcting twice', async () => {
    const created = (await post([item('SKU-1', { quantity: 3, batchNumber: 'I2' })])).body.data[0];
    const first = await patch([{ id: created.id, quantity: 1 }], { 'Idempotency-Key': 'count-I2' });
    expect(first.status, first.rawBody).toBe(200);
    const before = await stockSnapshot(t, tenant.id);
    const again = await patch([{ id: created.id, quantity: 1 }], { 'Idempotency-Key': 'count-I2' });
    expect(again.status).toBe(200);
    expect(again.body).toEqual(first.body);
    expect(await stockSnapshot(t, tenant.id)).toEqual(before);
  });

  it('refuses the same key with another body with 422, changing nothing', async () => {
    await post([item('SKU-1', { quantity: 1, batchNumber: 'I3' })], { 'Idempotency-Key': 'add-I3' });
    const before = await stockSnapshot(t, tenant.id);
    const other = await post([item('SKU-1', { quantity: 2, batchNumber: 'I3' })], { 'Idempotency-Key': 'add-I3' });
    expect(other.status, other.rawBody).toBe(422);
    expect(other.body.error.code).toBe(422);
    expect(other.body.error.message).toMatch(/^Unprocessable entity: .*Idempotency-Key "add-I3"/);
    const viaPatch = await patch([{ id: '00000000-0000-7000-8000-000000000000', quantity: 1 }], {
      'Idempotency-Key': 'add-I3',
    });
    expect(viaPatch.status, viaPatch.rawBody).toBe(422);
    expect(await stockSnapshot(t, tenant.id)).toEqual(before);
  });

  it('stores nothing for a rejected request, so the corrected request can reuse the key', async () => {
    const rejected = await post([item('NO-SUCH-SKU')], { 'Idempotency-Key': 'retry-me' });
    expect(rejected.status).toBe(400);
    const accepted = await post([item('SKU-2', { batchNumber: 'I4' })], { 'Idempotency-Key': 'retry-me' });
    expect(accepted.status, accepted.rawBody).toBe(201);
  });

  it('scopes keys per tenant', async () => {
    const other = await createTenant(rest, 'Other stock tenant');
    const otherCatalog = await createCatalog(t, other.key);
    await post([item('SKU-1', { batchNumber: 'I5' })], { 'Idempotency-Key': 'shared-key' });
    const response = await post(
      [{ sku: 'SKU-1', warehouseId: otherCatalog.warehouseIds[0], businessId: otherCatalog.businessId, quantity: 6 }],
      { 'Idempotency-Key': 'shared-key' },
      other.key,
    );
    expect(response.status, response.rawBody).toBe(201);
    expect(response.body.data[0]).toMatchObject({ quantity: 6, warehouseId: otherCatalog.warehouseIds[0] });
  });

  it('answers concurrent repeats once', async () => {
    const body = [item('SKU-3', { quantity: 2, batchNumber: 'I6' })];
    const responses = await Promise.all(Array.from({ length: 8 }, () => post(body, { 'Idempotency-Key': 'burst' })));
    expect(responses.map((r) => r.status)).toEqual(Array(8).fill(201));
    for (const response of responses) expect(response.body).toEqual(responses[0]!.body);
    const [line] = await sql<{ quantity: string }>(
      t.databaseUrl,
      `SELECT quantity::text FROM inventory_items WHERE batch_number = 'I6'`,
    );
    expect(line!.quantity).toBe('2');
  });

  it('refuses a malformed key', async () => {
    const response = await post([item('SKU-1')], { 'Idempotency-Key': 'has space' });
    expect(response.status, response.rawBody).toBe(400);
    expect(response.body.error.details[0].field).toMatch(/Idempotency-Key/i);
  });
});
