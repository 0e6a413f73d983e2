/**
 * A payment handler: how one way of paying authorizes, captures, voids and refunds. Handlers are
 * listed once in `handlers/index.ts`; the payments service finds them there by id and never knows
 * more of one than this interface.
 */
import type { Db } from '../../../kernel/db';
import type { AuthorizeResult, PaymentRequest } from '../payments.types';

/** What a handler may use beyond the request: the database (for its own state) and the tenant. */
export interface HandlerContext {
  db: Db;
  tenantId: string;
  /** Origin of the pages this service serves (a redirect's `continue_url`). */
  baseUrl: string;
}

/** What a handler answers when asked whether a tenant may pay with it. */
export interface HandlerAvailability {
  available: boolean;
  /** Why not, as a sentence (shown in errors). */
  reason?: string;
}

export interface PaymentHandler {
  /** Stable id a checkout names (`manual`, `sandbox`). */
  id: string;
  /** What a buyer sees. */
  title: string;
  /** Whether this tenant may pay with the handler now. */
  availability(context: HandlerContext & { production: boolean }): Promise<HandlerAvailability>;
  /** Asks for the payment; answers authorized, captured, pending, declined or requires_action. */
  authorize(context: HandlerContext, request: PaymentRequest): Promise<AuthorizeResult>;
  /** Takes the money of an authorized payment; resolves with the capture's reference. */
  capture(context: HandlerContext, reference: string, amount: number): Promise<{ reference: string }>;
  /** Drops an authorization (or a pending payment) that will not be captured. */
  void(context: HandlerContext, reference: string): Promise<void>;
  /** Gives back `amount` of a captured payment; resolves with the refund's reference. */
  refund(context: HandlerContext, reference: string, amount: number): Promise<{ reference: string }>;
}
