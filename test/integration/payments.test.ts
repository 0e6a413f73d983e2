/**
 * Payments: the handlers a checkout pays with (`manual`, `sandbox` and its test tokens, the
 * redirect page), the payment records of orders placed from a hold, and the money operations on
 * orders (mark paid, capture, cancel with void or refund and stock released, refunds in part and on
 * return). Card numbers are refused without being echoed, logged or stored.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { writeTransaction } from '../../src/kernel/db';
import { placeOrder, type PlaceOrderInput } from '../../src/modules/orders';
import type { AuthorizeResult } from '../../src/modules/payments';
import { createKey, startSecondProcess, startTestApp } from '../helpers/app';
import { sql } from '../helpers/db';
import { addStock, createStockWorld, expectStockInvariants, levels, type StockWorld } from './orders.fixtures';
import { graphql, graphqlData, graphqlError } from './stock.fixtures';

const CARD = '4242 4242 4242 4242';
const logLines: string[] = [];
const t = await startTestApp({
  config: { logLevel: 'debug' },
  logStream: { write: (line) => void logLines.push(line) },
});
let world: StockWorld;

const RESERVE = `mutation($input: CreateReservationInput!) { createReservation(input: $input) {
  reservation { id items { product { id } } } } }`;
const ORDER = `query($id: ID!) { order(id: $id) { id status payment { handler status amount refunded_amount currency } } }`;
const SETTINGS = `mutation($input: SetPaymentSettingsInput!) { setPaymentSettings(input: $input) {
  settings { sandbox_enabled } } }`;
const MARK_PAID = `mutation($input: OrderPaymentInput!) { markOrderPaid(input: $input) { order { id
  payment { status } } } }`;
const CAPTURE = `mutation($input: OrderPaymentInput!) { captureOrderPayment(input: $input) { order { id
  payment { status } } } }`;
const REFUND = `mutation($input: RefundOrderInput!) { refundOrder(input: $input) { order { id
  payment { status refunded_amount } } } }`;
const CANCEL = `mutation($input: CancelOrderInput!) { cancelOrder(input: $input) { order { id status } } }`;
const SHIP = `mutation($input: ShipOrderInput!) { shipOrder(input: $input) { order { id items { id } } } }`;
const RETURN = `mutation($input: ReturnOrderItemsInput!) { returnOrderItems(input: $input) { order { id
  payment { status refunded_amount } } } }`;

const checkoutId = () => crypto.randomUUID();

/** Two units of SKU-1 at 1000 each, no tax: total 2000. */
async function placeOrderPaidWith(result: AuthorizeResult, handler: string) {
  if (result.outcome !== 'authorized' && result.outcome !== 'captured' && result.outcome !== 'pending')
    throw new Error(`cannot place an order with a ${result.outcome} payment`);
  const data = await graphqlData(t, world.tenant.key, RESERVE, {
    input: {
      business_id: world.catalog.businessId,
      warehouse_id: world.warehouseId,
      channel_id: world.channelId,
      customer: { name: 'Ada Lovelace' },
      items: [{ sku: 'SKU-1', quantity: 2 }],
      expires_at: Date.now() + 3_600_000,
    },
  });
  const reservation = data.createReservation.reservation;
  const input: PlaceOrderInput = {
    reservationId: reservation.id,
    checkoutId: null,
    actor: { type: 'api_key', id: 'test' },
    buyer: { email: 'ada@example.com', name: 'Ada Lovelace', phone: null },
    currency: 'EUR',
    taxInclusive: true,
    totals: { subtotal: 2000, discount: 0, fulfillment: 0, tax: 0, total: 2000 },
    taxLines: [],
    discounts: [],
    paymentStatus: 'PENDING',
    fulfillment: null,
    destination: null,
    lines: [{ productId: reservation.items[0]!.product.id, quantity: 2, unitPrice: 1000, discount: 0, tax: 0 }],
  };
  return writeTransaction(t.db, async (tx) => {
    const orderId = await placeOrder(tx, world.tenant.id, input);
    await t.services.payments.recordPayment(tx, world.tenant.id, {
      orderId,
      handler,
      reference: result.reference,
      amount: 2000,
      currency: 'EUR',
      outcome: result.outcome,
    });
    return orderId;
  });
}

const authorize = (token: string | null, handler = 'sandbox', id = checkoutId()) =>
  t.services.payments.authorize(world.tenant.id, { handler, token, amount: 2000, currency: 'EUR', checkoutId: id });

async function payment(orderId: string) {
  const found = (await graphqlData(t, world.tenant.key, ORDER, { id: orderId })).order.payment;
  if (!found) throw new Error(`order "${orderId}" has no payment`);
  return found;
}

async function orderPaymentStatus(orderId: string) {
  const [row] = await sql(t.databaseUrl, 'SELECT payment_status FROM orders WHERE id = $1', [orderId]);
  return row!.payment_status;
}

const tables = () =>
  sql(
    t.databaseUrl,
    `SELECT (SELECT count(*)::int FROM payments) AS payments, (SELECT count(*)::int FROM payment_refunds) AS refunds,
            (SELECT coalesce(json_agg(s ORDER BY tenant_id), '[]') FROM payment_settings s) AS settings`,
  );

beforeAll(async () => {
  world = await createStockWorld(t, 'Payments tenant', 2);
  await addStock(t, world, 'SKU-1', 100);
});

describe('the sandbox handler', () => {
  it('is off by default: not offered, and a payment with it is declined naming why', async () => {
    const handlers = await graphqlData(t, world.tenant.key, `{ paymentHandlers { id title } }`);
    expect(handlers.paymentHandlers.map((handler) => handler.id)).toEqual(['manual']);
    const result = await authorize('tok_sandbox_success');
    expect(result).toEqual({ outcome: 'declined', message: expect.stringMatching(/sandbox handler is off/) });
  });

  it('is switched on with setPaymentSettings (orders:write), then offered', async () => {
    const data = await graphqlData(t, world.tenant.key, SETTINGS, { input: { sandbox_enabled: true } });
    expect(data.setPaymentSettings.settings).toEqual({ sandbox_enabled: true });
    const handlers = await graphqlData(
      t,
      world.tenant.key,
      `{ paymentHandlers { id } paymentSettings { sandbox_enabled } }`,
    );
    expect(handlers.paymentHandlers.map((handler) => handler.id)).toEqual(['manual', 'sandbox']);
    expect(handlers.paymentSettings.sandbox_enabled).toBe(true);
  });

  it('captures tok_sandbox_success: the order is PAID', async () => {
    const result = await authorize('tok_sandbox_success');
    expect(result).toEqual({ outcome: 'captured', reference: expect.stringMatching(/^sandbox_/) });
    const orderId = await placeOrderPaidWith(result, 'sandbox');
    expect(await payment(orderId)).toEqual({
      handler: 'sandbox',
      status: 'CAPTURED',
      amount: 2000,
      refunded_amount: 0,
      currency: 'EUR',
    });
    expect(await orderPaymentStatus(orderId)).toBe('PAID');
  });

  it('authorizes tok_sandbox_authorize, then captureOrderPayment takes it: AUTHORIZED → PAID', async () => {
    const result = await authorize('tok_sandbox_authorize');
    expect(result.outcome).toBe('authorized');
    const orderId = await placeOrderPaidWith(result, 'sandbox');
    expect(await orderPaymentStatus(orderId)).toBe('AUTHORIZED');
    const data = await graphqlData(t, world.tenant.key, CAPTURE, { input: { order_id: orderId } });
    expect(data.captureOrderPayment.order.payment).toEqual({ status: 'CAPTURED' });
    expect(await orderPaymentStatus(orderId)).toBe('PAID');
    const again = await graphqlError(t, world.tenant.key, 'INVALID_STATE', CAPTURE, { input: { order_id: orderId } });
    expect(again.message).toMatch(/CAPTURED/);
  });

  it('declines tok_sandbox_decline (and unknown tokens) with a message', async () => {
    expect(await authorize('tok_sandbox_decline')).toEqual({
      outcome: 'declined',
      message: expect.stringMatching(/declined/),
    });
    expect(await authorize('tok_whatever')).toMatchObject({ outcome: 'declined' });
  });

  it('sends tok_sandbox_redirect to a page of this service that approves; authorizing again answers authorized', async () => {
    const id = checkoutId();
    const first = await authorize('tok_sandbox_redirect', 'sandbox', id);
    if (first.outcome !== 'requires_action') throw new Error(`expected requires_action, got ${first.outcome}`);
    const url = new URL(first.continueUrl);
    expect(url.pathname).toMatch(/^\/payments\/sandbox\/[0-9a-f-]{36}$/);
    // Asked again before the buyer acted: the same page.
    expect(await authorize('tok_sandbox_redirect', 'sandbox', id)).toEqual(first);
    const page = await t.app.inject({ method: 'GET', url: url.pathname });
    expect(page.statusCode).toBe(200);
    expect(page.headers['content-type']).toMatch(/text\/html/);
    expect(page.body).toContain('2000 EUR');
    expect(page.body).toContain('value="approve"');
    const approved = await t.app.inject({
      method: 'POST',
      url: url.pathname,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: 'decision=approve',
    });
    expect(approved.statusCode).toBe(200);
    expect(approved.body).toContain('You approved this payment');
    const second = await authorize('tok_sandbox_redirect', 'sandbox', id);
    expect(second).toEqual({ outcome: 'authorized', reference: expect.stringMatching(/^sandbox_/) });
    // Used up: a third authorization starts a new approval.
    expect((await authorize('tok_sandbox_redirect', 'sandbox', id)).outcome).toBe('requires_action');
    expect((await t.app.inject({ method: 'GET', url: `/payments/sandbox/${crypto.randomUUID()}` })).statusCode).toBe(
      404,
    );
  });

  it('a buyer who declines on the page gets the checkout declined', async () => {
    const id = checkoutId();
    const first = await authorize('tok_sandbox_redirect', 'sandbox', id);
    if (first.outcome !== 'requires_action') throw new Error('expected requires_action');
    await t.app.inject({
      method: 'POST',
      url: new URL(first.continueUrl).pathname,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: 'decision=decline',
    });
    expect(await authorize('tok_sandbox_redirect', 'sandbox', id)).toMatchObject({ outcome: 'declined' });
  });

  it('is refused in production mode (NODE_ENV=production), even when switched on', async () => {
    const production = await startSecondProcess(t, { env: { NODE_ENV: 'production' } });
    expect(production.config.production).toBe(true);
    expect(await production.services.payments.availableHandlers(world.tenant.id)).toEqual([
      { id: 'manual', title: expect.any(String) },
    ]);
    const result = await production.services.payments.authorize(world.tenant.id, {
      handler: 'sandbox',
      token: 'tok_sandbox_success',
      amount: 100,
      currency: 'EUR',
      checkoutId: checkoutId(),
    });
    expect(result).toEqual({ outcome: 'declined', message: expect.stringMatching(/production mode/) });
    const refused = await graphqlError(production, world.tenant.key, 'INVALID_STATE', SETTINGS, {
      input: { sandbox_enabled: true },
    });
    expect(refused.message).toMatch(/production mode/);
  });
});

describe('the manual handler', () => {
  it('places the order with its payment pending, then markOrderPaid makes it PAID', async () => {
    const result = await authorize(null, 'manual');
    expect(result).toEqual({ outcome: 'pending', reference: expect.stringMatching(/^manual_/) });
    const orderId = await placeOrderPaidWith(result, 'manual');
    expect(await orderPaymentStatus(orderId)).toBe('PENDING');
    const data = await graphqlData(t, world.tenant.key, MARK_PAID, {
      input: { order_id: orderId, idempotency_key: `paid-${orderId}` },
    });
    expect(data.markOrderPaid.order.payment).toEqual({ status: 'CAPTURED' });
    expect(await orderPaymentStatus(orderId)).toBe('PAID');
    // The same key answers the same result without doing it again; a second mark is refused.
    await graphqlData(t, world.tenant.key, MARK_PAID, {
      input: { order_id: orderId, idempotency_key: `paid-${orderId}` },
    });
    await graphqlError(t, world.tenant.key, 'INVALID_STATE', MARK_PAID, { input: { order_id: orderId } });
  });

  it('needs orders:write', async () => {
    const orderId = await placeOrderPaidWith(await authorize(null, 'manual'), 'manual');
    const reader = await createKey(t.rest, world.tenant.id, ['orders:read']);
    await graphqlError(t, reader, 'FORBIDDEN', MARK_PAID, { input: { order_id: orderId } });
    expect(await orderPaymentStatus(orderId)).toBe('PENDING');
  });
});

describe('canceling and refunding', () => {
  it('cancels a pending order: the payment is VOIDED, the order CANCELED, its stock released', async () => {
    const before = await levels(t, world, 'SKU-1');
    const orderId = await placeOrderPaidWith(await authorize(null, 'manual'), 'manual');
    await graphqlData(t, world.tenant.key, CANCEL, { input: { id: orderId } });
    expect((await payment(orderId)).status).toBe('VOIDED');
    expect(await orderPaymentStatus(orderId)).toBe('CANCELED');
    expect(await levels(t, world, 'SKU-1')).toEqual(before);
    await expectStockInvariants(t, world.tenant.id);
  });

  it('cancels a captured order: refunded in full through the handler, stock released', async () => {
    const before = await levels(t, world, 'SKU-1');
    const orderId = await placeOrderPaidWith(await authorize('tok_sandbox_success'), 'sandbox');
    expect((await levels(t, world, 'SKU-1')).committed).toBe(before.committed + 2);
    const data = await graphqlData(t, world.tenant.key, CANCEL, { input: { id: orderId } });
    expect(data.cancelOrder.order.status).toBe('CANCELLED');
    expect(await payment(orderId)).toMatchObject({ status: 'REFUNDED', refunded_amount: 2000 });
    expect(await orderPaymentStatus(orderId)).toBe('REFUNDED');
    expect(await levels(t, world, 'SKU-1')).toEqual(before);
    const refunds = await sql(
      t.databaseUrl,
      'SELECT r.amount::int, r.reason FROM payment_refunds r JOIN payments p ON p.id = r.payment_id WHERE p.order_id = $1',
      [orderId],
    );
    expect(refunds).toEqual([{ amount: 2000, reason: 'cancel' }]);
    await graphqlError(t, world.tenant.key, 'INVALID_STATE', REFUND, { input: { order_id: orderId } });
  });

  it('refunds in part, then the rest; more than is left is a VALIDATION_ERROR changing nothing', async () => {
    const orderId = await placeOrderPaidWith(await authorize('tok_sandbox_success'), 'sandbox');
    const part = await graphqlData(t, world.tenant.key, REFUND, { input: { order_id: orderId, amount: 500 } });
    expect(part.refundOrder.order.payment).toEqual({ status: 'PARTIALLY_REFUNDED', refunded_amount: 500 });
    expect(await orderPaymentStatus(orderId)).toBe('PAID');
    const tooMuch = await graphql(t, world.tenant.key, REFUND, { input: { order_id: orderId, amount: 1501 } });
    expect(tooMuch.body.errors?.[0]?.extensions).toMatchObject({ code: 'VALIDATION_ERROR', field: 'input.amount' });
    expect((await payment(orderId)).refunded_amount).toBe(500);
    const rest = await graphqlData(t, world.tenant.key, REFUND, { input: { order_id: orderId } });
    expect(rest.refundOrder.order.payment).toEqual({ status: 'REFUNDED', refunded_amount: 2000 });
    expect(await orderPaymentStatus(orderId)).toBe('REFUNDED');
  });

  it('refunds on return with refund_amount, in the return’s transaction', async () => {
    const orderId = await placeOrderPaidWith(await authorize('tok_sandbox_success'), 'sandbox');
    const shipped = await graphqlData(t, world.tenant.key, SHIP, { input: { id: orderId } });
    const itemId = shipped.shipOrder.order.items[0]!.id;
    const tooMuch = await graphql(t, world.tenant.key, RETURN, {
      input: { order_id: orderId, items: [{ item_id: itemId }], refund_amount: 2001 },
    });
    expect(tooMuch.body.errors?.[0]?.extensions?.code).toBe('VALIDATION_ERROR');
    const [item] = await sql(t.databaseUrl, 'SELECT state FROM order_items WHERE id = $1', [itemId]);
    expect(item).toEqual({ state: 'SHIPPED' });
    const data = await graphqlData(t, world.tenant.key, RETURN, {
      input: { order_id: orderId, items: [{ item_id: itemId }], refund_amount: 1200 },
    });
    expect(data.returnOrderItems.order.payment).toEqual({ status: 'PARTIALLY_REFUNDED', refunded_amount: 1200 });
  });

  it('refuses markOrderPaid and refunds on an order without money', async () => {
    const data = await graphqlData(
      t,
      world.tenant.key,
      `mutation($input: CreateOrderInput!) { createOrder(input: $input) { order { id } } }`,
      {
        input: {
          business_id: world.catalog.businessId,
          warehouse_id: world.warehouseId,
          channel_id: world.channelId,
          items: [{ sku: 'SKU-1', quantity: 1 }],
        },
      },
    );
    const orderId = data.createOrder.order.id;
    await graphqlError(t, world.tenant.key, 'INVALID_STATE', MARK_PAID, { input: { order_id: orderId } });
    expect((await graphqlData(t, world.tenant.key, ORDER, { id: orderId })).order.payment).toBeNull();
  });
});

describe('card numbers', () => {
  it('are refused with a 400 that does not echo them, and are never logged or stored', async () => {
    const digits = CARD.replace(/\D/g, '');
    for (const token of [CARD, digits, '4000-0000-0000-0001', '1234567890123']) {
      const refusal = await authorize(token).then(
        () => null,
        (error: unknown) => error,
      );
      expect(refusal).toMatchObject({ key: 'BAD_REQUEST', status: 400, details: [{ field: 'token' }] });
      expect(JSON.stringify(refusal) + String(refusal)).not.toContain(token);
    }
    // Sent where the API takes an id: refused without echoing it either.
    const sent = await graphql(t, world.tenant.key, REFUND, { input: { order_id: digits } });
    expect(sent.body.errors?.[0]?.extensions?.code).toBe('VALIDATION_ERROR');
    expect(sent.rawBody).not.toContain(digits);
    expect(logLines.filter((line) => line.includes('looks like a card number'))).toHaveLength(4);
    expect(logLines.join('\n')).not.toContain(digits);
    const stored = await sql(
      t.databaseUrl,
      `SELECT count(*)::int AS n FROM payments WHERE reference LIKE $1 OR handler LIKE $1`,
      [`%${digits}%`],
    );
    expect(stored).toEqual([{ n: 0 }]);
  });
});

describe('hostile bodies', () => {
  const post = (payload: string) =>
    t.app.inject({
      method: 'POST',
      url: '/graphql',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${world.tenant.key}` },
      payload,
    });

  it('refuses deep nesting, many keys, huge arrays and long strings with the documented 400, changing nothing', async () => {
    await graphqlData(t, world.tenant.key, SETTINGS, { input: { sandbox_enabled: false } });
    const before = await tables();
    const deep = await post(
      `{"query":${JSON.stringify(SETTINGS)},"variables":{"input":${'['.repeat(10_000)}${']'.repeat(10_000)}}}`,
    );
    expect(deep.statusCode).toBe(400);
    const keys = Object.fromEntries(Array.from({ length: 5000 }, (_, index) => [`k${index}`, true]));
    const many = await post(
      JSON.stringify({ query: SETTINGS, variables: { input: { sandbox_enabled: true, ...keys } } }),
    );
    expect(many.statusCode).toBe(400);
    const huge = await graphql(t, world.tenant.key, REFUND, {
      input: { order_id: Array.from({ length: 50_000 }, () => 'a'), amount: 1 },
    });
    expect(huge.body.errors?.[0]?.extensions?.code).toBe('VALIDATION_ERROR');
    const long = await graphql(t, world.tenant.key, REFUND, { input: { order_id: 'x'.repeat(200_000), amount: 1 } });
    expect(long.body.errors?.[0]?.extensions?.code).toBe('VALIDATION_ERROR');
    expect(long.rawBody.length).toBeLessThan(10_000);
    const unknownField = await graphql(t, world.tenant.key, SETTINGS, {
      input: { sandbox_enabled: true, sandbox_forever: true },
    });
    expect(unknownField.body.errors?.[0]?.extensions?.code).toBe('VALIDATION_ERROR');
    expect(await tables()).toEqual(before);
  });
});
