import type { Resolvers } from '../../__generated__/graphql';
import { IdempotencyKey, idempotencyOf } from '../../kernel/graphql/idempotency';
import { withInput } from '../../kernel/validation';
import {
  CreateShippingMethodInput,
  DeleteShippingMethodInput,
  fromGraphQL,
  UpdateShippingMethodInput,
} from './shipping.schemas';

const CreateInput = CreateShippingMethodInput.extend({ idempotency_key: IdempotencyKey });
const UpdateInput = UpdateShippingMethodInput.extend({ idempotency_key: IdempotencyKey });

export const shippingResolvers: Resolvers = {
  Query: {
    shippingMethods: (_parent, { channel_id }, { principal, services }) =>
      services.shipping.methodsOfChannel(principal, channel_id),
  },
  Mutation: {
    createShippingMethod: (_parent, { input }, { principal, services }) =>
      withInput(CreateInput, input, async (valid) => ({
        shipping_method: await services.shipping.createMethod(
          principal,
          fromGraphQL(valid),
          idempotencyOf('createShippingMethod', valid),
        ),
      })),
    updateShippingMethod: (_parent, { input }, { principal, services }) =>
      withInput(UpdateInput, input, async (valid) => ({
        shipping_method: await services.shipping.replaceMethod(
          principal,
          valid.id,
          fromGraphQL(valid),
          idempotencyOf('updateShippingMethod', valid),
        ),
      })),
    deleteShippingMethod: (_parent, { input }, { principal, services }) =>
      withInput(DeleteShippingMethodInput, input, async (valid) => {
        await services.shipping.deleteMethod(principal, valid.id);
        return { id: valid.id };
      }),
  },
  ShippingMethod: {
    channel_id: (method) => method.channelId,
    rate_kind: (method) => method.rateKind,
    flat_amount: (method) => method.flatAmount,
    free_above: (method) => method.freeAbove,
    weight_brackets: (method) =>
      method.weightBrackets.map((bracket) => ({ up_to_grams: bracket.upToGrams, amount: bracket.amount })),
    pickup_warehouse_ids: (method) => method.pickupWarehouseIds,
    created_at: (method) => new Date(method.createdAt).getTime(),
    updated_at: (method) => new Date(method.updatedAt).getTime(),
  },
};
