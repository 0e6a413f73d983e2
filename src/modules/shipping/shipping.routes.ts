/** REST writes of the back office: shipping methods of sales channels (and their list). */
import { list, single } from '../../kernel/envelope';
import { IdempotencyHeaders, idempotencyOf } from '../../kernel/rest/idempotency-header';
import { pageBlock } from '../../kernel/rest/page-links';
import { listEnvelope, pageArguments, pageQuery, singleEnvelope, z } from '../../kernel/rest/schemas';
import { underField } from '../../kernel/validation';
import { defineOperation } from '../context';
import { fromRest, ShippingMethodBody, ShippingMethodSchema } from './shipping.schemas';
import { shippingMethodView } from './shipping.service';

const tag = 'Shipping';
const methodsPath = '/api/shipping-methods';

const MethodParams = z.object({ id: z.string().min(1).max(64).openapi({ description: 'Id of the shipping method.' }) });

const rules =
  'A SHIPPING method serves the destinations in its `countries`; a PICKUP method is collected at its ' +
  '`pickupWarehouseIds`, warehouses of the channel. A FLAT rate charges `flatAmount`; a WEIGHT rate charges the ' +
  "first of its `weightBrackets` the parcel's weight fits. With `freeAbove`, a subtotal at or above it ships " +
  "free. Amounts are minor units of the channel's currency.";

export const listShippingMethods = defineOperation({
  operationId: 'listShippingMethods',
  method: 'get',
  path: methodsPath,
  summary: 'List shipping methods',
  description: "The tenant's shipping methods in creation order, with cursor pagination; narrowed to one channel.",
  tag,
  security: 'bearer',
  scopes: ['catalog:read'],
  query: z
    .object({
      ...pageQuery,
      'filter[channel_id][eq]': z
        .string()
        .regex(/^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/, 'is not a valid id')
        .optional()
        .openapi({ description: "Only this sales channel's methods." }),
    })
    .strict(),
  responses: { 200: { description: 'A page of shipping methods.', schema: listEnvelope(ShippingMethodSchema) } },
  errors: ['BAD_REQUEST', 'FORBIDDEN'],
  async handler({ query, principal, services, request }) {
    const page = await services.shipping.listMethods(
      principal,
      { channelId: query['filter[channel_id][eq]']?.toLowerCase() },
      pageArguments(query),
    );
    return {
      status: 200,
      body: list(page.items.map(shippingMethodView), pageBlock(services.baseUrl, request.url, page)),
    };
  },
});

export const createShippingMethod = defineOperation({
  operationId: 'createShippingMethod',
  method: 'post',
  path: methodsPath,
  summary: 'Create a shipping method',
  description: `Creates a shipping method of a sales channel. ${rules}`,
  tag,
  security: 'bearer',
  scopes: ['pricing:write'],
  headers: IdempotencyHeaders,
  body: ShippingMethodBody,
  responses: { 201: { description: 'The method created.', schema: singleEnvelope(ShippingMethodSchema) } },
  errors: ['BAD_REQUEST', 'FORBIDDEN', 'UNPROCESSABLE_ENTITY', 'WRITE_INTERRUPTED'],
  async handler({ body, headers, principal, services }) {
    const idempotency = idempotencyOf(headers, `POST ${methodsPath}`, body);
    const method = await underField('body.data', () =>
      services.shipping.createMethod(principal, fromRest(body.data), idempotency),
    );
    return { status: 201, body: single(shippingMethodView(method)) };
  },
});

export const getShippingMethod = defineOperation({
  operationId: 'getShippingMethod',
  method: 'get',
  path: `${methodsPath}/{id}`,
  summary: 'Get a shipping method',
  tag,
  security: 'bearer',
  scopes: ['catalog:read'],
  params: MethodParams,
  responses: { 200: { description: 'The method.', schema: singleEnvelope(ShippingMethodSchema) } },
  errors: ['FORBIDDEN', 'NOT_FOUND'],
  async handler({ params, principal, services }) {
    return { status: 200, body: single(shippingMethodView(await services.shipping.getMethod(principal, params.id))) };
  },
});

export const replaceShippingMethod = defineOperation({
  operationId: 'replaceShippingMethod',
  method: 'put',
  path: `${methodsPath}/{id}`,
  summary: 'Replace a shipping method',
  description: `Replaces every field of the method (a field left out takes its default). ${rules}`,
  tag,
  security: 'bearer',
  scopes: ['pricing:write'],
  params: MethodParams,
  headers: IdempotencyHeaders,
  body: ShippingMethodBody,
  responses: { 200: { description: 'The method as it is now.', schema: singleEnvelope(ShippingMethodSchema) } },
  errors: ['BAD_REQUEST', 'FORBIDDEN', 'NOT_FOUND', 'UNPROCESSABLE_ENTITY', 'WRITE_INTERRUPTED'],
  async handler({ params, body, headers, principal, services }) {
    const idempotency = idempotencyOf(headers, `PUT ${methodsPath}/${params.id}`, body);
    const method = await underField('body.data', () =>
      services.shipping.replaceMethod(principal, params.id, fromRest(body.data), idempotency),
    );
    return { status: 200, body: single(shippingMethodView(method)) };
  },
});

export const deleteShippingMethod = defineOperation({
  operationId: 'deleteShippingMethod',
  method: 'delete',
  path: `${methodsPath}/{id}`,
  summary: 'Delete a shipping method',
  description: 'Deletes the method: checkouts are no longer offered it.',
  tag,
  security: 'bearer',
  scopes: ['pricing:write'],
  params: MethodParams,
  responses: { 204: { description: 'Deleted.' } },
  errors: ['FORBIDDEN', 'NOT_FOUND'],
  async handler({ params, principal, services }) {
    await services.shipping.deleteMethod(principal, params.id);
    return { status: 204 };
  },
});

export const shippingOperations = [
  listShippingMethods,
  createShippingMethod,
  getShippingMethod,
  replaceShippingMethod,
  deleteShippingMethod,
];
