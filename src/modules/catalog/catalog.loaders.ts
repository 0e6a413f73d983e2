import DataLoader from 'dataloader';
import type { GraphQLContext } from '../context';
import { byIdLoader, requestLoader } from '../../kernel/graphql/loaders';

/** Per-request batched loads of catalog rows by id, for nested fields (`warehouse`, `position`, ...). */
export const productLoader = (context: GraphQLContext) =>
  requestLoader(context, 'product', () =>
    byIdLoader((ids) => context.services.catalog.productsByIds(context.principal.tenantId, ids)),
  );

export const businessLoader = (context: GraphQLContext) =>
  requestLoader(context, 'business', () =>
    byIdLoader((ids) => context.services.catalog.businessesByIds(context.principal.tenantId, ids)),
  );

export const warehouseLoader = (context: GraphQLContext) =>
  requestLoader(context, 'warehouse', () =>
    byIdLoader((ids) => context.services.catalog.warehousesByIds(context.principal.tenantId, ids)),
  );

export const positionLoader = (context: GraphQLContext) =>
  requestLoader(context, 'position', () =>
    byIdLoader((ids) => context.services.catalog.positionsByIds(context.principal.tenantId, ids)),
  );

export const salesChannelLoader = (context: GraphQLContext) =>
  requestLoader(context, 'sales-channel', () =>
    byIdLoader((ids) => context.services.catalog.salesChannelsByIds(context.principal.tenantId, ids)),
  );

/** The warehouse ids each sales channel sells from, in priority order. */
export const channelWarehousesLoader = (context: GraphQLContext) =>
  requestLoader(
    context,
    'channel-warehouses',
    () =>
      new DataLoader<string, string[]>((channelIds) =>
        context.services.catalog.warehouseIdsOfChannels(context.principal.tenantId, channelIds),
      ),
  );

/** Where a stock document (order, reservation) happens, as catalog ids. */
interface Placed {
  businessId: string;
  warehouseId: string;
  channelId: string;
}

/**
 * The `business`, `warehouse` and `channel` fields of a type whose record names them by id;
 * `record` turns the field's parent into that record.
 */
export function placeResolvers<P>(record: (parent: P, context: GraphQLContext) => Promise<Placed>) {
  return {
    business: async (parent: P, _args: unknown, context: GraphQLContext) =>
      (await businessLoader(context).load((await record(parent, context)).businessId))!,
    warehouse: async (parent: P, _args: unknown, context: GraphQLContext) =>
      (await warehouseLoader(context).load((await record(parent, context)).warehouseId))!,
    channel: async (parent: P, _args: unknown, context: GraphQLContext) =>
      (await salesChannelLoader(context).load((await record(parent, context)).channelId))!,
  };
}
