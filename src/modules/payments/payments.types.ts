/**
 * What the payments module answers and takes: the request a checkout pays with, the handlers'
 * outcomes, and the payment records of orders. Amounts are integers in the currency's minor units.
 */
import type { Tx } from '../../kernel/db';

/** What a checkout asks a handler to pay. */
export interface PaymentRequest {
  /** The handler's id: `manual`, `sandbox`. */
  handler: string;
  /** The instrument's token (the sandbox's documented test tokens); never a card number. */
  token?: string | null;
  amount: number;
  currency: string;
  checkoutId: string;
}

/** What authorizing a payment came to. */
export type AuthorizeResult =
  | { outcome: 'authorized' | 'captured' | 'pending'; reference: string }
  | { outcome: 'declined'; message: string }
  | { outcome: 'requires_action'; continueUrl: string };

/** A payment a checkout completed with, written in its completion's transaction. */
export interface PaymentRecordInput {
  orderId: string;
  handler: string;
  reference: string;
  amount: number;
  currency: string;
  outcome: 'authorized' | 'captured' | 'pending';
}

export const PAYMENT_RECORD_STATUSES = [
  'PENDING',
  'AUTHORIZED',
  'CAPTURED',
  'VOIDED',
  'REFUNDED',
  'PARTIALLY_REFUNDED',
] as const;
export type PaymentRecordStatus = (typeof PAYMENT_RECORD_STATUSES)[number];

/** A row of `payments`. */
export interface PaymentRecord {
  id: string;
  orderId: string;
  handler: string;
  reference: string;
  amount: number;
  currency: string;
  status: PaymentRecordStatus;
  refundedAmount: number;
  createdAt: Date;
  updatedAt: Date;
}

/** The face the checkout composes (selling-design.md). */
export interface PaymentsFace {
  availableHandlers(tenantId: string): Promise<{ id: string; title: string }[]>;
  authorize(tenantId: string, request: PaymentRequest): Promise<AuthorizeResult>;
  recordPayment(tx: Tx, tenantId: string, record: PaymentRecordInput): Promise<void>;
  voidAuthorization(tenantId: string, handler: string, reference: string): Promise<void>;
}
