import DataLoader from 'dataloader';
import type { Resolvers } from '../../__generated__/graphql';
import { idempotencyOf } from '../../kernel/graphql/idempotency';
import { requestLoader } from '../../kernel/graphql/loaders';
import { requireScope } from '../../kernel/scopes';
import { withInput } from '../../kernel/validation';
import type { GraphQLContext } from '../context';
import type { PaymentRecord } from './payments.types';
import { OrderPaymentInput, RefundOrderInput, SetPaymentSettingsInput } from './payments.schemas';

/** The payment of each order, batched over the request. */
const paymentLoader = (context: GraphQLContext) =>
  requestLoader(
    context,
    'order-payments',
    () =>
      new DataLoader<string, PaymentRecord | null>(async (orderIds) => {
        const payments = await context.services.payments.paymentsOfOrders(context.principal.tenantId, orderIds);
        return orderIds.map((orderId) => payments.find((payment) => payment.orderId === orderId) ?? null);
      }),
  );

export const paymentResolvers: Resolvers = {
  Query: {
    paymentHandlers: (_parent, _args, { principal, services }) =>
      services.payments.availableHandlers(principal.tenantId),
    paymentSettings: async (_parent, _args, { principal, services }) =>
      toSettings(await services.payments.settings(principal)),
  },
  Mutation: {
    setPaymentSettings: (_parent, { input }, { principal, services }) =>
      withInput(SetPaymentSettingsInput, input, async (valid) => ({
        settings: toSettings(await services.payments.setSettings(principal, { sandboxEnabled: valid.sandbox_enabled })),
      })),
    markOrderPaid: (_parent, { input }, { principal, services }) =>
      withInput(OrderPaymentInput, input, async (valid) => ({
        order: await services.payments.markOrderPaid(principal, valid.order_id, idempotencyOf('markOrderPaid', valid)),
      })),
    captureOrderPayment: (_parent, { input }, { principal, services }) =>
      withInput(OrderPaymentInput, input, async (valid) => ({
        order: await services.payments.captureOrderPayment(
          principal,
          valid.order_id,
          idempotencyOf('captureOrderPayment', valid),
        ),
      })),
    refundOrder: (_parent, { input }, { principal, services }) =>
      withInput(RefundOrderInput, input, async (valid) => ({
        order: await services.payments.refundOrder(
          principal,
          valid.order_id,
          valid.amount ?? null,
          idempotencyOf('refundOrder', valid),
        ),
      })),
  },
  Order: {
    payment: (parent, _args, context) => {
      requireScope(context.principal, 'orders:read');
      return paymentLoader(context).load(parent.id);
    },
  },
  Payment: {
    refunded_amount: (payment) => payment.refundedAmount,
    created_at: (payment) => payment.createdAt.getTime(),
    updated_at: (payment) => payment.updatedAt.getTime(),
  },
};

const toSettings = (settings: { sandboxEnabled: boolean }) => ({ sandbox_enabled: settings.sandboxEnabled });
