import { defineOperation } from '../context';
import { singleEnvelope, z } from '../../kernel/rest/schemas';
import { single } from '../../kernel/envelope';
import { trimmedName } from '../../kernel/validation';
import { ALL_SCOPES, SCOPES } from './scopes';

const TenantIdParams = z.object({
  tenant_id: z.uuid().openapi({ description: 'ID of the tenant.' }),
});

const RateLimit = z.number().int().min(1).max(1_000_000).nullable().openapi({
  description: 'Requests per minute each API key or OAuth client of the tenant may make; null: RATE_LIMIT_PER_MINUTE.',
});

const Tenant = z
  .object({ id: z.uuid(), name: z.string(), rate_limit_per_minute: z.number().int().nullable() })
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

const name = trimmedName(200);

export const createTenant = defineOperation({
  operationId: 'createTenant',
  method: 'post',
  path: '/api/admin/tenants',
  summary: 'Create a tenant',
  tag: 'Admin',
  security: 'master',
  body: z.object({ data: z.object({ name, rate_limit_per_minute: RateLimit.optional() }).strict() }).strict(),
  responses: { 201: { description: 'The tenant.', schema: singleEnvelope(Tenant) } },
  errors: ['BAD_REQUEST'],
  async handler({ body, services }) {
    const { name, rate_limit_per_minute: limit } = body.data;
    return { status: 201, body: single(await services.admin.createTenant(name, limit ?? null)) };
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
  tag: 'Admin',
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

export const createApiKey = defineOperation({
  operationId: 'createApiKey',
  method: 'post',
  path: '/api/admin/tenants/{tenant_id}/api-keys',
  summary: 'Issue an API key for a tenant',
  tag: 'Admin',
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

export const revokeApiKey = defineOperation({
  operationId: 'revokeApiKey',
  method: 'delete',
  path: '/api/admin/tenants/{tenant_id}/api-keys/{key_id}',
  summary: 'Revoke an API key',
  description: 'Requests made with the key answer 401 from then on (within a second on other service processes).',
  tag: 'Admin',
  security: 'master',
  params: TenantIdParams.extend({ key_id: z.uuid().openapi({ description: 'ID of the API key.' }) }),
  responses: { 204: { description: 'Revoked.' } },
  errors: ['BAD_REQUEST', 'NOT_FOUND'],
  async handler({ params, services }) {
    await services.admin.revokeApiKey(params.tenant_id, params.key_id);
    return { status: 204 };
  },
});

export const adminOperations = [createTenant, updateTenant, createApiKey, revokeApiKey];
