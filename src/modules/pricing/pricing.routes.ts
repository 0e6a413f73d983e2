/** REST writes of the back office: prices in bulk and tax zones (and their lists). */
import { list, single } from '../../kernel/envelope';
import { IdempotencyHeaders, idempotencyOf } from '../../kernel/rest/idempotency-header';
import { pageBlock } from '../../kernel/rest/page-links';
import { listEnvelope, pageArguments, pageQuery, singleEnvelope, z } from '../../kernel/rest/schemas';
import { underField } from '../../kernel/validation';
import { defineOperation } from '../context';
import {
  Currency,
  MAX_PRICES_PER_WRITE,
  PriceSchema,
  PutPricesBody,
  RemovePricesBody,
  TaxZoneBody,
  TaxZoneSchema,
} from './pricing.schemas';
import { priceView, taxZoneView } from './pricing.service';

const tag = 'Prices and tax';
const pricesPath = '/api/prices';
const zonesPath = '/api/tax-zones';

const Uuid = (description: string) =>
  z
    .string()
    .regex(/^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/, 'is not a valid id')
    .openapi({ description });

const limitNote =
  `At most ${MAX_PRICES_PER_WRITE} entries per request, and a body of at most 1 MiB (else 413): ` +
  'about 9 000 entries with both ids and a compare-at price, so send larger sets in several requests.';

export const setPrices = defineOperation({
  operationId: 'setPrices',
  method: 'put',
  path: pricesPath,
  summary: 'Set prices in bulk',
  description:
    "Sets prices, all or none. Each entry is a product's price in a currency, or with `channelId` that sales " +
    "channel's override (in the channel's currency). Every entry is checked first (a product and a channel of the " +
    "tenant, the channel's currency, no entry twice; each problem named under `body.data[i]`); then all are written " +
    'in one transaction, each replacing the price with the same product, currency and channel. Sending the same ' +
    'body again changes nothing; with an `Idempotency-Key` it also answers the first response. Returns the prices ' +
    `in the order of the entries. ${limitNote}`,
  tag,
  security: 'bearer',
  scopes: ['pricing:write'],
  headers: IdempotencyHeaders,
  body: PutPricesBody,
  responses: { 200: { description: 'The prices as they are now.', schema: listEnvelopeWithoutPage(PriceSchema) } },
  errors: ['BAD_REQUEST', 'FORBIDDEN', 'UNPROCESSABLE_ENTITY', 'WRITE_INTERRUPTED'],
  async handler({ body, headers, principal, services }) {
    const idempotency = idempotencyOf(headers, `PUT ${pricesPath}`, body);
    const prices = await underField('body.data', () => services.pricing.setPrices(principal, body.data, idempotency));
    return { status: 200, body: { data: prices, page: null, meta: null } };
  },
});

export const removePrices = defineOperation({
  operationId: 'removePrices',
  method: 'post',
  path: `${pricesPath}/remove`,
  summary: 'Remove prices in bulk',
  description:
    'Removes the prices named by product, currency and channel (left out: the product’s own price), all or none: ' +
    `one that does not exist is a 404 and nothing is removed. ${limitNote}`,
  tag,
  security: 'bearer',
  scopes: ['pricing:write'],
  body: RemovePricesBody,
  responses: { 204: { description: 'Removed.' } },
  errors: ['BAD_REQUEST', 'FORBIDDEN', 'NOT_FOUND', 'WRITE_INTERRUPTED'],
  async handler({ body, principal, services }) {
    await underField('body.data', () => services.pricing.removePrices(principal, body.data));
    return { status: 204 };
  },
});

export const listPrices = defineOperation({
  operationId: 'listPrices',
  method: 'get',
  path: pricesPath,
  summary: 'List prices',
  description:
    "The tenant's prices in the order they were first set, with cursor pagination; narrowed to one product, " +
    'channel or currency with the filters.',
  tag,
  security: 'bearer',
  scopes: ['catalog:read'],
  query: z
    .object({
      ...pageQuery,
      'filter[product_id][eq]': Uuid('Only the prices of this product.').optional(),
      'filter[channel_id][eq]': Uuid("Only this sales channel's overrides.").optional(),
      'filter[currency][eq]': Currency.optional(),
    })
    .strict(),
  responses: { 200: { description: 'A page of prices.', schema: listEnvelope(PriceSchema) } },
  errors: ['BAD_REQUEST', 'FORBIDDEN'],
  async handler({ query, principal, services, request }) {
    const page = await services.pricing.listPrices(
      principal,
      {
        productId: query['filter[product_id][eq]']?.toLowerCase(),
        channelId: query['filter[channel_id][eq]']?.toLowerCase(),
        currency: query['filter[currency][eq]'],
      },
      pageArguments(query),
    );
    return {
      status: 200,
      body: list(page.items.map(priceView), pageBlock(services.baseUrl, request.url, page)),
    };
  },
});

const ZoneParams = z.object({ id: z.string().min(1).max(64).openapi({ description: 'Id of the tax zone.' }) });

export const listTaxZones = defineOperation({
  operationId: 'listTaxZones',
  method: 'get',
  path: zonesPath,
  summary: 'List tax zones',
  description: "The tenant's tax zones in creation order, each with its rates, with cursor pagination.",
  tag,
  security: 'bearer',
  scopes: ['catalog:read'],
  query: z.object(pageQuery).strict(),
  responses: { 200: { description: 'A page of tax zones.', schema: listEnvelope(TaxZoneSchema) } },
  errors: ['BAD_REQUEST', 'FORBIDDEN'],
  async handler({ query, principal, services, request }) {
    const page = await services.pricing.listTaxZones(principal, pageArguments(query));
    return { status: 200, body: list(page.items.map(taxZoneView), pageBlock(services.baseUrl, request.url, page)) };
  },
});

export const createTaxZone = defineOperation({
  operationId: 'createTaxZone',
  method: 'post',
  path: zonesPath,
  summary: 'Create a tax zone',
  description:
    'A zone is a country, or one region of it, with at most one rate per tax class (`standard`, `reduced`, ' +
    '`zero`); a class without a rate is taxed at zero. A destination takes the zone of its country and region, ' +
    'else the zone of its whole country. One zone per country and region: another is a 409.',
  tag,
  security: 'bearer',
  scopes: ['pricing:write'],
  headers: IdempotencyHeaders,
  body: TaxZoneBody,
  responses: { 201: { description: 'The zone created.', schema: singleEnvelope(TaxZoneSchema) } },
  errors: ['BAD_REQUEST', 'FORBIDDEN', 'ID_TAKEN', 'UNPROCESSABLE_ENTITY', 'WRITE_INTERRUPTED'],
  async handler({ body, headers, principal, services }) {
    const idempotency = idempotencyOf(headers, `POST ${zonesPath}`, body);
    const zone = await underField('body.data', () => services.pricing.createTaxZone(principal, body.data, idempotency));
    return { status: 201, body: single(taxZoneView(zone)) };
  },
});

export const getTaxZone = defineOperation({
  operationId: 'getTaxZone',
  method: 'get',
  path: `${zonesPath}/{id}`,
  summary: 'Get a tax zone',
  tag,
  security: 'bearer',
  scopes: ['catalog:read'],
  params: ZoneParams,
  responses: { 200: { description: 'The zone.', schema: singleEnvelope(TaxZoneSchema) } },
  errors: ['FORBIDDEN', 'NOT_FOUND'],
  async handler({ params, principal, services }) {
    return { status: 200, body: single(taxZoneView(await services.pricing.getTaxZone(principal, params.id))) };
  },
});

export const replaceTaxZone = defineOperation({
  operationId: 'replaceTaxZone',
  method: 'put',
  path: `${zonesPath}/{id}`,
  summary: 'Replace a tax zone',
  description: 'Replaces the name, country, region and every rate of the zone (a rate left out is removed).',
  tag,
  security: 'bearer',
  scopes: ['pricing:write'],
  params: ZoneParams,
  headers: IdempotencyHeaders,
  body: TaxZoneBody,
  responses: { 200: { description: 'The zone as it is now.', schema: singleEnvelope(TaxZoneSchema) } },
  errors: ['BAD_REQUEST', 'FORBIDDEN', 'NOT_FOUND', 'ID_TAKEN', 'UNPROCESSABLE_ENTITY', 'WRITE_INTERRUPTED'],
  async handler({ params, body, headers, principal, services }) {
    const idempotency = idempotencyOf(headers, `PUT ${zonesPath}/${params.id}`, body);
    const zone = await underField('body.data', () =>
      services.pricing.replaceTaxZone(principal, params.id, body.data, idempotency),
    );
    return { status: 200, body: single(taxZoneView(zone)) };
  },
});

export const deleteTaxZone = defineOperation({
  operationId: 'deleteTaxZone',
  method: 'delete',
  path: `${zonesPath}/{id}`,
  summary: 'Delete a tax zone',
  description: 'Deletes the zone and its rates: destinations it taxed are then taxed by the country’s zone, or not.',
  tag,
  security: 'bearer',
  scopes: ['pricing:write'],
  params: ZoneParams,
  responses: { 204: { description: 'Deleted.' } },
  errors: ['FORBIDDEN', 'NOT_FOUND'],
  async handler({ params, principal, services }) {
    await services.pricing.deleteTaxZone(principal, params.id);
    return { status: 204 };
  },
});

/** `{data: T[], page: null, meta: null}`: the answer of a bulk write. */
function listEnvelopeWithoutPage<T extends z.ZodType>(item: T) {
  return z.object({ data: z.array(item), page: z.null(), meta: z.null() });
}

export const pricingOperations = [
  listPrices,
  setPrices,
  removePrices,
  listTaxZones,
  createTaxZone,
  getTaxZone,
  replaceTaxZone,
  deleteTaxZone,
];
