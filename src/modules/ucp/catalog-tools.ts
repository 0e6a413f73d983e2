/**
 * The UCP catalog capability as MCP operations (the UCP MCP binding): `search_catalog`,
 * `lookup_catalog` and `get_product`, whose arguments are `{meta: {"ucp-agent": …}, catalog: …}` and
 * whose results are the UCP responses as structured content. Served on the tenant's `/mcp` (scope
 * `search`) and, without authentication, on a proxy key's storefront catalog.
 */
import { defineMcpTool, ok, type McpTool } from '../../kernel/mcp';
import { getProduct, lookupCatalog, searchCatalog, type CatalogToolContext } from './catalog-core';
import { catalogArguments, TenantRequestMeta, UcpRequestMeta } from './ucp-requests.schemas';
import { UcpGetProductOutput, UcpLookupResponse, UcpSearchResponse } from './ucp.schemas';

const readOnly = { readOnlyHint: true, destructiveHint: false, idempotentHint: true };

const buildCatalogTools = (meta: typeof UcpRequestMeta | typeof TenantRequestMeta): McpTool<CatalogToolContext>[] => {
  const args = catalogArguments(meta);
  return [
    defineMcpTool({
      name: 'search_catalog',
      title: 'Search the catalog',
      description:
        'UCP catalog search (dev.ucp.shopping.catalog.search): products matching `catalog.query`, narrowed by ' +
        '`catalog.filters.categories` and `catalog.filters.price` (min/max in minor units), 10 per page by ' +
        'default, with `pagination.cursor` for the next page. Each variant says whether it is in stock now.',
      scopes: ['search'],
      input: args.search,
      output: UcpSearchResponse,
      annotations: readOnly,
      call: async ({ catalog }, context) => ok(await searchCatalog(context, catalog)),
    }),
    defineMcpTool({
      name: 'lookup_catalog',
      title: 'Look products up',
      description:
        'UCP catalog lookup (dev.ucp.shopping.catalog.lookup): the products named by `catalog.ids` (product ids or ' +
        'SKUs, at most 100); each variant lists the identifiers that found it in `inputs`, and unknown identifiers ' +
        'come back as `not_found` messages.',
      scopes: ['search'],
      input: args.lookup,
      output: UcpLookupResponse,
      annotations: readOnly,
      call: async ({ catalog }, context) => ok(await lookupCatalog(context, catalog)),
    }),
    defineMcpTool({
      name: 'get_product',
      title: 'Get a product',
      description:
        'UCP get product (dev.ucp.shopping.catalog.lookup): one product by product id or SKU with its current ' +
        'price and availability, or `ucp.status: "error"` with a `not_found` message.',
      scopes: ['search'],
      input: args.product,
      output: UcpGetProductOutput,
      annotations: readOnly,
      call: async ({ catalog }, context) => ok(await getProduct(context, catalog)),
    }),
  ];
};

/** The operations as the public storefront serves them: `meta["ucp-agent"].profile` is required, as UCP says. */
export const catalogTools = buildCatalogTools(UcpRequestMeta);

/** The same on the tenant's authenticated `/mcp`: the credential names the caller, `meta` is optional. */
export const tenantCatalogTools = buildCatalogTools(TenantRequestMeta);
