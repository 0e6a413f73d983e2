import { list, single } from '../../kernel/envelope';
import { defineOperation } from '../context';
import { pageBlock } from '../../kernel/rest/page-links';
import { listEnvelope, pageArguments, pageQuery, singleEnvelope, z } from '../../kernel/rest/schemas';
import {
  OAuthClientChanges,
  OAuthClientCreated,
  OAuthClientInput,
  OAuthClientOutput,
  PasswordInput,
  SigningKeyRotation,
  UserInput,
  UserOutput,
} from './oauth.schemas';

const TenantIdParams = z.object({ tenant_id: z.uuid().openapi({ description: 'ID of the tenant.' }) });
const ClientParams = TenantIdParams.extend({ client_id: z.uuid().openapi({ description: 'ID of the OAuth client.' }) });
const UserParams = TenantIdParams.extend({ user_id: z.uuid().openapi({ description: 'ID of the user.' }) });

export const createOAuthClient = defineOperation({
  operationId: 'createOAuthClient',
  method: 'post',
  path: '/api/admin/tenants/{tenant_id}/oauth-clients',
  summary: 'Register an OAuth client for a tenant',
  description:
    'A confidential client gets a secret, shown only in this response and stored as a hash. A public client ' +
    '(browser or native app) gets none and must use PKCE.',
  tag: 'Admin',
  security: 'master',
  params: TenantIdParams,
  body: z.object({ data: OAuthClientInput }).strict(),
  responses: {
    201: { description: 'The client, with its secret shown once.', schema: singleEnvelope(OAuthClientCreated) },
  },
  errors: ['BAD_REQUEST', 'NOT_FOUND'],
  async handler({ params, body, services }) {
    return { status: 201, body: single(await services.oauth.admin.createClient(params.tenant_id, body.data)) };
  },
});

export const listOAuthClients = defineOperation({
  operationId: 'listOAuthClients',
  method: 'get',
  path: '/api/admin/tenants/{tenant_id}/oauth-clients',
  summary: "List a tenant's OAuth clients",
  description: 'In order of registration, with cursor pagination. Secrets are never shown.',
  tag: 'Admin',
  security: 'master',
  params: TenantIdParams,
  query: z.object(pageQuery).strict(),
  responses: { 200: { description: 'A page of clients.', schema: listEnvelope(OAuthClientOutput) } },
  errors: ['BAD_REQUEST', 'NOT_FOUND'],
  async handler({ params, query, services, request }) {
    const result = await services.oauth.admin.listClients(params.tenant_id, pageArguments(query));
    return { status: 200, body: list(result.items, pageBlock(services.baseUrl, request.url, result)) };
  },
});

export const getOAuthClient = defineOperation({
  operationId: 'getOAuthClient',
  method: 'get',
  path: '/api/admin/tenants/{tenant_id}/oauth-clients/{client_id}',
  summary: 'Get an OAuth client',
  tag: 'Admin',
  security: 'master',
  params: ClientParams,
  responses: { 200: { description: 'The client, without its secret.', schema: singleEnvelope(OAuthClientOutput) } },
  errors: ['BAD_REQUEST', 'NOT_FOUND'],
  async handler({ params, services }) {
    return { status: 200, body: single(await services.oauth.admin.getClient(params.tenant_id, params.client_id)) };
  },
});

export const updateOAuthClient = defineOperation({
  operationId: 'updateOAuthClient',
  method: 'patch',
  path: '/api/admin/tenants/{tenant_id}/oauth-clients/{client_id}',
  summary: "Change an OAuth client's name, redirect URIs or scopes",
  description:
    'Members left out keep their value; a list given replaces the old one. What the client loses stops working at ' +
    'once: grants holding a scope it no longer has are revoked with their tokens, and authorization requests and ' +
    'codes not exchanged yet that name a removed redirect URI or scope are dropped.',
  tag: 'Admin',
  security: 'master',
  params: ClientParams,
  body: z.object({ data: OAuthClientChanges }).strict(),
  responses: { 200: { description: 'The client, without its secret.', schema: singleEnvelope(OAuthClientOutput) } },
  errors: ['BAD_REQUEST', 'NOT_FOUND', 'WRITE_INTERRUPTED'],
  async handler({ params, body, services }) {
    const client = await services.oauth.admin.updateClient(params.tenant_id, params.client_id, body.data);
    return { status: 200, body: single(client) };
  },
});

export const rotateOAuthClientSecret = defineOperation({
  operationId: 'rotateOAuthClientSecret',
  method: 'post',
  path: '/api/admin/tenants/{tenant_id}/oauth-clients/{client_id}/secret',
  summary: "Replace a confidential client's secret",
  description:
    'The new secret is shown only in this response. The old one stops working at once, and so do the access ' +
    'tokens the client obtained for itself with `client_credentials`; the grants of its users stay (refreshing ' +
    'them needs the new secret). A public client has no secret: 409.',
  tag: 'Admin',
  security: 'master',
  params: ClientParams,
  responses: {
    201: { description: 'The client, with its new secret shown once.', schema: singleEnvelope(OAuthClientCreated) },
  },
  errors: ['BAD_REQUEST', 'NOT_FOUND', 'INVALID_STATE', 'WRITE_INTERRUPTED'],
  async handler({ params, services }) {
    const client = await services.oauth.admin.rotateClientSecret(params.tenant_id, params.client_id);
    return { status: 201, body: single(client) };
  },
});

export const deleteOAuthClient = defineOperation({
  operationId: 'deleteOAuthClient',
  method: 'delete',
  path: '/api/admin/tenants/{tenant_id}/oauth-clients/{client_id}',
  summary: 'Delete an OAuth client',
  description:
    'Every token issued to the client answers 401 from then on (within a second on other service processes); its ' +
    'grants, refresh tokens, codes, pending authorization requests and user consents are deleted with it.',
  tag: 'Admin',
  security: 'master',
  params: ClientParams,
  responses: { 204: { description: 'Deleted.' } },
  errors: ['BAD_REQUEST', 'NOT_FOUND', 'WRITE_INTERRUPTED'],
  async handler({ params, services }) {
    await services.oauth.admin.deleteClient(params.tenant_id, params.client_id);
    return { status: 204 };
  },
});

export const createUser = defineOperation({
  operationId: 'createUser',
  method: 'post',
  path: '/api/admin/tenants/{tenant_id}/users',
  summary: 'Create a user of a tenant',
  description: 'A person who signs in on the OAuth login page. The password is stored only as a salted scrypt hash.',
  tag: 'Admin',
  security: 'master',
  params: TenantIdParams,
  body: z.object({ data: UserInput }).strict(),
  responses: { 201: { description: 'The user.', schema: singleEnvelope(UserOutput) } },
  errors: ['BAD_REQUEST', 'NOT_FOUND', 'ID_TAKEN'],
  async handler({ params, body, services }) {
    return { status: 201, body: single(await services.oauth.admin.createUser(params.tenant_id, body.data)) };
  },
});

export const listUsers = defineOperation({
  operationId: 'listUsers',
  method: 'get',
  path: '/api/admin/tenants/{tenant_id}/users',
  summary: "List a tenant's users",
  description: 'In order of creation, with cursor pagination; `filter[email][eq]` finds one user by e-mail.',
  tag: 'Admin',
  security: 'master',
  params: TenantIdParams,
  query: z
    .object({
      ...pageQuery,
      'filter[email][eq]': z
        .string()
        .min(1)
        .max(320)
        .optional()
        .openapi({ description: 'Only the user with this e-mail address (compared without regard to case).' }),
    })
    .strict(),
  responses: { 200: { description: 'A page of users.', schema: listEnvelope(UserOutput) } },
  errors: ['BAD_REQUEST', 'NOT_FOUND'],
  async handler({ params, query, services, request }) {
    const result = await services.oauth.admin.listUsers(params.tenant_id, pageArguments(query), {
      email: query['filter[email][eq]'],
    });
    return { status: 200, body: list(result.items, pageBlock(services.baseUrl, request.url, result)) };
  },
});

export const getUser = defineOperation({
  operationId: 'getUser',
  method: 'get',
  path: '/api/admin/tenants/{tenant_id}/users/{user_id}',
  summary: 'Get a user',
  tag: 'Admin',
  security: 'master',
  params: UserParams,
  responses: { 200: { description: 'The user.', schema: singleEnvelope(UserOutput) } },
  errors: ['BAD_REQUEST', 'NOT_FOUND'],
  async handler({ params, services }) {
    return { status: 200, body: single(await services.oauth.admin.getUser(params.tenant_id, params.user_id)) };
  },
});

export const changeUserPassword = defineOperation({
  operationId: 'changeUserPassword',
  method: 'put',
  path: '/api/admin/tenants/{tenant_id}/users/{user_id}/password',
  summary: "Set a user's password",
  description:
    'Stored only as a salted scrypt hash, like at creation. Every grant the user holds is revoked: their access ' +
    'and refresh tokens stop working at once, and codes not exchanged yet are dropped. A sign-in on the login ' +
    'page (its cookie, at most 12 hours) is not ended.',
  tag: 'Admin',
  security: 'master',
  params: UserParams,
  body: z.object({ data: PasswordInput }).strict(),
  responses: { 204: { description: 'Changed.' } },
  errors: ['BAD_REQUEST', 'NOT_FOUND', 'WRITE_INTERRUPTED'],
  async handler({ params, body, services }) {
    await services.oauth.admin.changePassword(params.tenant_id, params.user_id, body.data.password);
    return { status: 204 };
  },
});

export const deleteUser = defineOperation({
  operationId: 'deleteUser',
  method: 'delete',
  path: '/api/admin/tenants/{tenant_id}/users/{user_id}',
  summary: 'Delete a user',
  description:
    "The user's access and refresh tokens answer 401 from then on (within a second on other service processes); " +
    'their grants, codes and consents are deleted with them.',
  tag: 'Admin',
  security: 'master',
  params: UserParams,
  responses: { 204: { description: 'Deleted.' } },
  errors: ['BAD_REQUEST', 'NOT_FOUND', 'WRITE_INTERRUPTED'],
  async handler({ params, services }) {
    await services.oauth.admin.deleteUser(params.tenant_id, params.user_id);
    return { status: 204 };
  },
});

export const rotateSigningKey = defineOperation({
  operationId: 'rotateSigningKey',
  method: 'post',
  path: '/api/admin/oauth/signing-keys',
  summary: 'Rotate the token signing key',
  description:
    'Publishes a new key for access and ID tokens in `/.well-known/jwks.json` at once; every process signs with ' +
    'it from `signs_from` on (`OAUTH_JWKS_MAX_AGE_SECONDS` later, when the JWKS verifiers cached before the ' +
    'rotation have expired). The keys it supersedes sign until then, stay in the JWKS and keep verifying until ' +
    'every token they signed has expired, then are deleted.',
  tag: 'Admin',
  security: 'master',
  responses: {
    201: { description: 'The new key and the keys it supersedes.', schema: singleEnvelope(SigningKeyRotation) },
  },
  errors: [],
  async handler({ services }) {
    const { kid, signsFrom, retiring } = await services.oauth.keys.rotate();
    return {
      status: 201,
      body: single({
        kid,
        signs_from: signsFrom.toISOString(),
        retiring: retiring.map((key) => ({ kid: key.kid, retire_at: key.retireAt.toISOString() })),
      }),
    };
  },
});

export const oauthAdminOperations = [
  createOAuthClient,
  listOAuthClients,
  getOAuthClient,
  updateOAuthClient,
  rotateOAuthClientSecret,
  deleteOAuthClient,
  createUser,
  listUsers,
  getUser,
  changeUserPassword,
  deleteUser,
  rotateSigningKey,
];
