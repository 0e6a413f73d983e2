import { single } from '../../kernel/envelope';
import { defineOperation } from '../context';
import { singleEnvelope, z } from '../../kernel/rest/schemas';
import { OAuthClientCreated, OAuthClientInput, SigningKeyRotation, UserCreated, UserInput } from './oauth.schemas';

const TenantIdParams = z.object({ tenant_id: z.uuid().openapi({ description: 'ID of the tenant.' }) });

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
  responses: { 201: { description: 'The user.', schema: singleEnvelope(UserCreated) } },
  errors: ['BAD_REQUEST', 'NOT_FOUND', 'ID_TAKEN'],
  async handler({ params, body, services }) {
    return { status: 201, body: single(await services.oauth.admin.createUser(params.tenant_id, body.data)) };
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

export const oauthAdminOperations = [createOAuthClient, createUser, rotateSigningKey];
