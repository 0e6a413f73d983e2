/** Every input of prices and tax zones, one zod schema per operation (REST bodies and GraphQL inputs). */
import { z } from '../../kernel/rest/schemas';
import { isUuid } from '../../kernel/ids';
import { displayName } from '../../kernel/validation';
import { TAX_CLASSES } from './pricing.types';

/** Most prices one bulk write carries: all are set, or none. */
export const MAX_PRICES_PER_WRITE = 10_000;
/** The largest amount in minor units (GraphQL `Int`: 2^31 − 1). */
export const MAX_AMOUNT = 2_147_483_647;
/** The largest rate: 1000 % in basis points. */
export const MAX_RATE_BASIS_POINTS = 100_000;

const Id = (description: string) =>
  z.string().max(64).refine(isUuid, { message: 'is not a valid id' }).openapi({ description });

export const Currency = z
  .string()
  .regex(/^[A-Z]{3}$/, 'must be an ISO 4217 currency code in upper case, for example EUR')
  .openapi({ description: 'ISO 4217 currency code in upper case, for example `EUR`.' });

const Amount = (description: string) => z.int().min(0).max(MAX_AMOUNT).openapi({ description });

export const TaxClassSchema = z.enum(TAX_CLASSES).openapi({
  description: 'The tax class of a product: which rate of a tax zone it takes.',
});

/** One price of the bulk write: a product's price in a currency, or (with `channelId`) a channel's override. */
export const PriceWriteItem = z
  .object({
    productId: Id('The product.'),
    channelId: Id("A sales channel: the price overrides the product's price there (in the channel's currency).")
      .nullable()
      .optional(),
    currency: Currency,
    amount: Amount("The price in the currency's minor units (cents), 0 to 2147483647."),
    compareAt: Amount('The price before a reduction, shown struck through; null or left out: none.')
      .nullable()
      .optional(),
  })
  .strict()
  .openapi('PriceWrite');
export type PriceWriteItem = z.output<typeof PriceWriteItem>;

/** What names one price to remove. */
export const PriceKey = z
  .object({
    productId: Id('The product.'),
    channelId: Id('The sales channel of an override; left out or null: the product’s own price.').nullable().optional(),
    currency: Currency,
  })
  .strict()
  .openapi('PriceKey');
export type PriceKey = z.output<typeof PriceKey>;

export const PutPricesBody = z.object({ data: z.array(PriceWriteItem).min(1).max(MAX_PRICES_PER_WRITE) }).strict();
export const RemovePricesBody = z.object({ data: z.array(PriceKey).min(1).max(MAX_PRICES_PER_WRITE) }).strict();

export const PriceSchema = z
  .object({
    id: z.string(),
    productId: z.string(),
    channelId: z.string().nullable(),
    currency: z.string(),
    amount: z.int(),
    compareAt: z.int().nullable(),
    createdAt: z.int().openapi({ description: 'Unix milliseconds.' }),
    updatedAt: z.int().openapi({ description: 'Unix milliseconds.' }),
  })
  .openapi('Price');

// GraphQL inputs (snake_case, as the GraphQL API names fields)

/** `setProductPrices`: prices of one product, each set (insert or replace). */
export const SetProductPricesInput = z.object({
  product_id: z.string(),
  prices: z
    .array(
      z.object({
        currency: Currency,
        channel_id: z.string().nullish(),
        amount: z.int().min(0).max(MAX_AMOUNT),
        compare_at: z.int().min(0).max(MAX_AMOUNT).nullish(),
      }),
    )
    .min(1)
    .max(100, 'may hold at most 100 prices'),
});
/** `removeProductPrices`: prices of one product to remove, by currency and channel. */
export const RemoveProductPricesInput = z.object({
  product_id: z.string(),
  prices: z
    .array(z.object({ currency: Currency, channel_id: z.string().nullish() }))
    .min(1)
    .max(100, 'may hold at most 100 prices'),
});

// Tax zones

export const Region = z
  .string()
  .min(1)
  .max(16)
  .regex(/^[A-Za-z0-9-]+$/, 'must be a region code: letters, digits and hyphens, for example CA or ES-CN')
  .transform((value) => value.toUpperCase())
  .openapi({ description: 'A region of the country (ISO 3166-2 subdivision code without the country, e.g. `CA`).' });

export const Country = z
  .string()
  .regex(/^[A-Za-z]{2}$/, 'must be a two-letter country code (ISO 3166-1 alpha-2)')
  .transform((value) => value.toUpperCase())
  .openapi({ description: 'ISO 3166-1 alpha-2 country code, for example `DE`.' });

const TaxRateInput = z
  .object({
    taxClass: TaxClassSchema,
    name: displayName(100).optional().openapi({ description: 'Name on the tax line; default: the zone’s name.' }),
    rateBasisPoints: z
      .int()
      .min(0)
      .max(MAX_RATE_BASIS_POINTS)
      .openapi({ description: 'The rate in basis points: 2000 is 20 %, 550 is 5.5 %.' }),
  })
  .strict()
  .openapi('TaxRateInput');

const Rates = z
  .array(TaxRateInput)
  .max(TAX_CLASSES.length)
  .refine((rates) => new Set(rates.map((rate) => rate.taxClass)).size === rates.length, {
    message: 'has one rate per tax class at most',
  })
  .openapi({ description: 'At most one rate per tax class; a class without a rate is taxed at zero.' });

export const TaxZoneInput = z
  .object({
    name: displayName(100).openapi({ description: 'Display name, 1 to 100 characters, e.g. `Germany`.' }),
    country: Country,
    region: Region.nullable().optional(),
    rates: Rates,
  })
  .strict()
  .openapi('TaxZoneInput');
export type TaxZoneInput = z.output<typeof TaxZoneInput>;

export const TaxZoneBody = z.object({ data: TaxZoneInput }).strict();

export const TaxZoneSchema = z
  .object({
    id: z.string(),
    name: z.string(),
    country: z.string(),
    region: z.string().nullable(),
    rates: z.array(z.object({ taxClass: TaxClassSchema, name: z.string(), rateBasisPoints: z.int() })),
    createdAt: z.int().openapi({ description: 'Unix milliseconds.' }),
    updatedAt: z.int().openapi({ description: 'Unix milliseconds.' }),
  })
  .openapi('TaxZone');

/** `taxFor`'s input as the face takes it (checked at the door of the face: amounts are safe integers). */
export const TaxForInput = z.object({
  destination: z.object({ country: Country, region: z.string().max(64).nullish() }).nullable(),
  taxInclusive: z.boolean(),
  items: z.array(
    z.object({ key: z.string(), amount: z.number().int().refine(Number.isSafeInteger), taxClass: TaxClassSchema }),
  ),
});
