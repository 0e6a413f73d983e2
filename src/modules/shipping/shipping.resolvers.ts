import type { Resolvers } from '../../__generated__/graphql';
import { IdempotencyKey, idempotencyOf } from '../../kernel/graphql/idempotency';
import { InvalidInput, withInput } from '../../kernel/validation';
import {
  CreateShippingMethodInput,
  DeleteShippingMethodInput,
  fromGraphQL,
  UpdateShippingMethodInput,
} from './shipping.schemas';

/** The service names fields as the REST body does; GraphQL's input names them in snake case. */
const snakeCase = (field: string) => field.replace(/[A-Z]/g, (letter) => `_${letter.toLowerCase()}`);

async function inGraphQLNames<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (!(error instanceof InvalidInput)) throw error;
    throw new InvalidInput(
      error.problems.map((problem) => ({ ...problem, field: snakeCase(problem.field) })),
      error.code,
    );
  }
}

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
        shipping_method: await inGraphQLNames(() =>
          services.shipping.createMethod(principal, fromGraphQL(valid), idempotencyOf('createShippingMethod', valid)),
        ),
      })),
    updateShippingMethod: (_parent, { input }, { principal, services }) =>
      withInput(UpdateInput, input, async (valid) => ({
        shipping_method: await inGraphQLNames(() =>
          services.shipping.replaceMethod(
            principal,
            valid.id,
            fromGraphQL(valid),
            idempotencyOf('updateShippingMethod', valid),
          ),
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
