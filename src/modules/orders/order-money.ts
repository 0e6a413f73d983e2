/**
 * What an order with money carries (the orders a checkout places): the buyer, the currency, the
 * lines' unit prices, discounts and taxes, the totals, the payment status, the fulfillment chosen
 * and the checkout it came from. Every amount is an integer in the currency's minor units.
 */
import { z } from 'zod';
import { int8, int8OrNull, uuid } from '../../kernel/rows';

export const PAYMENT_STATUSES = ['PENDING', 'AUTHORIZED', 'PAID', 'REFUNDED', 'CANCELED'] as const;
export type OrderPaymentStatus = (typeof PAYMENT_STATUSES)[number];

export interface OrderBuyer {
  email: string | null;
  name: string | null;
  phone: string | null;
}

export interface OrderTotals {
  /** Σ unit price × quantity. */
  subtotal: number;
  /** Σ discounts applied. */
  discount: number;
  /** The fulfillment option's charge. */
  fulfillment: number;
  /** Σ tax (included in the prices when `taxInclusive`). */
  tax: number;
  /** subtotal − discount + fulfillment + (taxInclusive ? 0 : tax). */
  total: number;
}

export interface OrderTaxLine {
  name: string;
  rateBasisPoints: number;
  amount: number;
}

export interface OrderDiscount {
  discountId: string;
  code: string | null;
  title: string;
  amount: number;
}

export interface OrderFulfillment {
  optionId: string;
  methodId: string | null;
  type: 'shipping' | 'pickup';
  title: string;
  amount: number;
  warehouseId: string | null;
}

export interface OrderDestination {
  country: string;
  region?: string | null;
  postalCode?: string | null;
  [field: string]: unknown;
}

export interface OrderMoney {
  checkoutId: string | null;
  buyer: OrderBuyer;
  currency: string;
  taxInclusive: boolean;
  totals: OrderTotals;
  taxLines: OrderTaxLine[];
  discounts: OrderDiscount[];
  paymentStatus: OrderPaymentStatus;
  fulfillment: OrderFulfillment | null;
  destination: OrderDestination | null;
}

/** An order item's money: null on orders without money. */
export interface OrderItemMoney {
  unitPrice: number;
  discount: number;
  tax: number;
}

export const OrderMoneyRow = z
  .object({
    checkoutId: uuid.nullable(),
    buyerEmail: z.string().nullable(),
    buyerName: z.string().nullable(),
    buyerPhone: z.string().nullable(),
    currency: z.string(),
    taxInclusive: z.boolean(),
    subtotal: int8,
    discount: int8,
    fulfillment: int8,
    tax: int8,
    total: int8,
    taxLines: z.array(z.object({ name: z.string(), rateBasisPoints: int8, amount: int8 })).nullable(),
    discounts: z
      .array(z.object({ discountId: z.string(), code: z.string().nullable(), title: z.string(), amount: int8 }))
      .nullable(),
    paymentStatus: z.enum(PAYMENT_STATUSES),
    fulfillmentChoice: z
      .object({
        optionId: z.string(),
        methodId: z.string().nullable(),
        type: z.enum(['shipping', 'pickup']),
        title: z.string(),
        amount: int8,
        warehouseId: z.string().nullable(),
      })
      .nullable(),
    destination: z.looseObject({ country: z.string() }).nullable(),
  })
  .transform((row): OrderMoney => ({
    checkoutId: row.checkoutId,
    buyer: { email: row.buyerEmail, name: row.buyerName, phone: row.buyerPhone },
    currency: row.currency,
    taxInclusive: row.taxInclusive,
    totals: {
      subtotal: row.subtotal,
      discount: row.discount,
      fulfillment: row.fulfillment,
      tax: row.tax,
      total: row.total,
    },
    taxLines: row.taxLines ?? [],
    discounts: row.discounts ?? [],
    paymentStatus: row.paymentStatus,
    fulfillment: row.fulfillmentChoice,
    destination: row.destination as OrderDestination | null,
  }));

export const OrderItemMoneyFields = { unitPrice: int8OrNull, discount: int8OrNull, tax: int8OrNull };

/** The SQL of an order's money as one JSON value (`o` the orders row), null without money. */
export const ORDER_MONEY_JSON = `
  CASE WHEN o.currency IS NULL THEN NULL ELSE json_build_object(
    'checkoutId', o.checkout_id, 'buyerEmail', o.buyer_email, 'buyerName', o.buyer_name, 'buyerPhone', o.buyer_phone,
    'currency', o.currency, 'taxInclusive', o.tax_inclusive, 'subtotal', o.subtotal, 'discount', o.discount_total,
    'fulfillment', o.fulfillment_total, 'tax', o.tax_total, 'total', o.total, 'taxLines', o.tax_lines,
    'discounts', o.discounts, 'paymentStatus', o.payment_status, 'fulfillmentChoice', o.fulfillment,
    'destination', o.destination) END`;
