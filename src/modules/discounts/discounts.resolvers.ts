import type { Resolvers } from '../../__generated__/graphql';
import { connectionArguments, toConnection } from '../../kernel/graphql/connection';
import { IdempotencyKey, idempotencyOf } from '../../kernel/graphql/idempotency';
import { z } from '../../kernel/rest/schemas';
import { parseValue, withInput } from '../../kernel/validation';
import { GraphqlDiscountInput } from './discounts.schemas';

const millis = (value: Date | number | null) => (value === null ? null : new Date(value).getTime());

/** The written discount with its idempotency key: the key is fingerprinted with the rest of the input. */
const Keyed = z.object({ idempotency_key: IdempotencyKey }).passthrough();
const UpdateId = z.object({ id: z.string().max(64) });

export const discountsResolvers: Resolvers = {
  Query: {
    discounts: async (_parent, args, { principal, services }) =>
      toConnection(
        await services.discounts.listDiscounts(principal, { code: args.code ?? undefined }, connectionArguments(args)),
      ),
    discount: (_parent, { id }, { principal, services }) => services.discounts.getDiscount(principal, id),
  },
  Mutation: {
    createDiscount: (_parent, { input }, { principal, services }) =>
      withInput(GraphqlDiscountInput, input, async (valid) => ({
        discount: await services.discounts.createDiscount(
          principal,
          valid,
          idempotencyOf('createDiscount', parseValue(Keyed, input)),
        ),
      })),
    updateDiscount: (_parent, { input }, { principal, services }) =>
      withInput(GraphqlDiscountInput, input, async (valid) => {
        const keyed = parseValue(Keyed.extend(UpdateId.shape), input);
        return {
          discount: await services.discounts.replaceDiscount(
            principal,
            keyed.id,
            valid,
            idempotencyOf('updateDiscount', keyed),
          ),
        };
      }),
    deleteDiscount: async (_parent, { input }, { principal, services }) => {
      await services.discounts.deleteDiscount(principal, input.id);
      return { id: input.id };
    },
  },
  Discount: {
    channel_id: (row) => row.channelId,
    percent_basis_points: (row) => row.percentBasisPoints,
    product_ids: (row) => row.productIds,
    category_ids: (row) => row.categoryIds,
    minimum_subtotal: (row) => row.minimumSubtotal,
    starts_at: (row) => millis(row.startsAt),
    ends_at: (row) => millis(row.endsAt),
    usage_limit: (row) => row.usageLimit,
    usage_limit_per_buyer: (row) => row.usageLimitPerBuyer,
    created_at: (row) => millis(row.createdAt)!,
    updated_at: (row) => millis(row.updatedAt)!,
  },
};
