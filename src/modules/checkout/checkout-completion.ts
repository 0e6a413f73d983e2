/**
 * Completing a checkout: the payment is authorized first (outside any transaction: a handler may
 * take its time), then ONE transaction places the order from the lines' holds (order rows,
 * allocation, ledger), records the payment and counts the discounts' uses. When that transaction
 * fails the authorization is voided. A declined payment, a discount whose limit was reached
 * meanwhile or a hold that ended leave the checkout open with a message (and its holds); a handler
 * that needs the buyer puts it in `requires_escalation` with the `continue_url`.
 */
import { writeTransaction } from '../../kernel/db';
import { AppError, conflict } from '../../kernel/errors';
import { uuidv7 } from '../../kernel/ids';
import type { Principal } from '../../kernel/principal';
import type { Services } from '../context';
import { DiscountLimitReached } from '../discounts';
import { placeOrder, type PlaceOrderInput } from '../orders';
import * as repository from './checkout.repository';
import type { CheckoutMessage, CheckoutRecord } from './checkout.types';

const PAYMENT_STATUS = { captured: 'PAID', authorized: 'AUTHORIZED', pending: 'PENDING' } as const;

/** How a completion ended: completed, or back open (with why) for the checkout to be applied again. */
export type CompletionOutcome =
  | { outcome: 'completed' }
  | { outcome: 'open'; message: CheckoutMessage | null; reapply: boolean }
  | { outcome: 'escalated' };

const buyerNameOf = (buyer: CheckoutRecord['buyer']) =>
  buyer ? (buyer.fullName ?? ([buyer.firstName, buyer.lastName].filter(Boolean).join(' ') || null)) : null;

function orderOf(
  checkout: CheckoutRecord,
  orderId: string,
  actor: Principal['actor'],
  paymentStatus: PlaceOrderInput['paymentStatus'],
): PlaceOrderInput {
  const chosen = checkout.fulfillmentOptions.find((option) => option.id === checkout.fulfillmentOptionId);
  return {
    orderId,
    checkoutId: checkout.id,
    actor,
    buyer: {
      email: checkout.buyer?.email ?? null,
      name: buyerNameOf(checkout.buyer),
      phone: checkout.buyer?.phoneNumber ?? null,
    },
    currency: checkout.currency,
    taxInclusive: checkout.taxInclusive,
    totals: checkout.totals,
    taxLines: checkout.taxLines,
    discounts: checkout.appliedDiscounts.map((discount) => ({
      discountId: discount.discountId,
      code: discount.code,
      title: discount.title,
      amount: discount.amount,
    })),
    paymentStatus,
    fulfillment: chosen
      ? {
          optionId: chosen.id,
          methodId: chosen.methodId,
          type: chosen.type,
          title: chosen.title,
          amount: chosen.amount,
          warehouseId: chosen.warehouseId,
        }
      : null,
    destination: checkout.destination && { ...checkout.destination },
    lines: checkout.lines.map((line) => ({
      productId: line.productId!,
      quantity: line.quantity,
      unitPrice: line.unitPrice!,
      discount: line.discount,
      tax: line.tax,
      holds: [{ reservationId: line.holdId!, quantity: line.quantity }],
    })),
  };
}

/**
 * Completes `checkout`, which this process has just moved to `complete_in_progress` (at
 * `version`). Writes the completed checkout or the escalation itself; an open outcome is the
 * caller's to write back.
 */
export async function completeInProgress(
  services: Services,
  principal: Principal,
  checkout: CheckoutRecord,
  version: number,
): Promise<CompletionOutcome> {
  const { tenantId } = principal;
  const { db, payments, discounts } = services;
  const payment = checkout.payment!;
  const authorized = await payments.authorize(tenantId, {
    handler: payment.handler,
    token: payment.token,
    amount: checkout.totals.total,
    currency: checkout.currency,
    checkoutId: checkout.id,
  });
  if (authorized.outcome === 'declined')
    return {
      outcome: 'open',
      reapply: false,
      message: {
        type: 'error',
        code: 'payment_declined',
        path: '$.payment',
        content: authorized.message,
        severity: 'requires_buyer_input',
      },
    };
  if (authorized.outcome === 'requires_action') {
    await repository.updateCheckout(db, tenantId, checkout.id, version, {
      ...checkout,
      status: 'requires_escalation',
      continueUrl: authorized.continueUrl,
    });
    return { outcome: 'escalated' };
  }
  const orderId = uuidv7();
  try {
    await writeTransaction(db, async (tx) => {
      const locked = await repository.lockCheckout(tx, tenantId, checkout.id);
      if (locked?.status !== 'complete_in_progress' || locked.version !== version)
        throw conflict(`checkout "${checkout.id}" changed meanwhile; send the request again`);
      await placeOrder(tx, tenantId, orderOf(checkout, orderId, principal.actor, PAYMENT_STATUS[authorized.outcome]));
      await payments.recordPayment(tx, tenantId, {
        orderId,
        handler: payment.handler,
        reference: authorized.reference,
        amount: checkout.totals.total,
        currency: checkout.currency,
        outcome: authorized.outcome,
      });
      const discountIds = checkout.appliedDiscounts.map((discount) => discount.discountId);
      if (discountIds.length > 0)
        await discounts.recordUsage(tx, tenantId, { discountIds, buyerEmail: checkout.buyer?.email ?? null, orderId });
      const completed = { ...checkout, status: 'completed' as const, orderId, messages: [], continueUrl: null };
      if (!(await repository.updateCheckout(tx, tenantId, checkout.id, version, completed)))
        throw conflict(`checkout "${checkout.id}" changed meanwhile; send the request again`);
    });
    return { outcome: 'completed' };
  } catch (error) {
    await payments.voidAuthorization(tenantId, payment.handler, authorized.reference);
    if (error instanceof DiscountLimitReached) {
      const index = checkout.discountCodes.findIndex((code) => code.toLowerCase() === error.code?.toLowerCase());
      return {
        outcome: 'open',
        reapply: true,
        message: {
          type: 'warning',
          code: 'discount_code_usage_limit_reached',
          path: index >= 0 ? `$.discounts.codes[${index}]` : '$.discounts',
          content: 'A discount reached its usage limit meanwhile and no longer applies; the totals changed.',
          severity: null,
        },
      };
    }
    // A hold that ended (expired, released): the lines are held again where they still can be.
    if (error instanceof AppError && (error.key === 'INVALID_STATE' || error.key === 'NOT_FOUND'))
      return { outcome: 'open', reapply: true, message: null };
    throw error;
  }
}
