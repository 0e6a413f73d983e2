/**
 * Placing an order with money (what a checkout's completion does): inside the caller's transaction,
 * the order row with its buyer, currency, totals and payment status, its items with unit prices,
 * discounts and taxes, and the units of the held reservation committed to them (the reservation
 * becomes CONVERTED, as `convertReservation` does).
 */
import type { Tx } from '../../kernel/db';
import { invalidState } from '../../kernel/errors';
import { uuidv7 } from '../../kernel/ids';
import type { Principal } from '../../kernel/principal';
import { claimForOrder, findReservation } from '../reservations';
import * as stock from '../stock';
import type { OrderMoney, OrderPaymentStatus } from './order-money';
import { insertItems, type OrderStatus } from './orders.repository';

/** A JSON column's value: SQL NULL for null. */
const json = (value: unknown) => (value == null ? null : JSON.stringify(value));

export interface PlaceOrderLine {
  productId: string;
  quantity: number;
  /** Minor units of one unit, before discounts. */
  unitPrice: number;
  /** The discount allocated to the line (all its units). */
  discount: number;
  /** The line's tax (all its units). */
  tax: number;
  /** The reservations holding the line's units (summing to `quantity`); default all from `reservationId`. */
  holds?: { reservationId: string; quantity: number }[];
}

export interface PlaceOrderInput extends OrderMoney {
  /** The new order's id; a UUIDv7 by default. */
  orderId?: string;
  /** The ACTIVE reservation holding the units of every line without `holds` of its own. */
  reservationId?: string;
  actor: Principal['actor'];
  lines: PlaceOrderLine[];
}

/** Amounts that do not add up are a bug of the caller, never the buyer's: thrown as such. */
function checkTotals(input: PlaceOrderInput) {
  const { totals } = input;
  const amounts = [
    ...Object.values(totals),
    ...input.lines.flatMap((line) => [line.unitPrice, line.discount, line.tax]),
  ];
  if (amounts.some((amount) => !Number.isSafeInteger(amount) || amount < 0))
    throw new Error('order amounts must be non-negative integers in minor units');
  const subtotal = input.lines.reduce((sum, line) => sum + line.unitPrice * line.quantity, 0);
  const discount = input.lines.reduce((sum, line) => sum + line.discount, 0);
  const total = totals.subtotal - totals.discount + totals.fulfillment + (input.taxInclusive ? 0 : totals.tax);
  if (subtotal !== totals.subtotal || discount !== totals.discount || total !== totals.total)
    throw new Error(`order totals do not add up: ${JSON.stringify(totals)}`);
  if (!/^[A-Z]{3}$/.test(input.currency)) throw new Error(`"${input.currency}" is not an ISO 4217 currency`);
}

/**
 * Writes an order with money from held reservations in the caller's transaction: every line's
 * units go from RESERVED to COMMITTED without ever being available, the reservations' other units
 * (none, for a checkout's holds) are released, and each reservation becomes CONVERTED. INVALID_STATE
 * when a reservation expired or ended meanwhile (its units may be sold). Returns the order's id.
 */
export async function placeOrder(tx: Tx, tenantId: string, input: PlaceOrderInput): Promise<string> {
  checkTotals(input);
  const orderId = input.orderId ?? uuidv7();
  // UUIDv7s of one millisecond are not ordered among themselves: sorted, items keep input order.
  const ids = input.lines.map(() => uuidv7()).sort();
  const items = input.lines.map(({ holds: _holds, ...line }, index) => ({ ...line, id: ids[index]! }));
  const held = new Map<string, { id: string; productId: string; quantity: number }[]>();
  input.lines.forEach((line, index) => {
    const holds = line.holds ?? [{ reservationId: input.reservationId!, quantity: line.quantity }];
    if (holds.reduce((sum, hold) => sum + hold.quantity, 0) !== line.quantity)
      throw new Error(`the holds of line ${index} do not sum to its quantity`);
    for (const hold of holds) {
      const entry = held.get(hold.reservationId) ?? [];
      entry.push({ id: items[index]!.id, productId: line.productId, quantity: hold.quantity });
      held.set(hold.reservationId, entry);
    }
  });
  const reservations = [];
  for (const reservationId of held.keys()) {
    const reservation = await findReservation(tx, tenantId, reservationId);
    if (reservation.status !== 'ACTIVE')
      throw invalidState(`reservation "${reservation.id}" is ${reservation.status} and holds no stock`);
    reservations.push(reservation);
  }
  const header = reservations[0];
  if (!header) throw new Error('an order needs at least one held line');
  await tx.$executeRaw`
    INSERT INTO orders (id, tenant_id, business_id, warehouse_id, channel_id, checkout_id, buyer_email, buyer_name,
                        buyer_phone, currency, tax_inclusive, subtotal, discount_total, fulfillment_total, tax_total,
                        total, tax_lines, discounts, payment_status, fulfillment, destination)
    VALUES (${orderId}::uuid, ${tenantId}::uuid, ${header.businessId}::uuid, ${header.warehouseId}::uuid,
            ${header.channelId}::uuid, ${input.checkoutId}::uuid, ${input.buyer.email}, ${input.buyer.name},
            ${input.buyer.phone}, ${input.currency}, ${input.taxInclusive}, ${String(input.totals.subtotal)}::bigint,
            ${String(input.totals.discount)}::bigint, ${String(input.totals.fulfillment)}::bigint,
            ${String(input.totals.tax)}::bigint, ${String(input.totals.total)}::bigint,
            ${JSON.stringify(input.taxLines)}::jsonb, ${JSON.stringify(input.discounts)}::jsonb,
            ${input.paymentStatus}::order_payment_status, ${json(input.fulfillment)}::jsonb,
            ${json(input.destination)}::jsonb)`;
  await insertItems(tx, tenantId, orderId, items);
  for (const reservation of reservations) {
    const change: stock.StockChange = {
      source: 'ALLOCATION',
      actor: input.actor,
      references: [
        { type: 'Order', id: orderId },
        { type: 'Reservation', id: reservation.id },
      ],
    };
    await stock.commitReserved(tx, tenantId, reservation.id, held.get(reservation.id)!, change, () =>
      claimForOrder(tx, tenantId, reservation.id, orderId),
    );
  }
  return orderId;
}

/** Sets the payment status of an order with money (the payments module, through the orders' face). */
export async function setPaymentStatus(tx: Tx, tenantId: string, orderId: string, status: OrderPaymentStatus) {
  const updated = await tx.$executeRaw`
    UPDATE orders SET payment_status = ${status}::order_payment_status, updated_at = now()
     WHERE tenant_id = ${tenantId}::uuid AND id = ${orderId}::uuid AND payment_status IS NOT NULL`;
  if (updated !== 1) throw invalidState(`order "${orderId}" has no payment`);
}

/**
 * Locks the row of an order with money for a change of its payment and answers its status: the
 * payments module takes this lock before its own, as canceling does (order, then payment).
 */
export async function lockOrderForPayment(tx: Tx, tenantId: string, orderId: string): Promise<OrderStatus> {
  const rows = await tx.$queryRaw<{ status: OrderStatus }[]>`
    SELECT status::text AS status FROM orders
     WHERE tenant_id = ${tenantId}::uuid AND id = ${orderId}::uuid AND payment_status IS NOT NULL FOR UPDATE`;
  if (!rows[0]) throw invalidState(`order "${orderId}" has no payment`);
  return rows[0].status;
}
