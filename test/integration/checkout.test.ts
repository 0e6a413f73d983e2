/**
 * Checkouts through GraphQL: totals computed by the server, messages on their paths, the
 * statuses and every refusal, the holds (a checkout's units equal its hold's at every step),
 * expiry, idempotency and completion into an order with money.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { createKey, startTestApp } from '../helpers/app';
import { sql } from '../helpers/db';
import {
  CANCEL,
  checkoutCall,
  checkoutError,
  COMPLETE,
  CREATE,
  createCheckoutWorld,
  GET,
  heldUnits,
  linesHeld,
  UPDATE,
  type CheckoutWorld,
} from './checkout.fixtures';
import { expectStockInvariants, levels } from './orders.fixtures';
import { graphqlData } from './stock.fixtures';

const t = await startTestApp();
let world: CheckoutWorld;

const buyer = { email: 'ada@example.com', first_name: 'Ada', last_name: 'Lovelace' };
const destination = { country: 'fr', postal_code: '75001' };
const payment = { handler: 'manual' };
const total = (checkout: { totals: { type: string; amount: number }[] }) =>
  Object.fromEntries(checkout.totals.map((entry) => [entry.type, entry.amount]));

const create = (input: Record<string, unknown>, token = world.tenant.key) =>
  checkoutCall(t, token, CREATE, { business_id: world.catalog.businessId, channel_id: world.channelId, ...input });
const update = (input: Record<string, unknown>) => checkoutCall(t, world.tenant.key, UPDATE, input);
const get = async (id: string) => (await graphqlData(t, world.tenant.key, GET, { id })).checkout;

async function expectHoldMatches(checkout: { id: string; line_items: never[] }) {
  expect(await heldUnits(t, checkout.id)).toEqual(linesHeld(checkout));
}

beforeAll(async () => {
  world = await createCheckoutWorld(t, 'Checkout tenant', { 'SKU-1': 20, 'SKU-2': 20, 'SKU-3': 20 });
});

describe('a cart', () => {
  it('is a checkout without a buyer: incomplete, with a message per missing thing, its lines held', async () => {
    const cart = await create({ line_items: [{ sku: 'SKU-1', quantity: 2 }] });
    expect(cart.status).toBe('incomplete');
    expect(cart.buyer).toBeNull();
    expect(cart.messages.map((m: { code: string; path: string }) => [m.code, m.path])).toEqual([
      ['missing', '$.buyer.email'],
      ['missing', '$.destination'],
      ['missing', '$.payment'],
    ]);
    expect(cart.line_items[0]).toMatchObject({ item: { sku: 'SKU-1', price: 1000 }, quantity: 2, held: true });
    // No destination: no tax zone, no tax yet.
    expect(total(cart)).toEqual({ subtotal: 2000, discount: 0, fulfillment: 0, tax: 0, total: 2000 });
    await expectHoldMatches(cart);
    expect(cart.expires_at - Date.now()).toBeGreaterThan(29 * 60_000);
    expect(cart.expires_at - Date.now()).toBeLessThanOrEqual(30 * 60_000);
  });
});

describe('totals and messages', () => {
  it('computes subtotal, tax per rate and total on the server, ready once nothing is missing', async () => {
    const checkout = await create({
      line_items: [
        { sku: 'SKU-1', quantity: 3 },
        { product_id: world.products[1], quantity: 1 },
      ],
      buyer,
      destination,
      payment,
    });
    expect(checkout.status).toBe('ready_for_complete');
    expect(checkout.messages).toEqual([]);
    expect(total(checkout)).toEqual({ subtotal: 3250, discount: 0, fulfillment: 0, tax: 650, total: 3900 });
    expect(checkout.tax_lines).toEqual([{ name: 'TVA', rate_basis_points: 2000, amount: 650 }]);
    expect(checkout.line_items[1].totals).toEqual([
      { type: 'subtotal', amount: 250 },
      { type: 'discount', amount: 0 },
      { type: 'tax', amount: 50 },
      { type: 'total', amount: 300 },
    ]);
    expect(checkout.destination).toEqual({ country: 'FR', region: null, postal_code: '75001' });
    await expectHoldMatches(checkout);
  });

  it('reports an unknown product, a product without price and a quantity above stock on the line, holding none of them', async () => {
    const before = await levels(t, world, 'SKU-2');
    const checkout = await create({
      line_items: [
        { sku: 'NO-SUCH', quantity: 1 },
        { sku: 'SKU-3', quantity: 1 },
        { sku: 'SKU-2', quantity: 1000 },
        { sku: 'SKU-1', quantity: 1 },
      ],
      buyer,
      destination,
      payment,
    });
    expect(checkout.status).toBe('incomplete');
    expect(
      checkout.messages.map((m: { code: string; path: string; severity: string }) => [m.code, m.path, m.severity]),
    ).toEqual([
      ['unknown_product', '$.line_items[0]', 'recoverable'],
      ['no_price', '$.line_items[1]', 'recoverable'],
      ['out_of_stock', '$.line_items[2].quantity', 'recoverable'],
    ]);
    expect(checkout.line_items.map((line: { held: boolean }) => line.held)).toEqual([false, false, false, true]);
    expect(total(checkout)).toMatchObject({ subtotal: 1000 + 250 * 1000 });
    expect(await levels(t, world, 'SKU-2')).toEqual(before);
    await expectHoldMatches(checkout);
  });

  it('refuses two lines of one product and an input naming neither product_id nor sku, changing nothing', async () => {
    const count = await sql(t.databaseUrl, 'SELECT count(*)::int AS n FROM checkouts');
    const twice = await checkoutError(t, world.tenant.key, CREATE, {
      business_id: world.catalog.businessId,
      channel_id: world.channelId,
      line_items: [
        { sku: 'SKU-1', quantity: 1 },
        { product_id: world.products[0], quantity: 2 },
      ],
    });
    expect(twice.extensions).toMatchObject({ code: 'VALIDATION_ERROR' });
    expect(twice.message).toMatch(/line_items\[1\]/);
    const neither = await checkoutError(t, world.tenant.key, CREATE, {
      business_id: world.catalog.businessId,
      channel_id: world.channelId,
      line_items: [{ quantity: 1 }],
    });
    expect(neither.extensions).toMatchObject({ code: 'VALIDATION_ERROR' });
    expect(await sql(t.databaseUrl, 'SELECT count(*)::int AS n FROM checkouts')).toEqual(count);
  });
});

describe('update (a full replace)', () => {
  it('re-holds only the lines that changed and clears what is left out', async () => {
    const first = await create({
      line_items: [
        { sku: 'SKU-1', quantity: 2 },
        { sku: 'SKU-2', quantity: 1 },
      ],
      buyer,
      destination,
      payment,
    });
    const holds = async () =>
      (
        await sql<{ id: string }>(
          t.databaseUrl,
          `SELECT id FROM reservations WHERE notes = $1 AND status = 'ACTIVE' ORDER BY created_at`,
          [`checkout ${first.id}`],
        )
      ).map((row) => row.id);
    const [keptHold] = await holds();
    const second = await update({
      id: first.id,
      line_items: [
        { sku: 'SKU-1', quantity: 2 },
        { sku: 'SKU-2', quantity: 3 },
      ],
    });
    // The SKU-1 line kept its id and its hold; SKU-2's was held again; the buyer was cleared.
    expect(second.line_items[0].id).toBe(first.line_items[0].id);
    expect((await holds())[0]).toBe(keptHold);
    expect(second.buyer).toBeNull();
    expect(second.status).toBe('incomplete');
    expect(second.expires_at).toBeGreaterThanOrEqual(first.expires_at);
    await expectHoldMatches(second);
    const third = await update({
      id: first.id,
      line_items: [{ sku: 'SKU-2', quantity: 3 }],
      buyer,
      destination,
      payment,
    });
    expect(third.status).toBe('ready_for_complete');
    expect(await holds()).toHaveLength(1);
    await expectHoldMatches(third);
    await expectStockInvariants(t, world.tenant.id);
  });
});

describe('complete', () => {
  it('places the order with its money from the hold in one transaction', async () => {
    const checkout = await create({ line_items: [{ sku: 'SKU-1', quantity: 2 }], buyer, destination, payment });
    const before = await levels(t, world, 'SKU-1');
    const done = await checkoutCall(t, world.tenant.key, COMPLETE, { id: checkout.id });
    expect(done.status).toBe('completed');
    expect(done.order.id).toBeTruthy();
    const [order] = await sql(
      t.databaseUrl,
      'SELECT checkout_id, currency, subtotal::int, tax_total::int, total::int, payment_status, buyer_email FROM orders WHERE id = $1',
      [done.order.id],
    );
    expect(order).toEqual({
      checkout_id: checkout.id,
      currency: 'EUR',
      subtotal: 2000,
      tax_total: 400,
      total: 2400,
      payment_status: 'PENDING',
      buyer_email: 'ada@example.com',
    });
    expect(await levels(t, world, 'SKU-1')).toEqual({
      ...before,
      reserved: before.reserved - 2,
      committed: before.committed + 2,
    });
    expect(await heldUnits(t, checkout.id)).toEqual({});
    await expectStockInvariants(t, world.tenant.id);
    // Completed is final: no second completion, update or cancel.
    for (const query of [COMPLETE, CANCEL]) {
      const refused = await checkoutError(t, world.tenant.key, query, { id: checkout.id });
      expect(refused.extensions).toMatchObject({ code: 'INVALID_STATE' });
    }
    const updated = await checkoutError(t, world.tenant.key, UPDATE, { id: checkout.id, line_items: [] });
    expect(updated.extensions).toMatchObject({ code: 'INVALID_STATE' });
  });

  it('refuses an incomplete checkout naming the path of its first message', async () => {
    const cart = await create({ line_items: [{ sku: 'SKU-1', quantity: 1 }], destination });
    const refused = await checkoutError(t, world.tenant.key, COMPLETE, { id: cart.id });
    expect(refused.extensions).toMatchObject({ code: 'INVALID_STATE' });
    expect(refused.message).toContain('$.buyer.email');
    expect((await get(cart.id)).status).toBe('incomplete');
  });

  it('sends a checkout whose hold expired back to its lines, holding them again', async () => {
    const checkout = await create({ line_items: [{ sku: 'SKU-2', quantity: 1 }], buyer, destination, payment });
    await sql(t.databaseUrl, `UPDATE reservations SET expires_at = now() - interval '1 second' WHERE notes = $1`, [
      `checkout ${checkout.id}`,
    ]);
    const again = await checkoutCall(t, world.tenant.key, COMPLETE, { id: checkout.id });
    expect(again.status).toBe('ready_for_complete');
    expect(again.order).toBeNull();
    await expectHoldMatches(again);
    expect((await checkoutCall(t, world.tenant.key, COMPLETE, { id: checkout.id })).status).toBe('completed');
  });
});

describe('cancel and expiry', () => {
  it('cancel releases the holds; a canceled checkout cannot change', async () => {
    const checkout = await create({ line_items: [{ sku: 'SKU-1', quantity: 4 }] });
    const before = await levels(t, world, 'SKU-1');
    const canceled = await checkoutCall(t, world.tenant.key, CANCEL, { id: checkout.id });
    expect(canceled.status).toBe('canceled');
    expect(canceled.line_items[0].held).toBe(false);
    expect(await levels(t, world, 'SKU-1')).toEqual({
      ...before,
      available: before.available + 4,
      reserved: before.reserved - 4,
    });
    for (const [query, input] of [
      [CANCEL, { id: checkout.id }],
      [COMPLETE, { id: checkout.id }],
      [UPDATE, { id: checkout.id, line_items: [] }],
    ] as const) {
      expect((await checkoutError(t, world.tenant.key, query, input)).extensions).toMatchObject({
        code: 'INVALID_STATE',
      });
    }
  });

  it('an expired checkout reads canceled with a message, and its hold no longer counts', async () => {
    const checkout = await create({ line_items: [{ sku: 'SKU-1', quantity: 1 }], buyer, destination, payment });
    await sql(t.databaseUrl, `UPDATE checkouts SET expires_at = now() - interval '1 second' WHERE id = $1`, [
      checkout.id,
    ]);
    await sql(t.databaseUrl, `UPDATE reservations SET expires_at = now() - interval '1 second' WHERE notes = $1`, [
      `checkout ${checkout.id}`,
    ]);
    const read = await get(checkout.id);
    expect(read.status).toBe('canceled');
    expect(read.messages).toEqual([expect.objectContaining({ code: 'expired', path: '$.expires_at' })]);
    expect(await heldUnits(t, checkout.id)).toEqual({});
    const [row] = await sql(t.databaseUrl, 'SELECT status FROM checkouts WHERE id = $1', [checkout.id]);
    expect(row).toEqual({ status: 'canceled' });
  });
});

describe('idempotency and scopes', () => {
  it('answers a repeated create with the same key without creating again; another input with the key is a conflict', async () => {
    const input = { line_items: [{ sku: 'SKU-2', quantity: 1 }], idempotency_key: 'create-1' };
    const first = await create(input);
    const again = await create(input);
    expect(again).toEqual(first);
    expect(
      await sql(t.databaseUrl, `SELECT count(*)::int AS n FROM reservations WHERE notes = $1`, [
        `checkout ${first.id}`,
      ]),
    ).toEqual([{ n: 1 }]);
    const other = await checkoutError(t, world.tenant.key, CREATE, {
      business_id: world.catalog.businessId,
      channel_id: world.channelId,
      line_items: [{ sku: 'SKU-2', quantity: 2 }],
      idempotency_key: 'create-1',
    });
    expect(other.extensions).toMatchObject({ code: 'CONFLICT' });
    expect(other.message).toContain('create-1');
  });

  it('needs checkout:write', async () => {
    const reader = await createKey(t.rest, world.tenant.id, ['catalog:read']);
    const refused = await checkoutError(t, reader, CREATE, {
      business_id: world.catalog.businessId,
      channel_id: world.channelId,
      line_items: [],
    });
    expect(refused.extensions).toMatchObject({ code: 'FORBIDDEN' });
    const writer = await createKey(t.rest, world.tenant.id, ['checkout:write']);
    const cart = await create({ line_items: [{ sku: 'SKU-1', quantity: 1 }] }, writer);
    expect(cart.status).toBe('incomplete');
  });
});

describe('payment', () => {
  it('a declined payment keeps the checkout open with a message on $.payment and its hold; a good token completes it', async () => {
    await graphqlData(
      t,
      world.tenant.key,
      `mutation($input: SetPaymentSettingsInput!) { setPaymentSettings(input: $input) { settings { sandbox_enabled } } }`,
      { input: { sandbox_enabled: true } },
    );
    const lines = [{ sku: 'SKU-2', quantity: 1 }];
    const decline = { handler: 'sandbox', token: 'tok_sandbox_decline' };
    const checkout = await create({ line_items: lines, buyer, destination, payment: decline });
    const declined = await checkoutCall(t, world.tenant.key, COMPLETE, { id: checkout.id });
    expect(declined.status).toBe('incomplete');
    expect(declined.order).toBeNull();
    expect(declined.messages).toEqual([expect.objectContaining({ code: 'payment_declined', path: '$.payment' })]);
    expect(await heldUnits(t, checkout.id)).toEqual({ 'SKU-2': 1 });
    const success = { handler: 'sandbox', token: 'tok_sandbox_success' };
    const fixed = await update({ id: checkout.id, line_items: lines, buyer, destination, payment: success });
    expect(fixed.status).toBe('ready_for_complete');
    const done = await checkoutCall(t, world.tenant.key, COMPLETE, { id: checkout.id });
    expect(done.status).toBe('completed');
    const [order] = await sql(t.databaseUrl, 'SELECT payment_status FROM orders WHERE id = $1', [done.order.id]);
    expect(order).toEqual({ payment_status: 'PAID' });
  });
});

describe('discount usage limit at completion', () => {
  it('a code used up by another order meanwhile keeps the checkout open with a message, its hold kept and no order', async () => {
    const made = await t.rest.post('/api/discounts', {
      token: world.tenant.key,
      body: {
        data: {
          code: 'ONCE10',
          title: 'Once',
          kind: 'PERCENT',
          percentBasisPoints: 1000,
          target: 'ORDER',
          usageLimit: 1,
        },
      },
    });
    expect(made.status, made.rawBody).toBe(201);
    const lines = [{ sku: 'SKU-1', quantity: 1 }];
    const input = { line_items: lines, buyer, destination, payment, discount_codes: ['once10'] };
    const first = await create(input);
    const second = await create({ ...input, buyer: { ...buyer, email: 'grace@example.com' } });
    expect(total(second).discount).toBe(100);
    expect((await checkoutCall(t, world.tenant.key, COMPLETE, { id: first.id })).status).toBe('completed');
    const ordersBefore = await sql(t.databaseUrl, 'SELECT count(*)::int AS n FROM orders');
    const refused = await checkoutCall(t, world.tenant.key, COMPLETE, { id: second.id });
    expect(refused.status).not.toBe('completed');
    expect(refused.order).toBeNull();
    expect(refused.messages).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ code: 'discount_code_usage_limit_reached', path: '$.discounts.codes[0]' }),
      ]),
    );
    expect(await sql(t.databaseUrl, 'SELECT count(*)::int AS n FROM orders')).toEqual(ordersBefore);
    expect(await heldUnits(t, second.id)).toEqual({ 'SKU-1': 1 });
    const [usage] = await sql(t.databaseUrl, 'SELECT count(*)::int AS n FROM discount_usages');
    expect(usage).toEqual({ n: 1 });
  });
});
