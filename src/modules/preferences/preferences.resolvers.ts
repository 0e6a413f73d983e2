import type { Resolvers } from '../../__generated__/graphql';
import { connectionArguments, toConnection } from '../../kernel/graphql/connection';
import { idempotencyOf } from '../../kernel/graphql/idempotency';
import { businessLoader, productLoader, warehouseLoader } from '../catalog/catalog.loaders';

export const preferenceResolvers: Resolvers = {
  Query: {
    stockPreferences: async (_parent, args, { principal, services }) =>
      toConnection(await services.preferences.stockPreferences(principal, args, connectionArguments(args))),
  },
  Mutation: {
    createItemPreferences: async (_parent, { input }, { principal, services }) => ({
      preferences: await services.preferences.createItemPreferences(
        principal,
        input.preferences,
        idempotencyOf('createItemPreferences', input),
      ),
    }),
    updateItemPreferences: async (_parent, { input }, { principal, services }) => ({
      preferences: await services.preferences.updateItemPreferences(
        principal,
        input.preferences,
        idempotencyOf('updateItemPreferences', input),
      ),
    }),
    removeItemPreferences: async (_parent, { input }, { principal, services }) => ({
      ids: await services.preferences.removeItemPreferences(
        principal,
        input.ids,
        idempotencyOf('removeItemPreferences', input),
      ),
    }),
  },
  ItemPreference: {
    product: async (preference, _args, context) => (await productLoader(context).load(preference.productId))!,
    warehouse: async (preference, _args, context) => (await warehouseLoader(context).load(preference.warehouseId))!,
    business: async (preference, _args, context) => (await businessLoader(context).load(preference.businessId))!,
    minimum_quantity: (preference) => preference.minimumQuantity,
    optimal_quantity: (preference) => preference.optimalQuantity,
    maximum_quantity: (preference) => preference.maximumQuantity,
    reorder_point: (preference) => preference.reorderPoint,
    is_backorder_allowed: (preference) => preference.isBackorderAllowed,
    is_restricted_to_single_position: (preference) => preference.isRestrictedToSinglePosition,
    preorder_deadline_at: (preference) => preference.preorderDeadlineAt?.getTime() ?? null,
    created_at: (preference) => preference.createdAt.getTime(),
    updated_at: (preference) => preference.updatedAt.getTime(),
  },
};
