/**
 * The stock ledger under load: concurrent writers of the same line never lose a unit, every
 * change writes exactly one mutation, and over random sequences of REST writes the ledger always
 * explains the stock (the deltas of a SKU at a warehouse sum to its on-hand quantity, and each
 * `new_quantity` follows from the one before). The ledger is append-only.
 */
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { createTenant, startTestApp, type Tenant } from '../helpers/app';
import { sql } from '../helpers/db';
import { createCatalog, expectLedgerExplainsStock, type Catalog } from './stock.fixtures';

const t = await startTestApp();
const { rest } = t;
const ITEMS = '/api/inventory/items';

let tenant: Tenant;
let catalog: Catalog;

beforeAll(async () => {
  tenant = await createTenant(rest, 'Ledger tenant');
  catalog = await createCatalog(t, tenant.key);
});

async function onHand(sku: string, warehouseId: string) {
  const [row] = await sql<{ total: string }>(
    t.databaseUrl,
    `SELECT coalesce(sum(i.quantity), 0)::text AS total FROM inventory_items i JOIN products p ON p.id = i.product_id
      WHERE i.tenant_id = $1 AND p.sku = $2 AND i.warehouse_id = $3`,
    [tenant.id, sku, warehouseId],
  );
  return Number(row!.total);
}

describe('concurrent writers', () => {
  it('50 parallel POSTs of one unit to the same line add exactly 50', async () => {
    const entry = {
      sku: 'SKU-1',
      warehouseId: catalog.warehouseIds[1],
      businessId: catalog.businessId,
      quantity: 1,
      batchNumber: 'HOT',
    };
    const responses = await Promise.all(
      Array.from({ length: 50 }, () => rest.post(ITEMS, { token: tenant.key, body: { data: [entry] } })),
    );
    expect(responses.map((r) => r.status)).toEqual(Array(50).fill(201));
    const ids = new Set(responses.map((r) => r.body.data[0].id));
    expect(ids.size).toBe(1);
    const [line] = await sql<{ quantity: string }>(
      t.databaseUrl,
      'SELECT quantity::text FROM inventory_items WHERE id = $1',
      [[...ids][0]],
    );
    expect(line!.quantity).toBe('50');
    const mutations = await sql<{ new_quantity: string }>(
      t.databaseUrl,
      'SELECT new_quantity::text FROM stock_mutations WHERE inventory_item_id = $1 ORDER BY sequence',
      [[...ids][0]],
    );
    // Each writer saw the previous one's result: 1, 2, ..., 50 in write order.
    expect(mutations.map((m) => Number(m.new_quantity))).toEqual(Array.from({ length: 50 }, (_, i) => i + 1));
    await expectLedgerExplainsStock(t, tenant.id);
  });

  it('parallel adds, corrections and removals of one SKU keep the ledger exact', async () => {
    const warehouseId = catalog.warehouseIds[0];
    const base = { sku: 'SKU-2', warehouseId, businessId: catalog.businessId };
    const seeded = await rest.post(ITEMS, {
      token: tenant.key,
      body: { data: Array.from({ length: 6 }, (_, i) => ({ ...base, quantity: 10, batchNumber: `C${i}` })) },
    });
    const lineIds: string[] = seeded.body.data.map((l: { id: string }) => l.id);
    const writes = [
      ...Array.from(
        { length: 15 },
        (_, i) => () =>
          rest.post(ITEMS, {
            token: tenant.key,
            body: { data: [{ ...base, quantity: 2, batchNumber: `C${i % 3}`, position: i % 2 ? 'A-01' : undefined }] },
          }),
      ),
      ...lineIds
        .slice(0, 3)
        .map(
          (id, i) => () => rest.request('PATCH', ITEMS, { token: tenant.key, body: { data: [{ id, quantity: i }] } }),
        ),
      () =>
        rest.request('PATCH', ITEMS, { token: tenant.key, body: { data: [{ id: lineIds[3], batchNumber: 'C4' }] } }),
      () => rest.delete(`${ITEMS}?filter[id][eq]=${lineIds[5]}`, { token: tenant.key }),
    ];
    const responses = await Promise.all(writes.map((write) => write()));
    expect(responses.map((r) => r.status).sort()).toEqual([...Array(4).fill(200), ...Array(15).fill(201), 204].sort());
    await expectLedgerExplainsStock(t, tenant.id);
    // Whatever order the writers ran in, the last new_quantity of the SKU is what the table holds.
    const [last] = await sql<{ new_quantity: string }>(
      t.databaseUrl,
      `SELECT new_quantity::text FROM stock_mutations m JOIN products p ON p.id = m.product_id
        WHERE m.tenant_id = $1 AND p.sku = 'SKU-2' AND m.warehouse_id = $2 ORDER BY sequence DESC LIMIT 1`,
      [tenant.id, warehouseId],
    );
    expect(Number(last!.new_quantity)).toBe(await onHand('SKU-2', warehouseId));
  });
});

describe('random sequences of REST writes', () => {
  const skus = ['SKU-1', 'SKU-2', 'SKU-3'];
  const positions = [undefined, 'A-01', 'A-02'];
  const batches = [undefined, 'L1', 'L2'];

  type Operation =
    | {
        kind: 'add';
        entries: {
          sku: number;
          warehouse: number;
          position: number;
          batch: number;
          quantity: number;
          unavailable: boolean;
        }[];
      }
    | { kind: 'correct'; pick: number; quantity?: number; position?: number; batch?: number; unavailable?: boolean }
    | { kind: 'remove'; picks: number[] };

  const operation: fc.Arbitrary<Operation> = fc.oneof(
    {
      weight: 3,
      arbitrary: fc.record({
        kind: fc.constant('add' as const),
        entries: fc.array(
          fc.record({
            sku: fc.nat(2),
            warehouse: fc.nat(1),
            position: fc.nat(2),
            batch: fc.nat(2),
            quantity: fc.nat(20),
            unavailable: fc.boolean(),
          }),
          { minLength: 1, maxLength: 5 },
        ),
      }),
    },
    {
      weight: 2,
      arbitrary: fc.record(
        {
          kind: fc.constant('correct' as const),
          pick: fc.nat(),
          quantity: fc.nat(30),
          position: fc.nat(2),
          batch: fc.nat(2),
          unavailable: fc.boolean(),
        },
        { requiredKeys: ['kind', 'pick'] },
      ),
    },
    {
      weight: 1,
      arbitrary: fc.record({
        kind: fc.constant('remove' as const),
        picks: fc.array(fc.nat(), { minLength: 1, maxLength: 3 }),
      }),
    },
  );

  async function currentLines() {
    return sql<{ id: string; sku: string; warehouse_id: string; quantity: string }>(
      t.databaseUrl,
      `SELECT i.id, p.sku, i.warehouse_id, i.quantity::text FROM inventory_items i JOIN products p ON p.id = i.product_id
        WHERE i.tenant_id = $1 ORDER BY i.id`,
      [tenant.id],
    );
  }

  const totals = (lines: { sku: string; warehouse_id: string; quantity: string }[]) => {
    const map = new Map<string, number>();
    for (const line of lines)
      map.set(
        `${line.sku}@${line.warehouse_id}`,
        (map.get(`${line.sku}@${line.warehouse_id}`) ?? 0) + Number(line.quantity),
      );
    for (const [key, value] of map) if (value === 0) map.delete(key);
    return map;
  };

  it('keep the ledger explaining the stock after every write', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(operation, { minLength: 1, maxLength: 8 }), async (operations) => {
        for (const op of operations) {
          const before = await currentLines();
          const expected = totals(before);
          const bump = (sku: string, warehouseId: string, delta: number) => {
            const key = `${sku}@${warehouseId}`;
            expected.set(key, (expected.get(key) ?? 0) + delta);
            if (expected.get(key) === 0) expected.delete(key);
          };
          if (op.kind === 'add') {
            const data = op.entries.map((e) => ({
              sku: skus[e.sku],
              warehouseId: catalog.warehouseIds[e.warehouse]!,
              businessId: catalog.businessId,
              quantity: e.quantity,
              ...(positions[e.position] && e.warehouse === 0 ? { position: positions[e.position] } : {}),
              ...(batches[e.batch] ? { batchNumber: batches[e.batch] } : {}),
              ...(e.unavailable ? { state: 'UNAVAILABLE' } : {}),
            }));
            const response = await rest.post(ITEMS, { token: tenant.key, body: { data } });
            expect(response.status, response.rawBody).toBe(201);
            for (const entry of data) bump(entry.sku!, entry.warehouseId, entry.quantity);
          } else if (before.length > 0 && op.kind === 'correct') {
            const line = before[op.pick % before.length]!;
            const entry: Record<string, unknown> = { id: line.id };
            if (op.quantity !== undefined) entry.quantity = op.quantity;
            if (op.position !== undefined && line.warehouse_id === catalog.warehouseIds[0])
              entry.position = positions[op.position] ?? null;
            if (op.batch !== undefined) entry.batchNumber = batches[op.batch] ?? null;
            if (op.unavailable !== undefined) entry.state = op.unavailable ? 'UNAVAILABLE' : 'AVAILABLE';
            if (Object.keys(entry).length === 1) entry.quantity = Number(line.quantity);
            const response = await rest.request('PATCH', ITEMS, { token: tenant.key, body: { data: [entry] } });
            expect(response.status, response.rawBody).toBe(200);
            if (entry.quantity !== undefined)
              bump(line.sku, line.warehouse_id, Number(entry.quantity) - Number(line.quantity));
          } else if (before.length > 0 && op.kind === 'remove') {
            const picked = [...new Set(op.picks.map((pick) => before[pick % before.length]!))];
            const response = await rest.delete(`${ITEMS}?filter[id][in]=${picked.map((line) => line.id).join(',')}`, {
              token: tenant.key,
            });
            expect(response.status, response.rawBody).toBe(204);
            for (const line of picked) bump(line.sku, line.warehouse_id, -Number(line.quantity));
          }
          expect(totals(await currentLines())).toEqual(expected);
        }
        await expectLedgerExplainsStock(t, tenant.id);
      }),
      { numRuns: 12 },
    );
  });
});

describe('the ledger', () => {
  it('is append-only: its facts cannot be changed or deleted, its status and messages can', async () => {
    const added = await rest.post(ITEMS, {
      token: tenant.key,
      body: {
        data: [
          { sku: 'SKU-3', warehouseId: catalog.warehouseIds[0], businessId: catalog.businessId, batchNumber: 'APPEND' },
        ],
      },
    });
    const [row] = await sql<{ id: string }>(
      t.databaseUrl,
      'SELECT id FROM stock_mutations WHERE inventory_item_id = $1',
      [added.body.data[0].id],
    );
    await expect(
      sql(t.databaseUrl, 'UPDATE stock_mutations SET delta = delta + 1 WHERE id = $1', [row!.id]),
    ).rejects.toThrow(/append-only/);
    await expect(
      sql(t.databaseUrl, 'UPDATE stock_mutations SET new_quantity = new_quantity + 1 WHERE id = $1', [row!.id]),
    ).rejects.toThrow(/append-only/);
    await expect(
      sql(t.databaseUrl, "UPDATE stock_mutations SET source = 'UNKNOWN' WHERE id = $1", [row!.id]),
    ).rejects.toThrow(/append-only/);
    await expect(sql(t.databaseUrl, 'DELETE FROM stock_mutations WHERE id = $1', [row!.id])).rejects.toThrow(
      /append-only/,
    );
    await sql(
      t.databaseUrl,
      `UPDATE stock_mutations SET status = 'FAILING', messages = '[{"channel_id": "x"}]' WHERE id = $1`,
      [row!.id],
    );
    await sql(t.databaseUrl, `UPDATE stock_mutations SET status = 'PROCESSED', messages = '[]' WHERE id = $1`, [
      row!.id,
    ]);
  });

  it('goes with its tenant', async () => {
    const doomed = await createTenant(rest, 'Doomed tenant');
    const doomedCatalog = await createCatalog(t, doomed.key);
    const added = await rest.post(ITEMS, {
      token: doomed.key,
      body: {
        data: [
          {
            sku: 'SKU-1',
            warehouseId: doomedCatalog.warehouseIds[0],
            businessId: doomedCatalog.businessId,
            position: 'A-01',
          },
        ],
      },
    });
    expect(added.status).toBe(201);
    await sql(t.databaseUrl, 'DELETE FROM tenants WHERE id = $1', [doomed.id]);
    expect(await sql(t.databaseUrl, 'SELECT id FROM stock_mutations WHERE tenant_id = $1', [doomed.id])).toEqual([]);
    expect(await sql(t.databaseUrl, 'SELECT id FROM warehouses WHERE tenant_id = $1', [doomed.id])).toEqual([]);
  });
});
