import { defineOperation } from '../context';
import { listEnvelope, pageArguments, pageQuery, singleEnvelope, z } from '../../kernel/rest/schemas';
import { list, single } from '../../kernel/envelope';
import { pageBlock } from '../../kernel/rest/page-links';
import { trimmedName } from '../../kernel/validation';
import { ALL_SCOPES, SCOPES } from '../../kernel/scopes';

const TenantIdParams = z.object({
  tenant_id: z.uuid().openapi({ description: 'ID of the tenant.' }),
});

const ApiKeyParams = TenantIdParams.extend({ key_id: z.uuid().openapi({ description: 'ID of the API key.' }) });

const RateLimit = z.number().int().min(1).max(1_000_000).nullable().openapi({
  description: 'Requests per minute each API key or OAuth client of the tenant may make; null: RATE_LIMIT_PER_MINUTE.',
});

const Tenant = z
  .object({
    id: z.uuid(),
    name: z.string(),
    rate_limit_per_minute: z.number().int().nullable(),
    created_at: z.iso.datetime(),
  })
  .openapi('Tenant');

const ScopeName = z.enum([...SCOPES, ALL_SCOPES]).openapi('Scope', {
  description: 'A permission of a credential; `*` grants every scope.',
});

const ApiKeyCreated = z
  .object({
    id: z.uuid(),
    name: z.string(),
    key: z.string().openapi({ description: 'The API key. Shown only in this response; store it now.' }),
    scopes: z.array(ScopeName),
  })
  .openapi('ApiKeyCreated');

const ApiKey = z
  .object({
    id: z.uuid(),
    name: z.string(),
    scopes: z.array(ScopeName),
    created_at: z.iso.datetime(),
    revoked_at: z.iso.datetime().nullable().openapi({ description: 'When the key was revoked; null while it works.' }),
  })
  .openapi('ApiKey', { description: 'An API key without its secret, which is never shown again after its creation.' });

const name = trimmedName(200);
const tag = 'Admin';

export const createTenant = defineOperation({
  operationId: 'createTenant',
  method: 'post',
  path: '/api/admin/tenants',
  summary: 'Create a tenant',
  tag,
  security: 'master',
  body: z.object({ data: z.object({ name, rate_limit_per_minute: RateLimit.optional() }).strict() }).strict(),
  responses: { 201: { description: 'The tenant.', schema: singleEnvelope(Tenant) } },
  errors: ['BAD_REQUEST'],
  async handler({ body, services }) {
    const { name, rate_limit_per_minute: limit } = body.data;
    return { status: 201, body: single(await services.admin.createTenant(name, limit ?? null)) };
  },
});

export const listTenants = defineOperation({
  operationId: 'listTenants',
  method: 'get',
  path: '/api/admin/tenants',
  summary: 'List tenants',
  description: 'Every tenant in order of creation, with cursor pagination.',
  tag,
  security: 'master',
  query: z.object(pageQuery).strict(),
  responses: { 200: { description: 'A page of tenants.', schema: listEnvelope(Tenant) } },
  errors: ['BAD_REQUEST'],
  async handler({ query, services, request }) {
    const result = await services.admin.listTenants(pageArguments(query));
    return { status: 200, body: list(result.items, pageBlock(services.baseUrl, request.url, result)) };
  },
});

export const getTenant = defineOperation({
  operationId: 'getTenant',
  method: 'get',
  path: '/api/admin/tenants/{tenant_id}',
  summary: 'Get a tenant',
  tag,
  security: 'master',
  params: TenantIdParams,
  responses: { 200: { description: 'The tenant.', schema: singleEnvelope(Tenant) } },
  errors: ['BAD_REQUEST', 'NOT_FOUND'],
  async handler({ params, services }) {
    return { status: 200, body: single(await services.admin.getTenant(params.tenant_id)) };
  },
});

export const updateTenant = defineOperation({
  operationId: 'updateTenant',
  method: 'patch',
  path: '/api/admin/tenants/{tenant_id}',
  summary: "Change a tenant's name or rate limit",
  description:
    'Members left out keep their value. A new rate limit applies at once in this process, within 5 seconds ' +
    'in the others.',
  tag,
  security: 'master',
  params: TenantIdParams,
  body: z
    .object({ data: z.object({ name: name.optional(), rate_limit_per_minute: RateLimit.optional() }).strict() })
    .strict(),
  responses: { 200: { description: 'The tenant.', schema: singleEnvelope(Tenant) } },
  errors: ['BAD_REQUEST', 'NOT_FOUND'],
  async handler({ params, body, services }) {
    const { name, rate_limit_per_minute: rateLimitPerMinute } = body.data;
    return {
      status: 200,
      body: single(await services.admin.updateTenant(params.tenant_id, { name, rateLimitPerMinute })),
    };
  },
});

export const deleteTenant = defineOperation({
  operationId: 'deleteTenant',
  method: 'delete',
  path: '/api/admin/tenants/{tenant_id}',
  summary: 'Delete a tenant with all its data',
  description:
    'Deletes the tenant and everything it owns, in one transaction: API keys, OAuth clients and users with ' +
    'their tokens, proxies, search indexes with their documents and analytics, the catalog, stock and its ledger, ' +
    'orders, reservations, supplies, transfers and webhooks. Cannot be undone. Its credentials answer 401 from ' +
    'then on, and its proxies 404 (within a second on other service processes).',
  tag,
  security: 'master',
  params: TenantIdParams,
  responses: { 204: { description: 'Deleted.' } },
  errors: ['BAD_REQUEST', 'NOT_FOUND', 'WRITE_INTERRUPTED'],
  async handler({ params, services }) {
    await services.admin.deleteTenant(params.tenant_id);
    return { status: 204 };
  },
});

export const createApiKey = defineOperation({
  operationId: 'createApiKey',
  method: 'post',
  path: '/api/admin/tenants/{tenant_id}/api-keys',
  summary: 'Issue an API key for a tenant',
  tag,
  security: 'master',
  params: TenantIdParams,
  body: z
    .object({
      data: z
        .object({
          name,
          scopes: z
            .array(ScopeName)
            .min(1)
            .max(SCOPES.length + 1),
        })
        .strict(),
    })
    .strict(),
  responses: { 201: { description: 'The key, with its secret shown once.', schema: singleEnvelope(ApiKeyCreated) } },
  errors: ['BAD_REQUEST', 'NOT_FOUND'],
  async handler({ params, body, services }) {
    return { status: 201, body: single(await services.admin.createApiKey(params.tenant_id, body.data)) };
  },
});

export const listApiKeys = defineOperation({
  operationId: 'listApiKeys',
  method: 'get',
  path: '/api/admin/tenants/{tenant_id}/api-keys',
  summary: "List a tenant's API keys",
  description: 'Revoked keys included, in order of creation, with cursor pagination. Secrets are never shown.',
  tag,
  security: 'master',
  params: TenantIdParams,
  query: z.object(pageQuery).strict(),
  responses: { 200: { description: 'A page of API keys.', schema: listEnvelope(ApiKey) } },
  errors: ['BAD_REQUEST', 'NOT_FOUND'],
  async handler({ params, query, services, request }) {
    const result = await services.admin.listApiKeys(params.tenant_id, pageArguments(query));
    return { status: 200, body: list(result.items, pageBlock(services.baseUrl, request.url, result)) };
  },
});

export const getApiKey = defineOperation({
  operationId: 'getApiKey',
  method: 'get',
  path: '/api/admin/tenants/{tenant_id}/api-keys/{key_id}',
  summary: 'Get an API key',
  description: 'Its name, scopes and state; never its secret.',
  tag,
  security: 'master',
  params: ApiKeyParams,
  responses: { 200: { description: 'The API key.', schema: singleEnvelope(ApiKey) } },
  errors: ['BAD_REQUEST', 'NOT_FOUND'],
  async handler({ params, services }) {
    return { status: 200, body: single(await services.admin.getApiKey(params.tenant_id, params.key_id)) };
  },
});

export const updateApiKey = defineOperation({
  operationId: 'updateApiKey',
  method: 'patch',
  path: '/api/admin/tenants/{tenant_id}/api-keys/{key_id}',
  summary: 'Rename an API key',
  description: 'The key itself, its scopes and its state stay as they are.',
  tag,
  security: 'master',
  params: ApiKeyParams,
  body: z.object({ data: z.object({ name }).strict() }).strict(),
  responses: { 200: { description: 'The API key.', schema: singleEnvelope(ApiKey) } },
  errors: ['BAD_REQUEST', 'NOT_FOUND'],
  async handler({ params, body, services }) {
    const key = await services.admin.renameApiKey(params.tenant_id, params.key_id, body.data.name);
    return { status: 200, body: single(key) };
  },
});

export const revokeApiKey = defineOperation({
  operationId: 'revokeApiKey',
  method: 'delete',
  path: '/api/admin/tenants/{tenant_id}/api-keys/{key_id}',
  summary: 'Revoke an API key',
  description:
    'Requests made with the key answer 401 from then on (within a second on other service processes). The key ' +
    'stays listed, with its `revoked_at`, as the actor of what it wrote.',
  tag,
  security: 'master',
  params: ApiKeyParams,
  responses: { 204: { description: 'Revoked.' } },
  errors: ['BAD_REQUEST', 'NOT_FOUND'],
  async handler({ params, services }) {
    await services.admin.revokeApiKey(params.tenant_id, params.key_id);
    return { status: 204 };
  },
});

export const adminOperations = [
  createTenant,
  listTenants,
  getTenant,
  updateTenant,
  deleteTenant,
  createApiKey,
  listApiKeys,
  getApiKey,
  updateApiKey,
  revokeApiKey,
];
