import { defineOperation } from '../context';
import { singleEnvelope, z } from '../../kernel/rest/schemas';
import { single } from '../../kernel/envelope';
import { trimmedName } from '../../kernel/validation';
import { ALL_SCOPES, SCOPES } from './scopes';

const TenantIdParams = z.object({
  tenant_id: z.uuid().openapi({ description: 'ID of the tenant.' }),
});

const Tenant = z.object({ id: z.uuid(), name: z.string() }).openapi('Tenant');

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
  body: z.object({ data: z.object({ name }).strict() }).strict(),
  responses: { 201: { description: 'The tenant.', schema: singleEnvelope(Tenant) } },
  errors: ['BAD_REQUEST'],
  async handler({ body, services }) {
    return { status: 201, body: single(await services.admin.createTenant(body.data.name)) };
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
  description: 'Requests made with the key answer 401 from then on (within 5 seconds on other service processes).',
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

export const adminOperations = [createTenant, createApiKey, revokeApiKey];
