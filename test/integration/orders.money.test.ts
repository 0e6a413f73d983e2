/**
 * Orders with money: `placeOrder` (the orders' face a checkout completes with) writes the buyer,
 * currency, totals, payment status and the lines' prices, discounts and taxes, and commits the
 * held reservation's units to the order in the caller's transaction.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { writeTransaction } from '../../src/kernel/db';
import { loadOrder, placeOrder, type PlaceOrderInput } from '../../src/modules/orders';
import { startTestApp } from '../helpers/app';
import { sql } from '../helpers/db';
import { addStock, createStockWorld, expectStockInvariants, levels, type StockWorld } from './orders.fixtures';
import { graphqlData } from './stock.fixtures';

const t = await startTestApp();
let world: StockWorld;

const RESERVE = `mutation($input: CreateReservationInput!) { createReservation(input: $input) {
  reservation { id items { product { id } sku quantity } } } }`;
const SHIPMENT = `mutation($input: CreateShipmentInput!) { createShipment(input: $input) { order { id } } }`;

async function reserve(items: { sku: string; quantity: number }[], expiresAt = Date.now() + 3_600_000) {
  const data = await graphqlData(t, world.tenant.key, RESERVE, {
    input: {
      business_id: world.catalog.businessId,
      warehouse_id: world.warehouseId,
      channel_id: world.channelId,
      customer: { name: 'Ada Lovelace' },
      items,
      expires_at: expiresAt,
    },
  });
  const reservation = data.createReservation.reservation;
  return {
    id: reservation.id as string,
    products: (reservation.items as { product: { id: string } }[]).map((item) => item.product.id),
  };
}

/** Two lines: 3 × 1000 with 300 off (tax 540), 2 × 250 with 0 off (tax 100); shipping 500 (tax 100). */
function input(reservationId: string, products: string[]): PlaceOrderInput {
  return {
    reservationId,
    checkoutId: null,
    actor: { type: 'api_key', id: 'test' },
    buyer: { email: 'ada@example.com', name: 'Ada Lovelace', phone: null },
    currency: 'EUR',
    taxInclusive: false,
    totals: { subtotal: 3500, discount: 300, fulfillment: 500, tax: 740, total: 4440 },
    taxLines: [{ name: 'VAT 20 %', rateBasisPoints: 2000, amount: 740 }],
    discounts: [{ discountId: 'd-1', code: 'TEN', title: '10 % off', amount: 300 }],
    paymentStatus: 'PENDING',
    fulfillment: {
      optionId: 'o-1',
      methodId: null,
      type: 'shipping',
      title: 'Standard',
      amount: 500,
      warehouseId: null,
    },
    destination: { country: 'FR', postalCode: '75001' },
    lines: [
      { productId: products[0]!, quantity: 3, unitPrice: 1000, discount: 300, tax: 540 },
      { productId: products[1]!, quantity: 2, unitPrice: 250, discount: 0, tax: 100 },
    ],
  };
}

beforeAll(async () => {
  world = await createStockWorld(t, 'Money tenant', 3);
  await addStock(t, world, 'SKU-1', 20);
  await addStock(t, world, 'SKU-2', 20);
});

describe('placeOrder', () => {
  it('writes the order with its money and commits the held units, converting the reservation', async () => {
    const { id, products } = await reserve([
      { sku: 'SKU-1', quantity: 3 },
      { sku: 'SKU-2', quantity: 2 },
    ]);
    const before = await levels(t, world, 'SKU-1');
    const orderId = await writeTransaction(t.db, (tx) => placeOrder(tx, world.tenant.id, input(id, products)));
    const order = await loadOrder(t.db, world.tenant.id, orderId);
    expect(order.money).toEqual({
      checkoutId: null,
      buyer: { email: 'ada@example.com', name: 'Ada Lovelace', phone: null },
      currency: 'EUR',
      taxInclusive: false,
      totals: { subtotal: 3500, discount: 300, fulfillment: 500, tax: 740, total: 4440 },
      taxLines: [{ name: 'VAT 20 %', rateBasisPoints: 2000, amount: 740 }],
      discounts: [{ discountId: 'd-1', code: 'TEN', title: '10 % off', amount: 300 }],
      paymentStatus: 'PENDING',
      fulfillment: {
        optionId: 'o-1',
        methodId: null,
        type: 'shipping',
        title: 'Standard',
        amount: 500,
        warehouseId: null,
      },
      destination: { country: 'FR', postalCode: '75001' },
    });
    expect(order.items.map((item) => [item.sku, item.quantity, item.unitPrice, item.discount, item.tax])).toEqual([
      ['SKU-1', 3, 1000, 300, 540],
      ['SKU-2', 2, 250, 0, 100],
    ]);
    expect(await levels(t, world, 'SKU-1')).toEqual({
      ...before,
      reserved: before.reserved - 3,
      committed: before.committed + 3,
    });
    const [reservation] = await sql(t.databaseUrl, 'SELECT status, order_id FROM reservations WHERE id = $1', [id]);
    expect(reservation).toEqual({ status: 'CONVERTED', order_id: orderId });
    await expectStockInvariants(t, world.tenant.id);

    // GraphQL shows the same money.
    const read = await graphqlData<{ order: { money: unknown; items: unknown[] } }>(
      t,
      world.tenant.key,
      `query($id: ID!) { order(id: $id) {
        money { checkout_id buyer_email buyer_name currency tax_inclusive payment_status fulfillment_title
                totals { type amount } tax_lines { name rate_basis_points amount } discounts { code title amount } }
        items { sku unit_price discount tax } } }`,
      { id: orderId },
    );
    expect(read.order.money).toEqual({
      checkout_id: null,
      buyer_email: 'ada@example.com',
      buyer_name: 'Ada Lovelace',
      currency: 'EUR',
      tax_inclusive: false,
      payment_status: 'PENDING',
      fulfillment_title: 'Standard',
      totals: [
        { type: 'subtotal', amount: 3500 },
        { type: 'discount', amount: 300 },
        { type: 'fulfillment', amount: 500 },
        { type: 'tax', amount: 740 },
        { type: 'total', amount: 4440 },
      ],
      tax_lines: [{ name: 'VAT 20 %', rate_basis_points: 2000, amount: 740 }],
      discounts: [{ code: 'TEN', title: '10 % off', amount: 300 }],
    });
    expect(read.order.items).toEqual([
      { sku: 'SKU-1', unit_price: 1000, discount: 300, tax: 540 },
      { sku: 'SKU-2', unit_price: 250, discount: 0, tax: 100 },
    ]);
  });

  it('refuses totals that do not add up and writes nothing', async () => {
    const { id, products } = await reserve([
      { sku: 'SKU-1', quantity: 3 },
      { sku: 'SKU-2', quantity: 2 },
    ]);
    const wrong = input(id, products);
    wrong.totals = { ...wrong.totals, total: 4439 };
    const orders = await sql(t.databaseUrl, 'SELECT count(*)::int AS n FROM orders');
    await expect(writeTransaction(t.db, (tx) => placeOrder(tx, world.tenant.id, wrong))).rejects.toThrow(
      /do not add up/,
    );
    expect(await sql(t.databaseUrl, 'SELECT count(*)::int AS n FROM orders')).toEqual(orders);
    const [reservation] = await sql(t.databaseUrl, 'SELECT status FROM reservations WHERE id = $1', [id]);
    expect(reservation).toEqual({ status: 'ACTIVE' });
  });

  it('refuses an expired hold with INVALID_STATE: its units may be sold', async () => {
    const { id, products } = await reserve([
      { sku: 'SKU-1', quantity: 3 },
      { sku: 'SKU-2', quantity: 2 },
    ]);
    await sql(t.databaseUrl, `UPDATE reservations SET expires_at = now() - interval '1 second' WHERE id = $1`, [id]);
    await expect(
      writeTransaction(t.db, (tx) => placeOrder(tx, world.tenant.id, input(id, products))),
    ).rejects.toMatchObject({ key: 'INVALID_STATE' });
  });

  it('splits the discount and tax of an item shipped in part exactly (floor to the shipped part)', async () => {
    const { id, products } = await reserve([
      { sku: 'SKU-1', quantity: 3 },
      { sku: 'SKU-2', quantity: 2 },
    ]);
    const orderId = await writeTransaction(t.db, (tx) => placeOrder(tx, world.tenant.id, input(id, products)));
    const first = (await loadOrder(t.db, world.tenant.id, orderId)).items[0]!;
    await graphqlData(t, world.tenant.key, SHIPMENT, {
      input: { order_id: orderId, items: [{ item_id: first.id, quantity: 2 }] },
    });
    const items = (await loadOrder(t.db, world.tenant.id, orderId)).items.filter((item) => item.sku === 'SKU-1');
    // 300 × 2 / 3 = 200 and 540 × 2 / 3 = 360 shipped; 100 and 180 stay.
    expect(items.map((item) => [item.state, item.quantity, item.unitPrice, item.discount, item.tax]).sort()).toEqual(
      [
        ['ALLOCATED', 1, 1000, 100, 180],
        ['SHIPPED', 2, 1000, 200, 360],
      ].sort(),
    );
  });

  it('leaves orders made without money without it', async () => {
    const { id } = await reserve([{ sku: 'SKU-1', quantity: 1 }]);
    const data = await graphqlData(
      t,
      world.tenant.key,
      `mutation($input: CreateOrderInput!) { createOrder(input: $input) { order { id } } }`,
      { input: { reservation_id: id } },
    );
    const order = await loadOrder(t.db, world.tenant.id, data.createOrder.order.id);
    expect(order.money).toBeNull();
    expect(order.items[0]).toMatchObject({ unitPrice: null, discount: null, tax: null });
    const read = await graphqlData<{ order: { money: unknown; items: { unit_price: unknown }[] } }>(
      t,
      world.tenant.key,
      'query($id: ID!) { order(id: $id) { money { currency } items { unit_price } } }',
      { id: data.createOrder.order.id },
    );
    expect(read.order).toEqual({ money: null, items: [{ unit_price: null }] });
  });
});
