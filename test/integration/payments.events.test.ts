/**
 * Order events to the webhook of the order's sales channel: placed, paid, shipped, refunded and
 * canceled, each signed with the channel's secret and retried after a failed attempt, as the
 * channel's stock broadcasts are.
 */
import { createHmac } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { writeTransaction } from '../../src/kernel/db';
import { placeOrder } from '../../src/modules/orders';
import { createTenant } from '../helpers/app';
import { receiver, startBroadcastApp, until } from './broadcasts.fixtures';
import { addStock, type StockWorld } from './orders.fixtures';
import { createCatalog, graphqlData } from './stock.fixtures';

const t = await startBroadcastApp();
const SECRET = 'order-events-secret-0123';
let world: StockWorld;
let refusedOnce = false;
// The first order.refunded delivery is refused: it must come again.
const hook = await receiver(() => {
  const last = hook.received.at(-1)?.body ?? '';
  if (!refusedOnce && last.includes('"order.refunded"')) {
    refusedOnce = true;
    return 500;
  }
  return 200;
});

const orderEvents = async () =>
  hook.received
    .map((delivery) => ({ ...delivery, event: JSON.parse(delivery.body) as Record<string, unknown> }))
    .filter((delivery) => String(delivery.event.type).startsWith('order.'));

async function placePaidOrder() {
  const data = await graphqlData(
    t,
    world.tenant.key,
    `mutation($input: CreateReservationInput!) { createReservation(input: $input) {
      reservation { id items { product { id } } } } }`,
    {
      input: {
        business_id: world.catalog.businessId,
        warehouse_id: world.warehouseId,
        channel_id: world.channelId,
        customer: { name: 'Ada Lovelace' },
        items: [{ sku: 'SKU-1', quantity: 1 }],
        expires_at: Date.now() + 3_600_000,
      },
    },
  );
  const reservation = data.createReservation.reservation;
  const result = await t.services.payments.authorize(world.tenant.id, {
    handler: 'sandbox',
    token: 'tok_sandbox_success',
    amount: 1000,
    currency: 'EUR',
    checkoutId: crypto.randomUUID(),
  });
  if (result.outcome !== 'captured') throw new Error(`expected captured, got ${result.outcome}`);
  return writeTransaction(t.db, async (tx) => {
    const orderId = await placeOrder(tx, world.tenant.id, {
      reservationId: reservation.id,
      checkoutId: null,
      actor: { type: 'api_key', id: 'test' },
      buyer: { email: 'ada@example.com', name: null, phone: null },
      currency: 'EUR',
      taxInclusive: true,
      totals: { subtotal: 1000, discount: 0, fulfillment: 0, tax: 0, total: 1000 },
      taxLines: [],
      discounts: [],
      paymentStatus: 'PENDING',
      fulfillment: null,
      destination: null,
      lines: [{ productId: reservation.items[0]!.product.id, quantity: 1, unitPrice: 1000, discount: 0, tax: 0 }],
    });
    await t.services.payments.recordPayment(tx, world.tenant.id, {
      orderId,
      handler: 'sandbox',
      reference: result.reference,
      amount: 1000,
      currency: 'EUR',
      outcome: 'captured',
    });
    return orderId;
  });
}

beforeAll(async () => {
  const tenant = await createTenant(t.rest, 'Order events');
  const catalog = await createCatalog(t, tenant.key, { products: 1 });
  const channel = await graphqlData(
    t,
    tenant.key,
    `mutation { createSalesChannel(input: {name: "Web"}) { sales_channel { id } } }`,
  );
  world = {
    tenant,
    catalog,
    channelId: channel.createSalesChannel.sales_channel.id,
    warehouseId: catalog.warehouseIds[0]!,
  };
  await addStock(t, world, 'SKU-1', 10);
  await graphqlData(
    t,
    tenant.key,
    `mutation($input: SetSalesChannelWebhookInput!) { setSalesChannelWebhook(input: $input) { channel_id } }`,
    { input: { channel_id: world.channelId, url: hook.url, secret: SECRET } },
  );
  await graphqlData(
    t,
    tenant.key,
    `mutation { setPaymentSettings(input: {sandbox_enabled: true}) { settings {
    sandbox_enabled } } }`,
  );
});

describe('order events', () => {
  it('posts placed, paid, shipped, refunded and canceled, signed, and retries a refused delivery', async () => {
    const orderId = await placePaidOrder();
    await until(orderEvents, (events) => events.length >= 2);
    await graphqlData(
      t,
      world.tenant.key,
      `mutation($input: ShipOrderInput!) { shipOrder(input: $input) {
      order { id } } }`,
      { input: { id: orderId } },
    );
    await until(orderEvents, (events) => events.length >= 3);
    await graphqlData(
      t,
      world.tenant.key,
      `mutation($input: RefundOrderInput!) { refundOrder(input: $input) {
      order { id } } }`,
      { input: { order_id: orderId, amount: 400 } },
    );
    const second = await placePaidOrder();
    await graphqlData(
      t,
      world.tenant.key,
      `mutation($input: CancelOrderInput!) { cancelOrder(input: $input) {
      order { id } } }`,
      { input: { id: second } },
    );
    // Both orders' events, the refused refund's second attempt included.
    const events = await until(orderEvents, (found) => found.length >= 9);
    for (const delivery of events)
      expect(delivery.headers['x-signature-256']).toBe(
        `sha256=${createHmac('sha256', SECRET).update(delivery.body).digest('hex')}`,
      );
    const of = (id: string) => events.filter((delivery) => delivery.event.order_id === id);
    const typesOf = (id: string) =>
      of(id)
        .map((delivery) => String(delivery.event.type))
        .sort();
    // One claim posts its deliveries at once: they may arrive in any order.
    expect(typesOf(orderId)).toEqual([
      'order.paid',
      'order.placed',
      'order.refunded',
      'order.refunded',
      'order.shipped',
    ]);
    const event = (id: string, type: string) => of(id).find((delivery) => delivery.event.type === type)!.event;
    expect(event(orderId, 'order.placed')).toMatchObject({
      channel_id: world.channelId,
      payment_status: 'PAID',
      total: 1000,
      currency: 'EUR',
    });
    expect(event(orderId, 'order.shipped')).toMatchObject({ status: 'SHIPPED' });
    const refunds = of(orderId).filter((delivery) => delivery.event.type === 'order.refunded');
    expect(refunds.map((delivery) => delivery.headers['x-delivery-attempt'])).toEqual(['1', '2']);
    // The retry is the same delivery, sent again.
    expect(refunds[1]!.event.delivery_id).toBe(refunds[0]!.event.delivery_id);
    expect(refunds[0]!.event).toMatchObject({ amount: 400, refunded_amount: 400, reason: 'refund' });
    expect(typesOf(second)).toEqual(['order.canceled', 'order.paid', 'order.placed', 'order.refunded']);
    expect(event(second, 'order.canceled')).toMatchObject({ payment: 'REFUNDED', refunded_amount: 1000 });
    expect(event(second, 'order.refunded')).toMatchObject({ amount: 1000, reason: 'cancel' });
  });
});
