/**
 * REST operations of the agents' catalog: the tenant's catalog setting, and a proxy key's public
 * storefront catalog in the UCP REST binding (bodies and answers as UCP defines them, not in the
 * `{data}` envelope) with its UCP business profile.
 */
import { single } from '../../kernel/envelope';
import type { ErrorKey } from '../../kernel/errors';
import { singleEnvelope, z } from '../../kernel/rest/schemas';
import { underField } from '../../kernel/validation';
import { defineOperation, type Services } from '../context';
import { getProduct, lookupCatalog, searchCatalog } from './catalog-core';
import { CatalogSettingsInput, CatalogSettingsOutput } from './catalog-settings.schemas';
import { ucpProfile } from './profile';
import { UcpGetProductRequest, UcpLookupRequest, UcpSearchRequest } from './ucp-requests.schemas';
import {
  MAX_LOOKUP_IDS,
  UcpBusinessProfile,
  UcpGetProductResult,
  UcpLookupResponse,
  UcpSearchResponse,
} from './ucp.schemas';

const settingsTag = 'Agents';
const storefrontTag = 'Storefront catalog (UCP)';

/** Counted per client address, for every request to any proxy key's storefront catalog. */
export const storefrontLimit = {
  name: 'storefront catalog',
  perMinute: (services: Services) => services.config.searchEventsPerMinute,
};

const KeyParams = z.object({
  key: z.string().max(200).openapi({ description: 'Key of the proxy whose storefront catalog is asked.' }),
});
const UcpAgentHeaders = z.object({
  'UCP-Agent': z.string().min(1).max(2000).openapi({
    description: 'The platform\'s profile, as RFC 8941 dictionary: `profile="https://platform.example/profile"`.',
  }),
});

export const getCatalogSettings = defineOperation({
  operationId: 'getCatalogSettings',
  method: 'get',
  path: '/api/agents/catalog',
  summary: 'Get the catalog setting',
  description: "Which search index is the tenant's catalog for agents and how its documents map to products.",
  tag: settingsTag,
  security: 'bearer',
  scopes: ['indexes:read'],
  responses: { 200: { description: 'The setting.', schema: singleEnvelope(CatalogSettingsOutput) } },
  errors: ['FORBIDDEN', 'NOT_FOUND'],
  async handler({ principal, services }) {
    return { status: 200, body: single(await services.ucp.getSettings(principal)) };
  },
});

export const putCatalogSettings = defineOperation({
  operationId: 'putCatalogSettings',
  method: 'put',
  path: '/api/agents/catalog',
  summary: 'Set the catalog setting',
  description:
    "Names the search index that is the tenant's catalog and the field of each product property. One document " +
    'is one product with one variant (its SKU). The product id, SKU and price fields (and the categories field, ' +
    'when given) must be filters of the index. An unknown alias is a 400 naming `body.data.index`.',
  tag: settingsTag,
  security: 'bearer',
  scopes: ['indexes:write'],
  body: z.object({ data: CatalogSettingsInput }).strict(),
  responses: { 200: { description: 'The stored setting.', schema: singleEnvelope(CatalogSettingsOutput) } },
  errors: ['BAD_REQUEST', 'FORBIDDEN'],
  async handler({ body, principal, services }) {
    return {
      status: 200,
      body: single(await underField('body.data', () => services.ucp.putSettings(principal, body.data))),
    };
  },
});

const storefrontDescription =
  ' Public (no token), limited to a proxy key whose search settings include the catalog index; a proxy that ' +
  'requires authentication needs, as `POST /api/instant/search/{key}` does, a bearer token of its tenant with ' +
  'scope `search`. Each client address may send ' +
  '`SEARCH_EVENTS_PER_MINUTE` requests per minute (default 300) to storefront catalogs, then gets a 429 with ' +
  '`Retry-After`. Business outcomes are 200 with UCP `messages`; malformed requests are 400.';

/** What every operation of a storefront catalog shares: public, per proxy key, limited per client address. */
const storefront = {
  tag: storefrontTag,
  security: 'bearer-optional',
  scopes: ['search'],
  cors: true,
  limitPerAddress: storefrontLimit,
  params: KeyParams,
} as const;

/** What the catalog's POST operations share: the agent's profile header and the errors of a body. */
const catalogRequest: { headers: typeof UcpAgentHeaders; errors: ErrorKey[] } = {
  headers: UcpAgentHeaders,
  errors: ['BAD_REQUEST', 'UNAUTHORIZED', 'NOT_FOUND', 'FORBIDDEN', 'TOO_MANY_REQUESTS'],
};

export const searchStorefrontCatalog = defineOperation({
  operationId: 'searchStorefrontCatalog',
  method: 'post',
  path: '/ucp/{key}/catalog/search',
  summary: 'Search the catalog (UCP)',
  description:
    'UCP `POST /catalog/search`: products matching `query`, narrowed by `filters.categories` and `filters.price` ' +
    '(minor units), 10 per page by default (at most 50), `pagination.cursor` for the next page.' +
    storefrontDescription,
  ...storefront,
  ...catalogRequest,
  body: UcpSearchRequest,
  responses: { 200: { description: 'The UCP search response.', schema: UcpSearchResponse } },
  async handler({ params, body, optionalPrincipal, services }) {
    return { status: 200, body: await searchCatalog(await services.ucp.forProxy(params.key, optionalPrincipal), body) };
  },
});

export const lookupStorefrontCatalog = defineOperation({
  operationId: 'lookupStorefrontCatalog',
  method: 'post',
  path: '/ucp/{key}/catalog/lookup',
  summary: 'Look products up (UCP)',
  description:
    `UCP \`POST /catalog/lookup\`: products by product id or SKU (1 to ${MAX_LOOKUP_IDS} \`ids\`; more is a 400 ` +
    '`request_too_large`); unknown identifiers are `not_found` info messages.' +
    storefrontDescription,
  ...storefront,
  ...catalogRequest,
  body: UcpLookupRequest,
  responses: { 200: { description: 'The UCP lookup response.', schema: UcpLookupResponse } },
  async handler({ params, body, optionalPrincipal, services }) {
    return { status: 200, body: await lookupCatalog(await services.ucp.forProxy(params.key, optionalPrincipal), body) };
  },
});

export const getStorefrontProduct = defineOperation({
  operationId: 'getStorefrontProduct',
  method: 'post',
  path: '/ucp/{key}/catalog/product',
  summary: 'Get a product (UCP)',
  description:
    'UCP `POST /catalog/product`: one product by product id or SKU, or (still 200) `ucp.status: "error"` with an ' +
    'unrecoverable `not_found` message.' +
    storefrontDescription,
  ...storefront,
  ...catalogRequest,
  body: UcpGetProductRequest,
  responses: { 200: { description: 'The product, or the UCP error response.', schema: UcpGetProductResult } },
  async handler({ params, body, optionalPrincipal, services }) {
    return { status: 200, body: await getProduct(await services.ucp.forProxy(params.key, optionalPrincipal), body) };
  },
});

export const getStorefrontProfile = defineOperation({
  operationId: 'getStorefrontProfile',
  method: 'get',
  path: '/ucp/{key}/.well-known/ucp',
  summary: 'UCP business profile',
  description:
    "The UCP profile of a proxy key's storefront catalog: the REST and MCP endpoints and the catalog " +
    "capabilities, with the UCP version implemented. Also served at `/.well-known/ucp` on the proxy's own host " +
    '(`{key}.EDGE_DOMAIN`).' +
    storefrontDescription,
  ...storefront,
  responses: { 200: { description: 'The profile.', schema: UcpBusinessProfile } },
  errors: ['UNAUTHORIZED', 'NOT_FOUND', 'FORBIDDEN', 'TOO_MANY_REQUESTS'],
  async handler({ params, optionalPrincipal, services }) {
    await services.ucp.forProxy(params.key, optionalPrincipal);
    return {
      status: 200,
      body: ucpProfile(services.baseUrl, params.key),
      headers: { 'Cache-Control': 'public, max-age=300' },
    };
  },
});

export const ucpOperations = [
  getCatalogSettings,
  putCatalogSettings,
  searchStorefrontCatalog,
  lookupStorefrontCatalog,
  getStorefrontProduct,
  getStorefrontProfile,
];
