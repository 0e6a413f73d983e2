/**
 * The tenant's catalog setting (`GET/PUT /api/agents/catalog`): which search index is the catalog
 * and which index field holds each product property. One document is one product with one variant
 * (the SKU): the product's id is its `product_id` field, the variant's id its `sku` field.
 */
import { z } from '../../kernel/rest/schemas';

const FieldName = z.string().min(1).max(100).openapi({ description: 'An index field (as hits show it).' });

export const CatalogMapping = z
  .object({
    product_id: FieldName.openapi({
      description: "Field of the product's id; must be a filter of the index (lookups filter on it).",
    }),
    sku: FieldName.openapi({
      description:
        "Field of the SKU: the variant's id, and what its availability is read by; must be a filter of the index.",
    }),
    title: FieldName,
    description: FieldName.nullable().default(null),
    price: FieldName.openapi({
      description: 'A NUMBER field of the price; must be a filter of the index (price filters bound it).',
    }),
    price_scale: z.int().min(0).max(4).default(0).openapi({
      description:
        'Decimals of the price field: 0 when it holds minor units (cents), 2 when it holds a decimal such as 12.99.',
    }),
    currency: z
      .string()
      .regex(/^[A-Z]{3}$/, 'must be an ISO 4217 code such as EUR')
      .nullable()
      .default(null)
      .openapi({ description: 'The one currency of the catalog, when no `currency_field` is given.' }),
    currency_field: FieldName.nullable().default(null).openapi({
      description: "Field holding each document's ISO 4217 currency; documents without one fall back to `currency`.",
    }),
    categories: FieldName.nullable().default(null).openapi({
      description: 'Field of the categories (a string or a list); must be a filter of the index to filter on it.',
    }),
    image_url: FieldName.nullable().default(null),
    url: FieldName.nullable().default(null).openapi({ description: "Field of the product page's URL." }),
  })
  .strict()
  .refine((mapping) => mapping.currency !== null || mapping.currency_field !== null, {
    message: 'needs `currency` or `currency_field`',
    path: ['currency'],
  })
  .openapi('CatalogMapping');
export type CatalogMappingData = z.output<typeof CatalogMapping>;

export const CatalogSettingsInput = z
  .object({
    index: z.string().min(1).max(64).openapi({ description: 'Alias of the search index that holds the catalog.' }),
    mapping: CatalogMapping,
  })
  .strict()
  .openapi('CatalogSettingsInput');
export type CatalogSettingsInputData = z.output<typeof CatalogSettingsInput>;

export const CatalogSettingsOutput = z
  .object({
    index: z.string(),
    mapping: CatalogMapping,
    updated_at: z.iso.datetime(),
  })
  .openapi('CatalogSettings', {
    example: {
      index: 'products',
      mapping: {
        product_id: 'product_id',
        sku: 'sku',
        title: 'title',
        description: 'description',
        price: 'price',
        price_scale: 2,
        currency: 'EUR',
        currency_field: null,
        categories: 'categories',
        image_url: 'image',
        url: 'url',
      },
      updated_at: '2026-11-27T10:00:00.000Z',
    },
  });
export type CatalogSettingsData = z.output<typeof CatalogSettingsOutput>;
