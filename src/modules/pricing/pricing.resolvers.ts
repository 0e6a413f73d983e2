import DataLoader from 'dataloader';
import type { Resolvers } from '../../__generated__/graphql';
import { connectionArguments, toConnection } from '../../kernel/graphql/connection';
import { IdempotencyKey, idempotencyOf } from '../../kernel/graphql/idempotency';
import { requestLoader } from '../../kernel/graphql/loaders';
import { underField, withInput } from '../../kernel/validation';
import type { GraphQLContext } from '../context';
import { RemoveProductPricesInput, SetProductPricesInput } from './pricing.schemas';
import type { PriceRecord } from './pricing.types';

const timestamps = {
  created_at: (row: { createdAt: Date | number }) => new Date(row.createdAt).getTime(),
  updated_at: (row: { updatedAt: Date | number }) => new Date(row.updatedAt).getTime(),
};

/** The prices of each product of a request, in one query. */
const pricesLoader = (context: GraphQLContext) =>
  requestLoader(
    context,
    'product-prices',
    () =>
      new DataLoader<string, PriceRecord[]>(async (productIds) => {
        const rows = await context.services.pricing.pricesOfProducts(context.principal, productIds);
        return productIds.map((id) => rows.filter((row) => row.productId === id));
      }),
  );

interface ChannelPriceView {
  currency: string;
  amount: number;
  compare_at: number | null;
  tax_inclusive: boolean;
}

/** `Product.price(channel_id:)` of every product of a request, one query per channel. */
const channelPriceLoader = (context: GraphQLContext) =>
  requestLoader(
    context,
    'channel-prices',
    () =>
      new DataLoader<string, ChannelPriceView | null>(async (keys) => {
        const byChannel = new Map<string, string[]>();
        for (const key of keys) {
          const [channelId, productId] = key.split('|') as [string, string];
          byChannel.set(channelId, [...(byChannel.get(channelId) ?? []), productId]);
        }
        const answers = new Map<string, ChannelPriceView | null>();
        for (const [channelId, productIds] of byChannel) {
          const lines = await context.services.pricing.channelPrices(context.principal, channelId, productIds);
          for (const productId of productIds) {
            const price = lines.prices.get(productId);
            answers.set(
              `${channelId}|${productId}`,
              price
                ? {
                    currency: lines.currency,
                    amount: price.amount,
                    compare_at: price.compareAt,
                    tax_inclusive: lines.taxInclusive,
                  }
                : null,
            );
          }
        }
        return keys.map((key) => answers.get(key) ?? null);
      }),
  );

const upper = (taxClass: string) => taxClass.toUpperCase() as 'STANDARD' | 'REDUCED' | 'ZERO';

const SetPricesInput = SetProductPricesInput.extend({ idempotency_key: IdempotencyKey });

export const pricingResolvers: Resolvers = {
  Query: {
    taxZones: async (_parent, args, { principal, services }) =>
      toConnection(await services.pricing.listTaxZones(principal, connectionArguments(args))),
    taxZone: (_parent, { id }, { principal, services }) => services.pricing.getTaxZone(principal, id),
  },
  Mutation: {
    setProductPrices: (_parent, { input }, { principal, services }) =>
      withInput(SetPricesInput, input, async (valid) => ({
        prices: await underField('prices', () =>
          services.pricing.setPrices(
            principal,
            valid.prices.map((price) => ({
              productId: valid.product_id,
              channelId: price.channel_id ?? null,
              currency: price.currency,
              amount: price.amount,
              compareAt: price.compare_at ?? null,
            })),
            idempotencyOf('setProductPrices', valid),
          ),
        ),
      })),
    removeProductPrices: (_parent, { input }, { principal, services }) =>
      withInput(RemoveProductPricesInput, input, async (valid) => ({
        removed: await underField('prices', () =>
          services.pricing.removePrices(
            principal,
            valid.prices.map((price) => ({
              productId: valid.product_id,
              channelId: price.channel_id ?? null,
              currency: price.currency,
            })),
          ),
        ),
      })),
  },
  Product: {
    prices: (product, _args, context) => pricesLoader(context).load(product.id),
    price: (product, { channel_id }, context) => channelPriceLoader(context).load(`${channel_id}|${product.id}`),
  },
  Price: { channel_id: (price) => price.channelId, compare_at: (price) => price.compareAt, ...timestamps },
  TaxZone: timestamps,
  TaxRate: {
    tax_class: (rate) => upper(rate.taxClass),
    rate_basis_points: (rate) => rate.rateBasisPoints,
  },
};
