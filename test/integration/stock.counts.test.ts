/**
 * Counts with compare-and-set: `expectedQuantity` on REST `PATCH /api/inventory/items` and
 * `change_from_quantity` on GraphQL `setInventoryQuantities`. A count whose line changed since it
 * was read is refused as a whole, naming the line, and changes nothing.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { createTenant, startTestApp, type Tenant } from '../helpers/app';
import { sql } from '../helpers/db';
import {
  createCatalog,
  expectLedgerExplainsStock,
  graphql,
  graphqlData,
  graphqlError,
  stockSnapshot,
  type Catalog,
  graphqlErrorField,
} from './stock.fixtures';

const t = await startTestApp();
const { rest } = t;
const ITEMS = '/api/inventory/items';

let tenant: Tenant;
let catalog: Catalog;

beforeAll(async () => {
  tenant = await createTenant(rest, 'Counting tenant');
  catalog = await createCatalog(t, tenant.key);
});

/** A new line of `quantity` units of the SKU at a position of the first warehouse; its id. */
async function line(sku: string, quantity: number, position = 'A-01'): Promise<string> {
  const response = await rest.post(ITEMS, {
    token: tenant.key,
    body: {
      data: [{ sku, warehouseId: catalog.warehouseIds[0], businessId: catalog.businessId, quantity, position }],
    },
  });
  expect(response.status, response.rawBody).toBe(201);
  return (response.body as { data: { id: string }[] }).data[0]!.id;
}

const patch = (data: unknown[], headers?: Record<string, string>) =>
  rest.patch(ITEMS, { token: tenant.key, body: { data }, headers });

async function quantityOf(lineId: string): Promise<number> {
  const [row] = await sql<{ quantity: string }>(
    t.databaseUrl,
    'SELECT quantity::text FROM inventory_items WHERE id = $1',
    [lineId],
  );
  return Number(row!.quantity);
}

const SET_QUANTITIES = `mutation($input: SetInventoryQuantitiesInput!) {
  setInventoryQuantities(input: $input) { items { id sku quantity } }
}`;

describe('PATCH /api/inventory/items with expectedQuantity', () => {
  it('applies a count when the line still holds the expected quantity', async () => {
    const id = await line('SKU-1', 10);
    const response = await patch([{ id, quantity: 8, expectedQuantity: 10 }]);
    expect(response.status, response.rawBody).toBe(200);
    expect((response.body as { data: { quantity: number }[] }).data[0]!.quantity).toBe(8);
    expect(await quantityOf(id)).toBe(8);
    await expectLedgerExplainsStock(t, tenant.id);
  });

  it('refuses the whole request with a 409 naming every stale line, and changes nothing', async () => {
    const fresh = await line('SKU-2', 4, 'A-01');
    const sold = await line('SKU-2', 6, 'A-02');
    const stale = await line('SKU-3', 3, 'B-01');
    const before = await stockSnapshot(t, tenant.id);
    const response = await patch(
      [
        { id: fresh, quantity: 5, expectedQuantity: 4 },
        { id: sold, quantity: 6, expectedQuantity: 7 },
        { id: stale, quantity: 1, expectedQuantity: 2, position: 'A-02' },
      ],
      { 'idempotency-key': 'count-refused' },
    );
    expect(response.status, response.rawBody).toBe(409);
    const error = (response.body as { error: { code: number; message: string; details: unknown[] } }).error;
    expect(error.code).toBe(409);
    expect(error.message).toMatch(/^Conflict: .*line ".*" holds 6, not the expected 7 \(and 1 more\)/);
    expect(error.details).toEqual([
      {
        field: 'body.data[1].expectedQuantity',
        message: `line "${sold}" holds 6, not 7`,
        id: sold,
        expected: 7,
        actual: 6,
      },
      {
        field: 'body.data[2].expectedQuantity',
        message: `line "${stale}" holds 3, not 2`,
        id: stale,
        expected: 2,
        actual: 3,
      },
    ]);
    expect(await stockSnapshot(t, tenant.id)).toEqual(before);
    // Nothing was stored under the key: the corrected request goes through with it.
    const retried = await patch([{ id: sold, quantity: 6, expectedQuantity: 6 }], {
      'idempotency-key': 'count-refused',
    });
    expect(retried.status, retried.rawBody).toBe(200);
  });

  it('refuses an expectedQuantity that is not a whole number of units, and one with nothing to set', async () => {
    const id = await line('SKU-1', 2, 'B-01');
    const before = await stockSnapshot(t, tenant.id);
    for (const expectedQuantity of ['2', -1, 1.5, null]) {
      const response = await patch([{ id, quantity: 3, expectedQuantity }]);
      expect(response.status, `${JSON.stringify(expectedQuantity)}: ${response.rawBody}`).toBe(400);
      expect((response.body as { error: { details: { field: string }[] } }).error.details[0]!.field).toBe(
        'body.data[0].expectedQuantity',
      );
    }
    const nothing = await patch([{ id, expectedQuantity: 2 }]);
    expect(nothing.status).toBe(400);
    expect((nothing.body as { error: { message: string } }).error.message).toContain('changes nothing');
    expect(await stockSnapshot(t, tenant.id)).toEqual(before);
  });

  it('lets exactly one of 50 concurrent counts expecting the same quantity win', async () => {
    const id = await line('SKU-3', 100, 'A-01');
    const responses = await Promise.all(
      Array.from({ length: 50 }, (_, index) => patch([{ id, quantity: 200 + index, expectedQuantity: 100 }])),
    );
    const won = responses.filter((response) => response.status === 200);
    expect(won).toHaveLength(1);
    expect(responses.filter((response) => response.status === 409)).toHaveLength(49);
    const winner = (won[0]!.body as { data: { quantity: number }[] }).data[0]!.quantity;
    expect(await quantityOf(id)).toBe(winner);
    const mutations = await sql(t.databaseUrl, 'SELECT 1 FROM stock_mutations WHERE inventory_item_id = $1', [id]);
    expect(mutations).toHaveLength(2); // the REGISTER of the line and the one count that won
    await expectLedgerExplainsStock(t, tenant.id);
  });
});

describe('GraphQL setInventoryQuantities', () => {
  it('records counts, with and without change_from_quantity, and replays an idempotent request', async () => {
    const first = await line('SKU-1', 5, 'A-02');
    const second = await line('SKU-2', 9, 'B-01');
    const input = {
      items: [
        { item_id: first, quantity: 4, change_from_quantity: 5 },
        { item_id: second, quantity: 12 },
      ],
      idempotency_key: 'count-2026-11',
    };
    const data = await graphqlData(t, tenant.key, SET_QUANTITIES, { input });
    expect(data.setInventoryQuantities.items.map((item) => [item.id, item.quantity])).toEqual([
      [first, 4],
      [second, 12],
    ]);
    const [ledgerRow] = await sql<{ source: string; delta: string }>(
      t.databaseUrl,
      'SELECT source::text, delta::text FROM stock_mutations WHERE inventory_item_id = $1 ORDER BY sequence DESC LIMIT 1',
      [first],
    );
    expect(ledgerRow).toEqual({ source: 'CORRECTION', delta: '-1' });
    const before = await stockSnapshot(t, tenant.id);
    const replayed = await graphqlData(t, tenant.key, SET_QUANTITIES, { input });
    expect(replayed).toEqual(data);
    expect(await stockSnapshot(t, tenant.id)).toEqual(before);
  });

  it('is a CONFLICT naming the stale line, and changes nothing', async () => {
    const id = await line('SKU-3', 7, 'A-02');
    const other = await line('SKU-1', 1, 'A-01');
    const before = await stockSnapshot(t, tenant.id);
    const error = await graphqlError(t, tenant.key, 'CONFLICT', SET_QUANTITIES, {
      input: {
        items: [
          { item_id: other, quantity: 0 },
          { item_id: id, quantity: 3, change_from_quantity: 6 },
        ],
      },
    });
    expect(error.message).toContain(`line "${id}" holds 7, not the expected 6`);
    expect(error.extensions?.field).toBe('input.items[1].change_from_quantity');
    expect(await stockSnapshot(t, tenant.id)).toEqual(before);
  });

  it('refuses unknown and repeated lines, bad quantities and an empty list, and changes nothing', async () => {
    const id = await line('SKU-2', 3, 'A-02');
    const before = await stockSnapshot(t, tenant.id);
    const unknown = await graphqlError(t, tenant.key, 'NOT_FOUND', SET_QUANTITIES, {
      input: { items: [{ item_id: '0190f5b4-1c5e-7000-8000-000000000abc', quantity: 1 }] },
    });
    expect(unknown.message).toContain('0190f5b4-1c5e-7000-8000-000000000abc');
    expect(
      await graphqlErrorField(t, tenant.key, 'VALIDATION_ERROR', SET_QUANTITIES, {
        input: {
          items: [
            { item_id: id, quantity: 1 },
            { item_id: id.toUpperCase(), quantity: 2 },
          ],
        },
      }),
    ).toBe('input.items[1].item_id');
    expect(
      await graphqlErrorField(t, tenant.key, 'VALIDATION_ERROR', SET_QUANTITIES, {
        input: { items: [{ item_id: id, quantity: 1, change_from_quantity: -3 }] },
      }),
    ).toBe('input.items[0].change_from_quantity');
    expect(await graphqlErrorField(t, tenant.key, 'VALIDATION_ERROR', SET_QUANTITIES, { input: { items: [] } })).toBe(
      'input.items',
    );
    const readOnly = await createTenant(rest, 'Reader', ['inventory:read']);
    const forbidden = await graphql(t, readOnly.key, SET_QUANTITIES, {
      input: { items: [{ item_id: id, quantity: 1 }] },
    });
    expect(forbidden.body.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
    expect(await stockSnapshot(t, tenant.id)).toEqual(before);
  });

  it('does not find another tenant’s line', async () => {
    const id = await line('SKU-1', 2, 'B-01');
    const held = await quantityOf(id);
    const other = await createTenant(rest, 'Other counter');
    const error = await graphqlError(t, other.key, 'NOT_FOUND', SET_QUANTITIES, {
      input: { items: [{ item_id: id, quantity: 0, change_from_quantity: held }] },
    });
    expect(error.message).toContain(id);
    expect(await quantityOf(id)).toBe(held);
  });
});
