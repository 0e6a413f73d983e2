/**
 * UCP catalog requests: the REST bodies (`POST /catalog/search`, `/catalog/lookup`,
 * `/catalog/product`) and the MCP tool arguments (`{meta: {"ucp-agent": …}, catalog: <the same body>}`).
 * Open where the specification is open (`context`, `signals`, `attribution`, extra filters); every
 * string and list we read is bounded.
 */
import { z } from '../../kernel/rest/schemas';
import { CatalogCursor } from './catalog-cursor';
import {
  MAX_CATEGORY_FILTERS,
  MAX_IDENTIFIER_LENGTH,
  MAX_LOOKUP_IDS,
  MAX_QUERY_LENGTH,
  UcpAmount,
  UcpSelectedOption,
} from './ucp.schemas';

const ShortText = z.string().max(1000);

const Context = z
  .looseObject({
    address_country: ShortText.optional(),
    address_region: ShortText.optional(),
    postal_code: ShortText.optional(),
    location: ShortText.optional(),
    intent: ShortText.optional(),
    language: ShortText.optional(),
    currency: ShortText.optional(),
  })
  .openapi({ description: 'Buyer signals for relevance; accepted and not used by this catalog.' });
const OpenObject = z.record(z.string().max(200), z.unknown());

export const UcpSearchFilters = z
  .looseObject({
    categories: z
      .array(z.string().min(1).max(200))
      .max(MAX_CATEGORY_FILTERS)
      .optional()
      .openapi({ description: 'Products in any of these categories (values of the mapped categories field).' }),
    price: z
      .object({ min: UcpAmount.optional(), max: UcpAmount.optional() })
      .strict()
      .optional()
      .openapi({ description: 'Bounds on the variant price, inclusive, in minor units of the catalog currency.' }),
  })
  .openapi('UcpSearchFilters');

const common = {
  context: Context.optional(),
  signals: OpenObject.optional(),
  attribution: OpenObject.optional(),
  filters: UcpSearchFilters.optional(),
};

export const UcpSearchRequest = z
  .looseObject({
    query: z.string().max(MAX_QUERY_LENGTH).optional(),
    ...common,
    pagination: z
      .object({
        cursor: CatalogCursor.optional(),
        limit: z.int().min(1).max(Number.MAX_SAFE_INTEGER).optional(),
      })
      .strict()
      .optional(),
  })
  .refine(
    (request) =>
      (request.query !== undefined && request.query.trim() !== '') ||
      (request.filters?.categories?.length ?? 0) > 0 ||
      request.filters?.price !== undefined,
    { message: 'needs a non-empty query or a filter (categories or price)', path: ['query'] },
  )
  .openapi('UcpSearchRequest');

export const UcpLookupRequest = z
  .looseObject({
    ids: z
      .array(z.string().min(1).max(MAX_IDENTIFIER_LENGTH))
      .min(1)
      .max(MAX_LOOKUP_IDS, `request_too_large: at most ${MAX_LOOKUP_IDS} identifiers per lookup`),
    ...common,
  })
  .openapi('UcpLookupRequest');

export const UcpGetProductRequest = z
  .looseObject({
    id: z.string().min(1).max(MAX_IDENTIFIER_LENGTH),
    selected: z.array(UcpSelectedOption).max(20).optional(),
    preferences: z.array(z.string().max(200)).max(20).optional(),
    ...common,
  })
  .openapi('UcpGetProductRequest');

/** `meta` of every MCP tool call: the platform's profile (`meta["ucp-agent"].profile`) is required. */
export const UcpRequestMeta = z.looseObject({
  'ucp-agent': z.looseObject({ profile: z.string().min(1).max(2000) }),
});

/**
 * `meta` on the tenant's authenticated `/mcp`: optional, and so is the profile in it. The caller is
 * known by its credential; without a profile the tenant's own catalog settings apply.
 */
export const TenantRequestMeta = z
  .looseObject({
    'ucp-agent': z.looseObject({ profile: z.string().min(1).max(2000).optional() }).optional(),
  })
  .optional()
  .describe('Optional here: `{"ucp-agent": {"profile": "<your platform profile URL>"}}`, if you have one.');

export type UcpSearchRequestData = z.output<typeof UcpSearchRequest>;
export type UcpLookupRequestData = z.output<typeof UcpLookupRequest>;
export type UcpGetProductRequestData = z.output<typeof UcpGetProductRequest>;
export type UcpFiltersData = z.output<typeof UcpSearchFilters>;

/** The arguments of the three MCP tools, with the `meta` the endpoint asks for. */
export const catalogArguments = (meta: typeof UcpRequestMeta | typeof TenantRequestMeta) => ({
  search: z.object({ meta, catalog: UcpSearchRequest }),
  lookup: z.object({ meta, catalog: UcpLookupRequest }),
  product: z.object({ meta, catalog: UcpGetProductRequest }),
});

/** The arguments of the three MCP tools on the public storefront (the profile required). */
const storefront = catalogArguments(UcpRequestMeta);
export const SearchCatalogArguments = storefront.search;
export const LookupCatalogArguments = storefront.lookup;
export const GetProductArguments = storefront.product;
