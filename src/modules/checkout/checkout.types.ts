/**
 * A checkout as stored and as its interfaces show it (UCP's shape: line items, totals by type,
 * messages with a JSONPath `path`). A cart is a checkout that has no buyer yet: the same entity,
 * the same operations; the buyer's details, destination and choices complete it.
 */
import type { AppliedDiscount } from '../discounts';
import type { TaxClass } from '../pricing';
import type { FulfillmentOptionQuote } from '../shipping';

export const CHECKOUT_STATUSES = [
  'incomplete',
  'ready_for_complete',
  'complete_in_progress',
  'completed',
  'canceled',
  'requires_escalation',
] as const;
export type CheckoutStatus = (typeof CHECKOUT_STATUSES)[number];

/** Statuses a checkout no longer changes from. */
export const FINAL_STATUSES: ReadonlySet<CheckoutStatus> = new Set(['completed', 'canceled']);

export interface CheckoutLine {
  /** Stable while the line's product stays in the checkout. */
  id: string;
  /** The product as the buyer named it (id or SKU), for a line whose product is unknown. */
  reference: string;
  productId: string | null;
  sku: string | null;
  title: string | null;
  quantity: number;
  taxClass: TaxClass;
  /** Minor units of one unit; null without a price in the channel. */
  unitPrice: number | null;
  discount: number;
  tax: number;
  /** The reservation holding the line's units; null when nothing is held. */
  holdId: string | null;
}

export interface CheckoutBuyer {
  email: string | null;
  firstName: string | null;
  lastName: string | null;
  fullName: string | null;
  phoneNumber: string | null;
}

export interface CheckoutDestination {
  country: string;
  region: string | null;
  postalCode: string | null;
}

export interface CheckoutTotals {
  subtotal: number;
  discount: number;
  fulfillment: number;
  tax: number;
  total: number;
}

export type MessageType = 'error' | 'warning' | 'info';
export type MessageSeverity = 'recoverable' | 'requires_buyer_input' | 'requires_buyer_review';

/** What the buyer (or the agent) should know or fix, with the JSONPath of what it is about. */
export interface CheckoutMessage {
  type: MessageType;
  code: string;
  path: string | null;
  content: string;
  severity: MessageSeverity | null;
}

export interface CheckoutRecord {
  id: string;
  businessId: string;
  channelId: string;
  status: CheckoutStatus;
  currency: string;
  taxInclusive: boolean;
  buyer: CheckoutBuyer | null;
  destination: CheckoutDestination | null;
  lines: CheckoutLine[];
  discountCodes: string[];
  fulfillmentOptionId: string | null;
  /** The options offered at the last change (the shipping module's quotes). */
  fulfillmentOptions: FulfillmentOptionQuote[];
  /** The discounts applied at the last change. */
  appliedDiscounts: AppliedDiscount[];
  payment: { handler: string; token: string | null } | null;
  totals: CheckoutTotals;
  taxLines: { name: string; rateBasisPoints: number; amount: number }[];
  messages: CheckoutMessage[];
  pendingReleases: string[];
  orderId: string | null;
  continueUrl: string | null;
  version: number;
  expiresAt: Date;
  createdAt: Date;
  updatedAt: Date;
}
