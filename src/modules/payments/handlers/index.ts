/**
 * The one list of payment handlers: adding one is its file plus a line here. The order is the order
 * `availableHandlers` offers them in.
 */
import type { PaymentHandler } from './handler';
import { manualHandler } from './manual';
import { sandboxHandler } from './sandbox';

export const paymentHandlers: readonly PaymentHandler[] = [manualHandler, sandboxHandler];

export type { HandlerContext, PaymentHandler } from './handler';
export { SANDBOX_TOKENS } from './sandbox';
