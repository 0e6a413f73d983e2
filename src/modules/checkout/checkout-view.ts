/** A checkout as GraphQL answers it, in UCP's shape and names (stored as the answer of an idempotent write). */
import type { CheckoutMessage, CheckoutRecord, CheckoutStatus } from './checkout.types';

export interface CheckoutView {
  id: string;
  status: CheckoutStatus;
  currency: string;
  tax_inclusive: boolean;
  business_id: string;
  channel_id: string;
  line_items: {
    id: string;
    item: { id: string; sku: string | null; title: string | null; price: number | null };
    quantity: number;
    held: boolean;
    totals: { type: string; amount: number }[];
  }[];
  buyer: {
    email: string | null;
    first_name: string | null;
    last_name: string | null;
    full_name: string | null;
    phone_number: string | null;
  } | null;
  destination: { country: string; region: string | null; postal_code: string | null } | null;
  totals: { type: string; amount: number }[];
  tax_lines: { name: string; rate_basis_points: number; amount: number }[];
  messages: CheckoutMessage[];
  discounts: {
    codes: string[];
    applied: {
      discount_id: string;
      code: string | null;
      title: string;
      amount: number;
      automatic: boolean;
      allocations: { line_item_id: string; amount: number }[];
    }[];
  };
  fulfillment: {
    selected_option_id: string | null;
    options: {
      id: string;
      method_id: string;
      type: string;
      title: string;
      amount: number;
      warehouse_id: string | null;
      groups: { warehouse_id: string; line_item_ids: string[] }[];
    }[];
  };
  payment: { handler: string } | null;
  order: { id: string } | null;
  continue_url: string | null;
  expires_at: number;
  created_at: number;
  updated_at: number;
}

export function toView(checkout: CheckoutRecord): CheckoutView {
  const { totals } = checkout;
  return {
    id: checkout.id,
    status: checkout.status,
    currency: checkout.currency,
    tax_inclusive: checkout.taxInclusive,
    business_id: checkout.businessId,
    channel_id: checkout.channelId,
    line_items: checkout.lines.map((line) => {
      const subtotal = (line.unitPrice ?? 0) * line.quantity;
      return {
        id: line.id,
        item: { id: line.productId ?? line.reference, sku: line.sku, title: line.title, price: line.unitPrice },
        quantity: line.quantity,
        held: line.holdId !== null,
        totals: [
          { type: 'subtotal', amount: subtotal },
          { type: 'discount', amount: line.discount },
          { type: 'tax', amount: line.tax },
          { type: 'total', amount: subtotal - line.discount + (checkout.taxInclusive ? 0 : line.tax) },
        ],
      };
    }),
    buyer: checkout.buyer && {
      email: checkout.buyer.email,
      first_name: checkout.buyer.firstName,
      last_name: checkout.buyer.lastName,
      full_name: checkout.buyer.fullName,
      phone_number: checkout.buyer.phoneNumber,
    },
    destination: checkout.destination && {
      country: checkout.destination.country,
      region: checkout.destination.region,
      postal_code: checkout.destination.postalCode,
    },
    totals: [
      { type: 'subtotal', amount: totals.subtotal },
      { type: 'discount', amount: totals.discount },
      { type: 'fulfillment', amount: totals.fulfillment },
      { type: 'tax', amount: totals.tax },
      { type: 'total', amount: totals.total },
    ],
    tax_lines: checkout.taxLines.map((line) => ({
      name: line.name,
      rate_basis_points: line.rateBasisPoints,
      amount: line.amount,
    })),
    messages: checkout.messages,
    discounts: {
      codes: checkout.discountCodes,
      applied: checkout.appliedDiscounts.map((discount) => ({
        discount_id: discount.discountId,
        code: discount.code,
        title: discount.title,
        amount: discount.amount,
        automatic: discount.automatic,
        allocations: discount.allocations.map((part) => ({ line_item_id: part.lineKey, amount: part.amount })),
      })),
    },
    fulfillment: {
      selected_option_id: checkout.fulfillmentOptionId,
      options: checkout.fulfillmentOptions.map((option) => ({
        id: option.id,
        method_id: option.methodId,
        type: option.type,
        title: option.title,
        amount: option.amount,
        warehouse_id: option.warehouseId,
        groups: option.groups.map((group) => ({ warehouse_id: group.warehouseId, line_item_ids: group.lineKeys })),
      })),
    },
    payment: checkout.payment && { handler: checkout.payment.handler },
    order: checkout.orderId ? { id: checkout.orderId } : null,
    continue_url: checkout.continueUrl,
    expires_at: checkout.expiresAt.getTime(),
    created_at: checkout.createdAt.getTime(),
    updated_at: checkout.updatedAt.getTime(),
  };
}
