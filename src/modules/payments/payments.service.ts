/**
 * Payments: the face the checkout pays with (`availableHandlers`, `authorize`, `recordPayment`,
 * `voidAuthorization`) and the money operations on orders (mark paid, capture, refund, and what
 * canceling and returning do to a payment). The handler is found by id in the one list; the
 * order's payment status is set through the orders' face.
 */
import type { FastifyBaseLogger } from 'fastify';
import type { Db, Tx } from '../../kernel/db';
import { writeTransaction } from '../../kernel/db';
import { badRequest, invalidState, notFound } from '../../kernel/errors';
import { runIdempotent, type Idempotency } from '../../kernel/idempotency';
import type { Principal } from '../../kernel/principal';
import { requireScope } from '../../kernel/scopes';
import { queueOrderEvent } from '../broadcasts';
import { loadOrder, lockOrderForPayment, setPaymentStatus, type OrderMoneySteps, type OrderRecord } from '../orders';
import { cardNumberRefused, looksLikeCardNumber } from './card-numbers';
import { paymentHandlers, type HandlerContext, type PaymentHandler } from './handlers';
import * as repository from './payments.repository';
import type {
  AuthorizeResult,
  PaymentRecord,
  PaymentRecordInput,
  PaymentRequest,
  PaymentsFace,
} from './payments.types';

const ORDER_STATUS_OF = { captured: 'PAID', authorized: 'AUTHORIZED', pending: 'PENDING' } as const;
const RECORD_STATUS_OF = { captured: 'CAPTURED', authorized: 'AUTHORIZED', pending: 'PENDING' } as const;

export class PaymentService implements PaymentsFace {
  constructor(
    private readonly db: Db,
    private readonly options: { baseUrl: string; production: () => boolean; log: FastifyBaseLogger },
  ) {}

  private context(tenantId: string): HandlerContext {
    return { db: this.db, tenantId, baseUrl: this.options.baseUrl };
  }

  private handler(id: string): PaymentHandler {
    const handler = paymentHandlers.find((candidate) => candidate.id === id);
    if (!handler) throw new Error(`a payment was recorded with the unknown handler "${id}"`);
    return handler;
  }

  /** The handlers this tenant may pay with now, in the list's order. */
  async availableHandlers(tenantId: string) {
    const production = this.options.production();
    const offered = [];
    for (const handler of paymentHandlers) {
      const { available } = await handler.availability({ ...this.context(tenantId), production });
      if (available) offered.push({ id: handler.id, title: handler.title });
    }
    return offered;
  }

  /**
   * Asks the handler for the payment (outside the completion's transaction). A card number is a
   * 400 that does not repeat it; a handler the tenant may not use declines with the reason.
   */
  async authorize(tenantId: string, request: PaymentRequest): Promise<AuthorizeResult> {
    if (request.token != null && looksLikeCardNumber(request.token)) {
      // The log names the checkout and the handler, never the token.
      this.options.log.warn(
        { tenantId, checkoutId: request.checkoutId, handler: request.handler },
        'payment refused: the token looks like a card number',
      );
      throw cardNumberRefused();
    }
    if (!Number.isSafeInteger(request.amount) || request.amount < 0)
      throw new Error('a payment amount must be a non-negative integer in minor units');
    const handler = paymentHandlers.find((candidate) => candidate.id === request.handler);
    if (!handler) {
      const known = paymentHandlers.map((candidate) => candidate.id).join(', ');
      return { outcome: 'declined', message: `There is no payment handler "${request.handler}" (known: ${known}).` };
    }
    const availability = await handler.availability({
      ...this.context(tenantId),
      production: this.options.production(),
    });
    if (!availability.available)
      return {
        outcome: 'declined',
        message: `The payment handler "${handler.id}" cannot be used: ${availability.reason}.`,
      };
    const result = await handler.authorize(this.context(tenantId), request);
    this.options.log.info(
      {
        tenantId,
        checkoutId: request.checkoutId,
        handler: handler.id,
        outcome: result.outcome,
        amount: request.amount,
      },
      'payment handler answered',
    );
    return result;
  }

  /** Writes the payment of an order a checkout completes, in its transaction, and the order's payment status. */
  async recordPayment(tx: Tx, tenantId: string, record: PaymentRecordInput) {
    this.handler(record.handler);
    await repository.insertPayment(tx, tenantId, {
      orderId: record.orderId,
      handler: record.handler,
      reference: record.reference,
      amount: record.amount,
      currency: record.currency,
      status: RECORD_STATUS_OF[record.outcome],
    });
    await setPaymentStatus(tx, tenantId, record.orderId, ORDER_STATUS_OF[record.outcome]);
    const data = { payment_status: ORDER_STATUS_OF[record.outcome], total: record.amount, currency: record.currency };
    await queueOrderEvent(tx, tenantId, { orderId: record.orderId, type: 'order.placed', data });
    if (record.outcome === 'captured')
      await queueOrderEvent(tx, tenantId, { orderId: record.orderId, type: 'order.paid', data });
  }

  /** Drops an authorization whose completion failed: nothing was recorded for it. */
  async voidAuthorization(tenantId: string, handler: string, reference: string) {
    await this.handler(handler).void(this.context(tenantId), reference);
  }

  /** The payment of an order; null for an order paid by no handler. */
  async paymentOfOrder(principal: Principal, orderId: string) {
    requireScope(principal, 'orders:read');
    return repository.paymentOfOrder(this.db, principal.tenantId, orderId);
  }

  /** Payments of orders by order id, for the GraphQL loaders. */
  paymentsOfOrders(tenantId: string, orderIds: readonly string[]) {
    return repository.paymentsOfOrders(this.db, tenantId, orderIds);
  }

  /** The tenant's payment settings. */
  async settings(principal: Principal) {
    requireScope(principal, 'orders:read');
    return { sandboxEnabled: await repository.sandboxEnabled(this.db, principal.tenantId) };
  }

  /** Switches the sandbox handler on or off for the tenant (scope orders:write; refused in production). */
  async setSettings(principal: Principal, settings: { sandboxEnabled: boolean }) {
    requireScope(principal, 'orders:write');
    if (settings.sandboxEnabled && this.options.production())
      throw invalidState('cannot be switched on: the sandbox handler is refused in production mode', 'sandbox_enabled');
    await repository.setSandboxEnabled(this.db, principal.tenantId, settings.sandboxEnabled);
    return this.settings(principal);
  }

  /** A manual payment came in: PENDING → CAPTURED, the order PAID. */
  markOrderPaid(principal: Principal, orderId: string, idempotency?: Idempotency) {
    return this.changePayment(principal, orderId, idempotency, async (tx, _order, payment) => {
      if (payment.status !== 'PENDING')
        throw invalidState(`the order's payment is ${payment.status}; markOrderPaid needs PENDING`, 'order_id');
      if (payment.handler !== 'manual')
        throw invalidState(`the order is paid through "${payment.handler}": capture it instead`, 'order_id');
      await this.paid(tx, principal.tenantId, payment);
    });
  }

  /** Captures an authorized payment through its handler: AUTHORIZED → CAPTURED, the order PAID. */
  captureOrderPayment(principal: Principal, orderId: string, idempotency?: Idempotency) {
    return this.changePayment(principal, orderId, idempotency, async (tx, _order, payment) => {
      if (payment.status !== 'AUTHORIZED')
        throw invalidState(`the order's payment is ${payment.status}; capturing needs AUTHORIZED`, 'order_id');
      await this.handler(payment.handler).capture(this.context(principal.tenantId), payment.reference, payment.amount);
      await this.paid(tx, principal.tenantId, payment);
    });
  }

  private async paid(tx: Tx, tenantId: string, payment: PaymentRecord) {
    await repository.setPaymentState(tx, tenantId, payment.id, 'CAPTURED', 0);
    await setPaymentStatus(tx, tenantId, payment.orderId, 'PAID');
    const data = { payment_status: 'PAID', total: payment.amount, currency: payment.currency };
    await queueOrderEvent(tx, tenantId, { orderId: payment.orderId, type: 'order.paid', data });
  }

  /** Refunds `amount` (default: all that is left) of a captured payment through its handler. */
  refundOrder(principal: Principal, orderId: string, amount: number | null, idempotency?: Idempotency) {
    return this.changePayment(principal, orderId, idempotency, (tx, _order, payment) =>
      this.refund(tx, principal.tenantId, payment, amount, 'refund', 'amount'),
    );
  }

  /** What canceling and returning do to an order's payment, run by the orders' verbs in their transaction. */
  moneySteps(): OrderMoneySteps {
    return {
      canceled: async (tx, tenantId, order) => {
        const payment = await repository.paymentOfOrder(tx, tenantId, order.id, true);
        if (!payment || payment.status === 'PENDING' || payment.status === 'AUTHORIZED') {
          if (payment) {
            await this.handler(payment.handler).void(this.context(tenantId), payment.reference);
            await repository.setPaymentState(tx, tenantId, payment.id, 'VOIDED', 0);
          }
          await setPaymentStatus(tx, tenantId, order.id, 'CANCELED');
        } else if (payment.status === 'CAPTURED' || payment.status === 'PARTIALLY_REFUNDED') {
          await this.refund(tx, tenantId, payment, null, 'cancel', 'id');
        }
        const current = payment ? await repository.paymentOfOrder(tx, tenantId, order.id) : undefined;
        await queueOrderEvent(tx, tenantId, {
          orderId: order.id,
          type: 'order.canceled',
          data: { payment: current?.status ?? null, refunded_amount: current?.refundedAmount ?? 0 },
        });
      },
      refundReturn: async (tx, tenantId, order, amount) => {
        const payment = await repository.paymentOfOrder(tx, tenantId, order.id, true);
        if (!payment) throw invalidState('the order has no payment to refund', 'refund_amount');
        await this.refund(tx, tenantId, payment, amount, 'return', 'refund_amount');
      },
    };
  }

  private async refund(
    tx: Tx,
    tenantId: string,
    payment: PaymentRecord,
    requested: number | null,
    reason: 'refund' | 'cancel' | 'return',
    field: string,
  ) {
    if (payment.status !== 'CAPTURED' && payment.status !== 'PARTIALLY_REFUNDED')
      throw invalidState(`the order's payment is ${payment.status}; refunds need a captured payment`, field);
    const left = payment.amount - payment.refundedAmount;
    const amount = requested ?? left;
    if (amount > left)
      throw badRequest(`${field} is more than the ${left} left to refund`, [
        { field, message: `is more than the ${left} (minor units) left to refund` },
      ]);
    if (amount <= 0) return;
    const { reference } = await this.handler(payment.handler).refund(this.context(tenantId), payment.reference, amount);
    await repository.insertRefund(tx, tenantId, { paymentId: payment.id, amount, reference, reason });
    const refunded = payment.refundedAmount + amount;
    const whole = refunded === payment.amount;
    await repository.setPaymentState(tx, tenantId, payment.id, whole ? 'REFUNDED' : 'PARTIALLY_REFUNDED', refunded);
    if (whole) await setPaymentStatus(tx, tenantId, payment.orderId, 'REFUNDED');
    await queueOrderEvent(tx, tenantId, {
      orderId: payment.orderId,
      type: 'order.refunded',
      data: { amount, refunded_amount: refunded, currency: payment.currency, reason },
    });
  }

  /** A change of an order's payment under its row lock; answers the order as it is after. */
  private async changePayment(
    principal: Principal,
    orderId: string,
    idempotency: Idempotency | undefined,
    work: (tx: Tx, order: OrderRecord, payment: PaymentRecord) => Promise<void>,
  ): Promise<OrderRecord> {
    requireScope(principal, 'orders:write');
    const { tenantId } = principal;
    const order = await loadOrder(this.db, tenantId, orderId);
    if (order.money === null) throw invalidState('the order carries no money', 'order_id');
    await writeTransaction(this.db, (tx) =>
      runIdempotent(tx, tenantId, idempotency, async () => {
        const status = await lockOrderForPayment(tx, tenantId, order.id);
        if (status === 'CANCELLED') throw invalidState(`order "${order.id}" is CANCELLED`, 'order_id');
        const payment = await repository.paymentOfOrder(tx, tenantId, order.id, true);
        if (!payment) throw notFound(`order "${order.id}" has no payment`);
        await work(tx, order, payment);
        return order.id;
      }),
    );
    return loadOrder(this.db, tenantId, order.id);
  }
}
