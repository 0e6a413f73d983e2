import type { Resolvers } from '../../__generated__/graphql';
import { parseInput } from '../../kernel/validation';
import { SetSalesChannelWebhookInput } from './broadcasts.schemas';

export const broadcastResolvers: Resolvers = {
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
  },
};
