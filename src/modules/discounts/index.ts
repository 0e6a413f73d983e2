import type { Module } from '../context';
import { discountsOperations } from './discounts.routes';
import { discountsResolvers } from './discounts.resolvers';
import { DiscountsService } from './discounts.service';

declare module '../context' {
  interface Services {
    discounts: DiscountsService;
  }
}

/** Discount codes and automatic promotions: what they take off a checkout, and their uses by orders. */
export const discountsModule: Module = {
  name: 'discounts',
  services: ({ db, cursors }) => ({ discounts: new DiscountsService(db, cursors) }),
  rest: discountsOperations,
  graphql: {
    schema: 'discounts.graphql',
    resolvers: [discountsResolvers],
    mappers: { Discount: './discounts.types#DiscountShape' },
  },
};

/*
 * The face the checkout composes (`services.discounts.evaluate`, `services.discounts.recordUsage`,
 * see DiscountsService) and the records they answer.
 */
export type { DiscountsService } from './discounts.service';
export type {
  AppliedDiscount,
  DiscountEvaluation,
  DiscountQuery,
  DiscountUsageInput,
  RejectedCode,
  RejectionReason,
} from './discounts.types';
export { DiscountLimitReached, REJECTION_REASONS } from './discounts.types';
