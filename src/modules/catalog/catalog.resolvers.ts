import type { Resolvers } from '../../__generated__/graphql';
import { connectionArguments, toConnection } from '../../kernel/graphql/connection';

export const catalogResolvers: Resolvers = {
  Query: {
    products: async (_parent, args, { principal, services }) =>
      toConnection(await services.catalog.listProducts(principal, connectionArguments(args))),
  },
  Product: {
    gtin: (product) => product.gtin ?? [],
  },
};
