/** REST writes and reads of the back office: discount codes and automatic promotions. */
import { list, single } from '../../kernel/envelope';
import { IdempotencyHeaders, idempotencyOf } from '../../kernel/rest/idempotency-header';
import { pageBlock } from '../../kernel/rest/page-links';
import { listEnvelope, pageArguments, pageQuery, singleEnvelope, z } from '../../kernel/rest/schemas';
import { underField } from '../../kernel/validation';
import { defineOperation } from '../context';
import { DiscountBody, DiscountCode, DiscountSchema } from './discounts.schemas';
import { discountView } from './discounts.service';

const tag = 'Discounts';
const path = '/api/discounts';

const Params = z.object({ id: z.string().min(1).max(64).openapi({ description: 'Id of the discount.' }) });

const rules =
  'A discount with a `code` applies when the buyer types it (in any case); one without is an automatic promotion. ' +
  'PERCENT takes `percentBasisPoints` (half-even, once per discount), FIXED its `amount` in `currency`; never more ' +
  'than what it applies to. `target` ITEMS names products and/or categories. Checked first: the channel and every ' +
  'product must be the tenant’s (each problem under `body.data`).';

export const listDiscounts = defineOperation({
  operationId: 'listDiscounts',
  method: 'get',
  path,
  summary: 'List discounts',
  description:
    "The tenant's discounts in creation order, with cursor pagination; `filter[code][eq]` finds one code in any " +
    'case. Scope `orders:read`: codes are for the back office, not for the storefront keys that read the catalog.',
  tag,
  security: 'bearer',
  scopes: ['orders:read'],
  query: z.object({ ...pageQuery, 'filter[code][eq]': DiscountCode.optional() }).strict(),
  responses: { 200: { description: 'A page of discounts.', schema: listEnvelope(DiscountSchema) } },
  errors: ['BAD_REQUEST', 'FORBIDDEN'],
  async handler({ query, principal, services, request }) {
    const page = await services.discounts.listDiscounts(
      principal,
      { code: query['filter[code][eq]'] },
      pageArguments(query),
    );
    return { status: 200, body: list(page.items.map(discountView), pageBlock(services.baseUrl, request.url, page)) };
  },
});

export const createDiscount = defineOperation({
  operationId: 'createDiscount',
  method: 'post',
  path,
  summary: 'Create a discount',
  description: `${rules} A code the tenant has already, in any case, is a 409.`,
  tag,
  security: 'bearer',
  scopes: ['pricing:write'],
  headers: IdempotencyHeaders,
  body: DiscountBody,
  responses: { 201: { description: 'The discount created.', schema: singleEnvelope(DiscountSchema) } },
  errors: ['BAD_REQUEST', 'FORBIDDEN', 'ID_TAKEN', 'UNPROCESSABLE_ENTITY', 'WRITE_INTERRUPTED'],
  async handler({ body, headers, principal, services }) {
    const idempotency = idempotencyOf(headers, `POST ${path}`, body);
    const discount = await underField('body.data', () =>
      services.discounts.createDiscount(principal, body.data, idempotency),
    );
    return { status: 201, body: single(discount) };
  },
});

export const getDiscount = defineOperation({
  operationId: 'getDiscount',
  method: 'get',
  path: `${path}/{id}`,
  summary: 'Get a discount',
  tag,
  security: 'bearer',
  scopes: ['orders:read'],
  params: Params,
  responses: { 200: { description: 'The discount.', schema: singleEnvelope(DiscountSchema) } },
  errors: ['FORBIDDEN', 'NOT_FOUND'],
  async handler({ params, principal, services }) {
    return { status: 200, body: single(discountView(await services.discounts.getDiscount(principal, params.id))) };
  },
});

export const replaceDiscount = defineOperation({
  operationId: 'replaceDiscount',
  method: 'put',
  path: `${path}/{id}`,
  summary: 'Replace a discount',
  description: `Replaces every field of the discount (one left out takes its default); its counted uses stay. ${rules}`,
  tag,
  security: 'bearer',
  scopes: ['pricing:write'],
  params: Params,
  headers: IdempotencyHeaders,
  body: DiscountBody,
  responses: { 200: { description: 'The discount as it is now.', schema: singleEnvelope(DiscountSchema) } },
  errors: ['BAD_REQUEST', 'FORBIDDEN', 'NOT_FOUND', 'ID_TAKEN', 'UNPROCESSABLE_ENTITY', 'WRITE_INTERRUPTED'],
  async handler({ params, body, headers, principal, services }) {
    const idempotency = idempotencyOf(headers, `PUT ${path}/${params.id}`, body);
    const discount = await underField('body.data', () =>
      services.discounts.replaceDiscount(principal, params.id, body.data, idempotency),
    );
    return { status: 200, body: single(discount) };
  },
});

export const deleteDiscount = defineOperation({
  operationId: 'deleteDiscount',
  method: 'delete',
  path: `${path}/{id}`,
  summary: 'Delete a discount',
  description:
    'Deletes the discount and its counted uses. To stop a discount and keep its count, replace it with `active` false.',
  tag,
  security: 'bearer',
  scopes: ['pricing:write'],
  params: Params,
  responses: { 204: { description: 'Deleted.' } },
  errors: ['FORBIDDEN', 'NOT_FOUND'],
  async handler({ params, principal, services }) {
    await services.discounts.deleteDiscount(principal, params.id);
    return { status: 204 };
  },
});

export const discountsOperations = [listDiscounts, createDiscount, getDiscount, replaceDiscount, deleteDiscount];
