import type { Module } from '../context';
import { paymentResolvers } from './payments.resolvers';
import { PaymentService } from './payments.service';
import { sandboxPages } from './sandbox-page';

declare module '../context' {
  interface Services {
    payments: PaymentService;
  }
}

/** Payment handlers (`manual`, `sandbox`), the payments of orders, and the money operations on orders. */
export const paymentsModule: Module = {
  name: 'payments',
  services: (container) => {
    const payments = new PaymentService(container.db, {
      baseUrl: container.baseUrl,
      production: () => container.config.production,
      log: container.log,
    });
    container.orders.setMoneySteps(payments.moneySteps());
    return { payments };
  },
  graphql: {
    schema: 'payments.graphql',
    resolvers: [paymentResolvers],
    mappers: { Payment: './payments.types#PaymentRecord' },
  },
  http: (app, services) => sandboxPages(app, services),
};

/**
 * The face the checkout composes (`services.payments`: availableHandlers, authorize, recordPayment,
 * voidAuthorization) and the records it takes and answers.
 */
export type { PaymentService } from './payments.service';
export type {
  AuthorizeResult,
  PaymentRecord,
  PaymentRecordInput,
  PaymentRequest,
  PaymentsFace,
} from './payments.types';
export { SANDBOX_TOKENS } from './handlers';
export { looksLikeCardNumber } from './card-numbers';
