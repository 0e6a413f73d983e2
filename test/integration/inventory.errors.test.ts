/**
 * Rejected REST inventory writes: every bad input is refused with the documented status and a
 * message naming the problem, and changes nothing (lines, ledger and idempotency keys alike).
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { createKey, createTenant, startTestApp, type Tenant } from '../helpers/app';
import { createCatalog, stockSnapshot, type Catalog } from './stock.fixtures';

const t = await startTestApp();
const { rest } = t;
const ITEMS = '/api/inventory/items';
const UNKNOWN_ID = '0190b3c4-1e2f-7a3b-8c4d-5e6f7a8b9c0d';

let tenant: Tenant;
let other: Tenant;
let catalog: Catalog;
let otherCatalog: Catalog;
/** Lines of `tenant` created before the tests: [SKU-1 x5, SKU-2 x3]. */
let lines: { id: string }[];
let otherLine: { id: string };

const item = (extra: Record<string, unknown> = {}) => ({
  sku: 'SKU-1',
  warehouseId: catalog.warehouseIds[0],
  businessId: catalog.businessId,
  quantity: 1,
  ...extra,
});

beforeAll(async () => {
  tenant = await createTenant(rest, 'Errors tenant');
  other = await createTenant(rest, 'Other tenant');
  catalog = await createCatalog(t, tenant.key);
  otherCatalog = await createCatalog(t, other.key, { prefix: 'OTHER' });
  const created = await rest.post(ITEMS, {
    token: tenant.key,
    body: { data: [item({ quantity: 5 }), item({ sku: 'SKU-2', quantity: 3 })] },
  });
  expect(created.status, created.rawBody).toBe(201);
  lines = created.body.data;
  const foreign = await rest.post(ITEMS, {
    token: other.key,
    body: {
      data: [{ sku: 'OTHER-1', warehouseId: otherCatalog.warehouseIds[0], businessId: otherCatalog.businessId }],
    },
  });
  otherLine = foreign.body.data[0];
});

/** Sends a request that must be refused with `status`, and checks that no tenant's stock changed. */
async function expectRefused(
  status: number,
  send: () => Promise<{ status: number; body: any; rawBody: string }>,
  message?: RegExp,
) {
  const before = [await stockSnapshot(t, tenant.id), await stockSnapshot(t, other.id)];
  const response = await send();
  expect(response.status, response.rawBody).toBe(status);
  expect(response.body.error.code).toBe(status);
  if (message) expect(response.body.error.message).toMatch(message);
  expect([await stockSnapshot(t, tenant.id), await stockSnapshot(t, other.id)]).toEqual(before);
  return response.body.error as { message: string; details: { field: string; message: string }[] | null };
}

const post =
  (data: unknown, options: { token?: string; headers?: Record<string, string> } = {}) =>
  () =>
    rest.post(ITEMS, { token: options.token ?? tenant.key, body: { data }, headers: options.headers });
const patch =
  (data: unknown, token = tenant.key) =>
  () =>
    rest.request('PATCH', ITEMS, { token, body: { data } });
const del =
  (query: string, token = tenant.key) =>
  () =>
    rest.delete(`${ITEMS}${query}`, { token });

describe('POST /api/inventory/items refuses', () => {
  it.each([
    ['a missing sku', { sku: undefined }, 'body.data[0].sku'],
    ['a missing warehouseId', { warehouseId: undefined }, 'body.data[0].warehouseId'],
    ['a missing businessId', { businessId: undefined }, 'body.data[0].businessId'],
    ['a negative quantity', { quantity: -1 }, 'body.data[0].quantity'],
    ['a fractional quantity', { quantity: 1.5 }, 'body.data[0].quantity'],
    ['a quantity given as a string', { quantity: '3' }, 'body.data[0].quantity'],
    ['an unknown state', { state: 'LOST' }, 'body.data[0].state'],
    ['a state only the system sets', { state: 'RESERVED' }, 'body.data[0].state'],
    ['an unknown reason', { state: 'UNAVAILABLE', reason: 'STOLEN' }, 'body.data[0].reason'],
    ['an expiry in seconds', { expiresAt: 1_893_456_000 }, 'body.data[0].expiresAt'],
    ['a fractional expiry', { expiresAt: 1_893_456_000_000.5 }, 'body.data[0].expiresAt'],
    ['a cost without currency', { cost: { amount: 100 } }, 'body.data[0].cost.currency'],
    ['a cost in a malformed currency', { cost: { amount: 100, currency: 'euro' } }, 'body.data[0].cost.currency'],
    ['a negative cost', { cost: { amount: -1, currency: 'EUR' } }, 'body.data[0].cost.amount'],
    ['gtin that is not a list', { gtin: '8700000000011' }, 'body.data[0].gtin'],
    ['an unknown field', { colour: 'red' }, 'body.data[0].colour'],
    ['snake_case field names', { warehouse_id: UNKNOWN_ID }, 'body.data[0].warehouse_id'],
  ])('%s with 400', async (_name, change, field) => {
    const error = await expectRefused(400, post([item(change)]), /^Bad request: /);
    expect(error.details!.map((d) => d.field)).toContain(field);
  });

  it.each([
    ['an unknown sku', { sku: 'NOPE' }, 'body.data[1].sku', /"NOPE" is not a product of the tenant/],
    ["another tenant's sku", { sku: 'OTHER-1' }, 'body.data[1].sku', /"OTHER-1" is not a product/],
    [
      'an unknown warehouse',
      { warehouseId: UNKNOWN_ID },
      'body.data[1].warehouseId',
      /is not a warehouse of the tenant/,
    ],
    ['a malformed warehouse id', { warehouseId: 'wh-1' }, 'body.data[1].warehouseId', /"wh-1" is not a warehouse/],
    [
      "another tenant's warehouse",
      () => ({ warehouseId: otherCatalog.warehouseIds[0] }),
      'body.data[1].warehouseId',
      /is not a warehouse/,
    ],
    ['an unknown business', { businessId: UNKNOWN_ID }, 'body.data[1].businessId', /is not a business of the tenant/],
    [
      'a business that does not own the warehouse',
      () => ({ businessId: catalog.otherBusinessId }),
      'body.data[1].businessId',
      /belongs to business/,
    ],
    ['an unknown position', { position: 'Z-99' }, 'body.data[1].position', /has no position "Z-99"/],
    [
      'BROKEN without UNAVAILABLE',
      { reason: 'BROKEN' },
      'body.data[1].reason',
      /BROKEN is only allowed with state UNAVAILABLE/,
    ],
    [
      'BROKEN with AVAILABLE',
      { state: 'AVAILABLE', reason: 'BROKEN' },
      'body.data[1].reason',
      /BROKEN is only allowed/,
    ],
  ])('%s with 400, after a valid entry, adding nothing', async (_name, change, field, message) => {
    const entry = item(typeof change === 'function' ? change() : change);
    const error = await expectRefused(400, post([item({ quantity: 7 }), entry]), message);
    expect(error.details!.map((d) => d.field)).toEqual([field]);
  });

  it('names every bad entry in details', async () => {
    const error = await expectRefused(
      400,
      post([item({ sku: 'NOPE-1' }), item(), item({ sku: 'NOPE-2', position: 'Z' })]),
    );
    expect(error.details!.map((d) => d.field)).toEqual([
      'body.data[0].sku',
      'body.data[2].sku',
      'body.data[2].position',
    ]);
  });

  it('an empty data list with 400', async () => {
    const error = await expectRefused(400, post([]));
    expect(error.details![0]!.field).toBe('body.data');
  });

  it('more entries than the documented limit of 1000 with 400', async () => {
    const error = await expectRefused(
      400,
      post(Array.from({ length: 1001 }, () => ({ sku: 'SKU-1', warehouseId: 'w', businessId: 'b' }))),
    );
    expect(error.details![0]).toMatchObject({ field: 'body.data' });
    expect(error.message).toMatch(/1000/);
  });

  it('10 000 entries in one request with 413', async () => {
    const data = Array.from({ length: 10_000 }, (_, index) => item({ quantity: index, batchNumber: `BATCH-${index}` }));
    await expectRefused(413, post(data), /^Payload too large/);
  });

  it('a body that is not an object with data', async () => {
    await expectRefused(400, () => rest.post(ITEMS, { token: tenant.key, body: [item()] }));
    await expectRefused(400, () => rest.post(ITEMS, { token: tenant.key, body: { data: item() } }));
    await expectRefused(400, () =>
      rest.post(ITEMS, { token: tenant.key, rawBody: '{"data": [', headers: { 'content-type': 'application/json' } }),
    );
  });

  it('a body that is not JSON with 415', async () => {
    await expectRefused(415, () =>
      rest.post(ITEMS, { token: tenant.key, rawBody: 'sku=SKU-1', headers: { 'content-type': 'text/plain' } }),
    );
  });

  it('a missing or invalid credential with 401, a key without inventory:write with 403', async () => {
    await expectRefused(401, () => rest.post(ITEMS, { body: { data: [item()] } }));
    await expectRefused(401, post([item()], { token: 'cpk_nope_nope' }));
    const readOnly = await createKey(rest, tenant.id, ['inventory:read', 'catalog:write']);
    await expectRefused(403, post([item()], { token: readOnly }), /inventory:write/);
  });
});

describe('PATCH /api/inventory/items refuses', () => {
  it('an unknown id with 404, applying no other entry', async () => {
    await expectRefused(
      404,
      patch([
        { id: lines[0]!.id, quantity: 50 },
        { id: UNKNOWN_ID, quantity: 1 },
      ]),
      new RegExp(UNKNOWN_ID),
    );
  });

  it("another tenant's line with 404", async () => {
    await expectRefused(404, patch([{ id: otherLine.id, quantity: 0 }]));
    await expectRefused(404, patch([{ id: lines[0]!.id, quantity: 0 }], other.key));
  });

  it('an id that cannot exist with 404', async () => {
    await expectRefused(404, patch([{ id: 'not-a-uuid', quantity: 1 }]));
  });

  it.each([
    ['a missing id', { quantity: 1 }, 'body.data[0].id'],
    ['a negative quantity', { quantity: -5 }, 'body.data[0].quantity'],
    ['a fractional quantity', { quantity: 0.5 }, 'body.data[0].quantity'],
    ['reason NONE (only BROKEN may be set)', { state: 'UNAVAILABLE', reason: 'NONE' }, 'body.data[0].reason'],
    ['an unknown state', { state: 'GONE' }, 'body.data[0].state'],
    ['an unknown field', { sku: 'SKU-2' }, 'body.data[0].sku'],
    ['a warehouse change (lines stay in their warehouse)', { warehouseId: UNKNOWN_ID }, 'body.data[0].warehouseId'],
  ])('%s with 400', async (_name, change, field) => {
    const entry = { id: lines[0]!.id, ...change };
    if (!('id' in change) && field === 'body.data[0].id') delete (entry as { id?: string }).id;
    const error = await expectRefused(400, patch([entry]));
    expect(error.details!.map((d) => d.field)).toContain(field);
  });

  it('BROKEN on a line that stays AVAILABLE with 400', async () => {
    const error = await expectRefused(400, patch([{ id: lines[0]!.id, reason: 'BROKEN' }]), /BROKEN is only allowed/);
    expect(error.details![0]!.field).toBe('body.data[0].reason');
  });

  it('an unknown position with 400', async () => {
    const error = await expectRefused(
      400,
      patch([
        { id: lines[1]!.id, quantity: 1 },
        { id: lines[0]!.id, position: 'NOWHERE' },
      ]),
    );
    expect(error.details).toEqual([
      { field: 'body.data[1].position', message: expect.stringContaining('has no position "NOWHERE"') },
    ]);
  });

  it('the same line twice, or an entry that changes nothing, with 400', async () => {
    await expectRefused(
      400,
      patch([
        { id: lines[0]!.id, quantity: 1 },
        { id: lines[0]!.id, quantity: 2 },
      ]),
      /appears more than once/,
    );
    await expectRefused(400, patch([{ id: lines[0]!.id }]), /changes nothing/);
  });

  it('an empty data list with 400, and a key without inventory:write with 403', async () => {
    await expectRefused(400, patch([]));
    const readOnly = await createKey(rest, tenant.id, ['inventory:read']);
    await expectRefused(403, patch([{ id: lines[0]!.id, quantity: 1 }], readOnly));
  });
});

describe('DELETE /api/inventory/items refuses', () => {
  it('a missing filter with 400', async () => {
    const error = await expectRefused(400, del(''), /filter\[id\]/);
    expect(error.details![0]!.field).toBe('query.filter[id]');
  });

  it('both filters at once, an empty id, or an unknown parameter with 400', async () => {
    await expectRefused(400, del(`?filter[id][eq]=${lines[0]!.id}&filter[id][in]=${lines[1]!.id}`), /not both/);
    await expectRefused(400, del(`?filter[id][in]=${lines[0]!.id},,${lines[1]!.id}`), /empty id/);
    await expectRefused(400, del(`?filter[sku][eq]=SKU-1`));
  });

  it('more than 1000 ids with 400', async () => {
    const ids = Array.from({ length: 1001 }, () => UNKNOWN_ID).join(',');
    await expectRefused(400, del(`?filter[id][in]=${ids}`));
  });

  it('an unknown id with 404, removing no other line', async () => {
    await expectRefused(404, del(`?filter[id][in]=${lines[0]!.id},${UNKNOWN_ID}`), new RegExp(UNKNOWN_ID));
    await expectRefused(404, del(`?filter[id][eq]=${UNKNOWN_ID}`));
    await expectRefused(404, del(`?filter[id][eq]=garbage`));
  });

  it("another tenant's line with 404", async () => {
    await expectRefused(404, del(`?filter[id][eq]=${otherLine.id}`));
  });

  it('a key without inventory:write with 403', async () => {
    const readOnly = await createKey(rest, tenant.id, ['inventory:read']);
    await expectRefused(403, del(`?filter[id][eq]=${lines[0]!.id}`, readOnly));
  });
});
