import type { Resolvers } from '../../__generated__/graphql';
import { idempotencyOf } from '../../kernel/graphql/idempotency';
import { withInput } from '../../kernel/validation';
import { CheckoutIdInput, CreateCheckoutInput, UpdateCheckoutInput } from './checkout.schemas';

export const checkoutResolvers: Resolvers = {
  Query: {
    checkout: (_parent, { id }, { principal, services }) => services.checkout.checkout(principal, id),
  },
  Mutation: {
    createCheckout: (_parent, { input }, { principal, services }) =>
      withInput(CreateCheckoutInput, input, async (valid) => ({
        checkout: await services.checkout.createCheckout(principal, valid, idempotencyOf('createCheckout', valid)),
      })),
    updateCheckout: (_parent, { input }, { principal, services }) =>
      withInput(UpdateCheckoutInput, input, async (valid) => ({
        checkout: await services.checkout.updateCheckout(principal, valid, idempotencyOf('updateCheckout', valid)),
      })),
    completeCheckout: (_parent, { input }, { principal, services }) =>
      withInput(CheckoutIdInput, input, async (valid) => ({
        checkout: await services.checkout.completeCheckout(
          principal,
          valid.id,
          idempotencyOf('completeCheckout', valid),
        ),
      })),
    cancelCheckout: (_parent, { input }, { principal, services }) =>
      withInput(CheckoutIdInput, input, async (valid) => ({
        checkout: await services.checkout.cancelCheckout(principal, valid.id, idempotencyOf('cancelCheckout', valid)),
      })),
  },
};
