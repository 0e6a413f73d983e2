import type { Resolvers } from '../../__generated__/graphql';
import { connectionArguments, toConnection } from '../../kernel/graphql/connection';
import { idempotencyOf } from '../../kernel/graphql/idempotency';
import { parseValue, withInput } from '../../kernel/validation';
import { businessLoader, productLoader, warehouseLoader } from '../catalog';
import {
  CreateItemPreferencesInput,
  RemoveItemPreferencesInput,
  StockPreferencesArguments,
  UpdateItemPreferencesInput,
} from './preferences.schemas';

export const preferenceResolvers: Resolvers = {
  Query: {
    stockPreferences: async (_parent, args, { principal, services }) =>
      toConnection(
        await services.preferences.stockPreferences(
          principal,
          parseValue(StockPreferencesArguments, args),
          connectionArguments(args),
        ),
      ),
  },
  Mutation: {
    createItemPreferences: (_parent, { input }, { principal, services }) =>
      withInput(CreateItemPreferencesInput, input, async (valid) => ({
        preferences: await services.preferences.createItemPreferences(
          principal,
          valid.preferences,
          idempotencyOf('createItemPreferences', valid),
        ),
      })),
    updateItemPreferences: (_parent, { input }, { principal, services }) =>
      withInput(UpdateItemPreferencesInput, input, async (valid) => ({
        preferences: await services.preferences.updateItemPreferences(
          principal,
          valid.preferences,
          idempotencyOf('updateItemPreferences', valid),
        ),
      })),
    removeItemPreferences: (_parent, { input }, { principal, services }) =>
      withInput(RemoveItemPreferencesInput, input, async (valid) => ({
        ids: await services.preferences.removeItemPreferences(
          principal,
          valid.ids,
          idempotencyOf('removeItemPreferences', valid),
        ),
      })),
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
