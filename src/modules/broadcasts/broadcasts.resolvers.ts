import type { Resolvers } from '../../__generated__/graphql';

export const broadcastResolvers: Resolvers = {
  Mutation: {
    setSalesChannelWebhook: async (_parent, { input }, { principal, services }) => {
      const { channelId, url } = await services.broadcasts.setSalesChannelWebhook(principal, input);
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
