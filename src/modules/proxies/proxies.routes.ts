import { list, single } from '../../kernel/envelope';
import { defineOperation } from '../context';
import { underField } from '../../kernel/validation';
import { pageBlock } from '../../kernel/rest/page-links';
import { listEnvelope, pageQuery, singleEnvelope, z } from '../../kernel/rest/schemas';
import { ProxyCreateInput, ProxyKey, ProxyOutput, ProxyReplaceInput } from './proxies.schemas';

const KeyParams = z.object({ key: ProxyKey });
const tag = 'Edge proxies';

export const listProxies = defineOperation({
  operationId: 'listProxies',
  method: 'get',
  path: '/api/storage/edge/proxies',
  summary: 'List proxies',
  description: "The tenant's proxies ordered by key, with cursor pagination.",
  tag,
  security: 'bearer',
  scopes: ['proxies:read'],
  query: z.object(pageQuery).strict(),
  responses: { 200: { description: 'A page of proxies.', schema: listEnvelope(ProxyOutput) } },
  errors: ['BAD_REQUEST', 'FORBIDDEN'],
  async handler({ query, principal, services, request }) {
    const page = await services.proxies.list(principal, {
      size: query['page[size]'],
      after: query['page[after]'],
      before: query['page[before]'],
    });
    return { status: 200, body: list(page.items, pageBlock(services.baseUrl, request.url, page)) };
  },
});

export const createProxy = defineOperation({
  operationId: 'createProxy',
  method: 'post',
  path: '/api/storage/edge/proxies',
  summary: 'Create a proxy',
  tag,
  security: 'bearer',
  scopes: ['proxies:write'],
  body: z.object({ data: ProxyCreateInput }).strict(),
  responses: { 201: { description: 'The created proxy.', schema: singleEnvelope(ProxyOutput) } },
  errors: ['BAD_REQUEST', 'FORBIDDEN', 'ID_TAKEN'],
  async handler({ body, principal, services }) {
    return { status: 201, body: single(await services.proxies.create(principal, body.data)) };
  },
});

export const getProxy = defineOperation({
  operationId: 'getProxy',
  method: 'get',
  path: '/api/storage/edge/proxies/{key}',
  summary: 'Get a proxy',
  tag,
  security: 'bearer',
  scopes: ['proxies:read'],
  params: KeyParams,
  responses: { 200: { description: 'The proxy.', schema: singleEnvelope(ProxyOutput) } },
  errors: ['BAD_REQUEST', 'FORBIDDEN', 'NOT_FOUND'],
  async handler({ params, principal, services }) {
    return { status: 200, body: single(await services.proxies.get(principal, params.key)) };
  },
});

export const updateProxy = defineOperation({
  operationId: 'updateProxy',
  method: 'put',
  path: '/api/storage/edge/proxies/{key}',
  summary: 'Replace a proxy',
  description:
    'Replaces the whole proxy: fields left out return to their defaults (null, `is_active` true, `is_suspended` ' +
    'false). The key cannot change.',
  tag,
  security: 'bearer',
  scopes: ['proxies:write'],
  params: KeyParams,
  body: z.object({ data: ProxyReplaceInput }).strict(),
  responses: { 204: { description: 'Replaced.' } },
  errors: ['BAD_REQUEST', 'FORBIDDEN', 'NOT_FOUND'],
  async handler({ params, body, principal, services }) {
    await underField('body.data', () => services.proxies.replace(principal, params.key, body.data));
    return { status: 204 };
  },
});

export const deleteProxy = defineOperation({
  operationId: 'deleteProxy',
  method: 'delete',
  path: '/api/storage/edge/proxies/{key}',
  summary: 'Delete a proxy',
  tag,
  security: 'bearer',
  scopes: ['proxies:write'],
  // Any key is accepted here: one that could never exist is simply not found.
  params: z.object({ key: z.string().openapi({ description: 'Key of the proxy.' }) }),
  responses: { 204: { description: 'Deleted.' } },
  errors: ['FORBIDDEN', 'NOT_FOUND'],
  async handler({ params, principal, services }) {
    await services.proxies.remove(principal, params.key);
    return { status: 204 };
  },
});

export const proxyOperations = [listProxies, createProxy, getProxy, updateProxy, deleteProxy];
