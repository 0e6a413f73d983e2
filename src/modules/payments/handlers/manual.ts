/**
 * `manual`: bank transfer, invoice, pay at pickup. Nothing is charged online: the order is placed
 * with its payment pending and an operator marks it paid (`markOrderPaid`) once the money is in,
 * or cancels it. Refunds are paid back outside the service and only recorded here.
 */
import { uuidv7 } from '../../../kernel/ids';
import type { PaymentHandler } from './handler';

export const manualHandler: PaymentHandler = {
  id: 'manual',
  title: 'Bank transfer, invoice or pay at pickup',
  availability: async () => ({ available: true }),
  authorize: async () => ({ outcome: 'pending', reference: `manual_${uuidv7()}` }),
  capture: async (_context, reference) => ({ reference }),
  void: async () => {},
  refund: async () => ({ reference: `manual_refund_${uuidv7()}` }),
};
