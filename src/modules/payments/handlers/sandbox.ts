/**
 * `sandbox`: a handler for integration tests and demos, answering by documented test tokens
 * (docs/guides/selling.md, "Payments"). Off until the tenant switches it on, and refused when the
 * service runs in production mode (NODE_ENV=production). Moves no money.
 */
import { uuidv7 } from '../../../kernel/ids';
import * as repository from '../payments.repository';
import type { PaymentHandler } from './handler';

/** The test tokens and what each answers. */
export const SANDBOX_TOKENS = {
  /** Captured at once. */
  tok_sandbox_success: 'captured',
  /** Authorized; captured later with `captureOrderPayment`. */
  tok_sandbox_authorize: 'authorized',
  /** Declined with a message. */
  tok_sandbox_decline: 'declined',
  /** Needs the buyer: a page of this service approves or declines, then authorizing again answers so. */
  tok_sandbox_redirect: 'requires_action',
} as const;

const DECLINED = 'The payment was declined (sandbox token tok_sandbox_decline).';

export const sandboxHandler: PaymentHandler = {
  id: 'sandbox',
  title: 'Sandbox (test payments)',
  async availability({ db, tenantId, production }) {
    if (production) return { available: false, reason: 'the sandbox handler is refused in production mode' };
    if (!(await repository.sandboxEnabled(db, tenantId)))
      return { available: false, reason: 'the sandbox handler is off for this tenant (setPaymentSettings)' };
    return { available: true };
  },
  async authorize({ db, tenantId, baseUrl }, request) {
    const token = request.token ?? '';
    const outcome = Object.hasOwn(SANDBOX_TOKENS, token) ? SANDBOX_TOKENS[token as keyof typeof SANDBOX_TOKENS] : null;
    if (outcome === null) {
      return {
        outcome: 'declined',
        message: `The sandbox knows the tokens ${Object.keys(SANDBOX_TOKENS).join(', ')}; this is none of them.`,
      };
    }
    if (outcome === 'declined') return { outcome, message: DECLINED };
    if (outcome !== 'requires_action') return { outcome, reference: `sandbox_${uuidv7()}` };
    const action = {
      handler: 'sandbox',
      checkoutId: request.checkoutId,
      amount: request.amount,
      currency: request.currency,
    };
    const open = await repository.openAction(db, tenantId, action);
    if (open?.status === 'APPROVED' && (await repository.moveAction(db, open.id, 'APPROVED', 'USED')))
      return { outcome: 'authorized', reference: `sandbox_${open.id}` };
    if (open?.status === 'DECLINED') {
      await repository.moveAction(db, open.id, 'DECLINED', 'USED');
      return { outcome: 'declined', message: 'The buyer declined the payment on the sandbox page.' };
    }
    const id = open?.status === 'WAITING' ? open.id : await repository.insertAction(db, tenantId, action);
    return { outcome: 'requires_action', continueUrl: `${baseUrl}/payments/sandbox/${id}` };
  },
  capture: async (_context, reference) => ({ reference }),
  void: async () => {},
  refund: async () => ({ reference: `sandbox_refund_${uuidv7()}` }),
};
