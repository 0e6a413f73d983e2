/**
 * The UCP catalog operations (`search_catalog`, `lookup_catalog`, `get_product`) over a tenant's
 * catalog index: a UCP request becomes one search of the index, each hit one product with one
 * variant (see `product-mapping.ts`), and the variants' availability is read from stock for the
 * whole page at once. Shared by the REST binding, the public MCP endpoint and the tenant's `/mcp`.
 */
import type { FilterData, SearchContextData, SearchResponseEntryData } from '../search';
import type { CatalogMappingData } from './catalog-settings.schemas';
import { decodeCursor, encodeCursor } from './catalog-cursor';
import { documentIdentity, productOfHit } from './product-mapping';
import type {
  UcpFiltersData,
  UcpGetProductRequestData,
  UcpLookupRequestData,
  UcpSearchRequestData,
} from './ucp-requests.schemas';
import {
  DEFAULT_PAGE_LIMIT,
  MAX_PAGE_LIMIT,
  UCP_LOOKUP_CAPABILITY,
  UCP_SEARCH_CAPABILITY,
  UCP_VERSION,
  type UcpGetProductResultData,
  type UcpLookupResponseData,
  type UcpMessageData,
  type UcpProductData,
  type UcpSearchResponseData,
} from './ucp.schemas';

export type CatalogSearchResult = SearchResponseEntryData['results'][number];
export type CatalogHit = CatalogSearchResult['hits'][number];

/** One tenant's catalog, opened: how documents map, a search of its index, and stock. */
export interface OpenCatalog {
  mapping: CatalogMappingData;
  /** Runs one search of the catalog index (the index is chosen by the catalog, not the context). */
  search(context: Omit<SearchContextData, 'indices'>): Promise<CatalogSearchResult>;
  /** The SKUs among `skus` that have sellable stock now, read in one batch. */
  availableSkus(skus: string[]): Promise<Set<string>>;
}

/** What the catalog operations run against: opening fails (NOT_FOUND) when the tenant names no catalog. */
export interface CatalogToolContext {
  open(): Promise<OpenCatalog>;
}

/** Most hits a lookup reads: every identifier may name a product and a SKU. */
const LOOKUP_HIT_LIMIT = 250;

const ucpBlock = (capability: string) => ({
  version: UCP_VERSION,
  capabilities: { [capability]: [{ version: UCP_VERSION }] },
});

/** Search filters on the mapped price and categories fields, in the index's units. */
export function searchFilters(mapping: CatalogMappingData, filters: UcpFiltersData | undefined): FilterData[] {
  const result: FilterData[] = [];
  const scale = 10 ** mapping.price_scale;
  if (filters?.price?.min !== undefined) {
    result.push({ key: mapping.price, operator: 'gte', values: [filters.price.min / scale] });
  }
  if (filters?.price?.max !== undefined) {
    result.push({ key: mapping.price, operator: 'lte', values: [filters.price.max / scale] });
  }
  if (filters?.categories && filters.categories.length > 0 && mapping.categories) {
    result.push({ key: mapping.categories, operator: 'in', values: filters.categories });
  }
  return result;
}

/** The products of a page of hits, with their availability; hits that do not map to a product are left out. */
async function productsOf(catalog: OpenCatalog, hits: CatalogHit[]): Promise<UcpProductData[]> {
  const identities = hits.map((hit) => documentIdentity(catalog.mapping, hit));
  const skus = [...new Set(identities.flatMap((identity) => (identity ? [identity.sku] : [])))];
  const available = skus.length > 0 ? await catalog.availableSkus(skus) : new Set<string>();
  return hits.flatMap((hit) => {
    const product = productOfHit(catalog.mapping, hit, available);
    return product ? [product] : [];
  });
}

/** `search_catalog`: the query and filters as one search of the index, paged by an opaque cursor. */
export async function searchCatalog(
  context: CatalogToolContext,
  request: UcpSearchRequestData,
): Promise<UcpSearchResponseData> {
  const catalog = await context.open();
  const limit = Math.min(request.pagination?.limit ?? DEFAULT_PAGE_LIMIT, MAX_PAGE_LIMIT);
  const offset = request.pagination?.cursor ? decodeCursor(request.pagination.cursor) : 0;
  const result = await catalog.search({
    q: request.query ?? '',
    filters: searchFilters(catalog.mapping, request.filters),
    limit,
    offset,
  });
  const products = await productsOf(catalog, result.hits);
  const next = offset + result.hits.length;
  const hasNextPage = result.hits.length === limit && next < result.count && encodeCursor(next) !== null;
  return {
    ucp: ucpBlock(UCP_SEARCH_CAPABILITY),
    products,
    pagination: {
      has_next_page: hasNextPage,
      ...(hasNextPage ? { cursor: encodeCursor(next)! } : {}),
      total_count: result.count,
    },
  };
}

/** The products the identifiers name (product ids or SKUs), each once, with the identifiers that found it. */
async function resolve(catalog: OpenCatalog, ids: string[], filters: UcpFiltersData | undefined) {
  const unique = [...new Set(ids)];
  const { mapping } = catalog;
  const result = await catalog.search({
    q: '',
    filters: [
      {
        any: [
          { key: mapping.product_id, operator: 'in', values: unique },
          { key: mapping.sku, operator: 'in', values: unique },
        ],
      },
      ...searchFilters(mapping, filters),
    ],
    limit: LOOKUP_HIT_LIMIT,
    offset: 0,
  });
  const seen = new Set<string>();
  const hits = result.hits.filter((hit) => {
    const identity = documentIdentity(mapping, hit);
    if (!identity || seen.has(identity.productId)) return false;
    seen.add(identity.productId);
    return true;
  });
  const products = await productsOf(catalog, hits);
  const found = new Set<string>();
  const correlated = products.map((product) => ({
    ...product,
    variants: product.variants.map((variant) => {
      const inputs = unique.flatMap((id) => {
        if (id === variant.id) return [{ id, match: 'exact' }];
        if (id === product.id) return [{ id, match: 'featured' }];
        return [];
      });
      inputs.forEach((input) => found.add(input.id));
      return { ...variant, inputs };
    }),
  }));
  const notFound: UcpMessageData[] = unique
    .filter((id) => !found.has(id))
    .map((id) => ({ type: 'info', code: 'not_found', content: id }));
  return { products: correlated, notFound };
}

/** `lookup_catalog`: products by product id or SKU; unknown identifiers are `not_found` info messages. */
export async function lookupCatalog(
  context: CatalogToolContext,
  request: UcpLookupRequestData,
): Promise<UcpLookupResponseData> {
  const catalog = await context.open();
  const { products, notFound } = await resolve(catalog, request.ids, request.filters);
  return {
    ucp: ucpBlock(UCP_LOOKUP_CAPABILITY),
    products: products.filter((product) => product.variants.every((variant) => variant.inputs.length > 0)),
    ...(notFound.length > 0 ? { messages: notFound } : {}),
  };
}

/** `get_product`: one product by product id or SKU, or the UCP error response (`not_found`, unrecoverable). */
export async function getProduct(
  context: CatalogToolContext,
  request: UcpGetProductRequestData,
): Promise<UcpGetProductResultData> {
  const catalog = await context.open();
  const { products } = await resolve(catalog, [request.id], request.filters);
  const product = products[0];
  if (!product) {
    return {
      ucp: { ...ucpBlock(UCP_LOOKUP_CAPABILITY), status: 'error' },
      messages: [
        { type: 'error', code: 'not_found', content: `Product not found: ${request.id}`, severity: 'unrecoverable' },
      ],
    };
  }
  const variants = product.variants.map(({ inputs: _inputs, ...variant }) => variant);
  return { ucp: ucpBlock(UCP_LOOKUP_CAPABILITY), product: { ...product, variants } };
}
