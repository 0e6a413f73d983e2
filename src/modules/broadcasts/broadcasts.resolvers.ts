import type { Resolvers } from '../../__generated__/graphql';
import { connectionArguments, toConnection } from '../../kernel/graphql/connection';
import { parseInput, parseValue } from '../../kernel/validation';
import { productLoader, warehouseLoader } from '../catalog';
import { SetSalesChannelWebhookInput, StockEventsArguments } from './broadcasts.schemas';

export const broadcastResolvers: Resolvers = {
  Query: {
    stockEvents: async (_parent, args, { principal, services }) =>
      toConnection(
        await services.stockEvents.stockEvents(
          principal,
          parseValue(StockEventsArguments, args),
          connectionArguments(args),
        ),
      ),
  },
  Mutation: {
    setSalesChannelWebhook: async (_parent, { input }, { principal, services }) => {
      const { channelId, url } = await services.broadcasts.setSalesChannelWebhook(
        principal,
        parseInput(SetSalesChannelWebhookInput, input),
      );
      return { channel_id: channelId, url };
    },
    removeSalesChannelWebhook: async (_parent, { input }, { principal, services }) => ({
      channel_id: await services.broadcasts.removeSalesChannelWebhook(principal, input.channel_id),
    }),
    retryStockMutation: async (_parent, { input }, { principal, services }) => ({
      id: await services.broadcasts.retryStockMutation(principal, input.id),
    }),
    retryStockEvent: async (_parent, { input }, { principal, services }) => ({
      id: await services.broadcasts.retryStockEvent(principal, input.id),
    }),
  },
  StockEvent: {
    product: async (event, _args, context) => (await productLoader(context).load(event.productId))!,
    warehouse: async (event, _args, context) => (await warehouseLoader(context).load(event.warehouseId))!,
    reorder_point: (event) => event.reorderPoint,
    stock_mutation_id: (event) => event.mutationId,
    created_at: (event) => event.createdAt.getTime(),
  },
};
