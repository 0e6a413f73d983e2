import { single } from '../../kernel/envelope';
import { ErrorEnvelopeSchema, singleEnvelope, z } from '../../kernel/rest/schemas';
import { ALL_SCOPES, insufficientScope } from '../../kernel/scopes';
import { defineOperation } from '../context';
import type { Principal } from '../../kernel/principal';
import {
  AgentClientSettings,
  AgentClientSettingsChange,
  ClientRegistration,
  ClientRegistrationRequest,
  RegistrationError,
} from './registration.schemas';
import type { RegistrationOutcome } from './registration.service';

const tag = 'OAuth';

/** RFC 7591 section 3.2.1: registration responses (they carry a token) are never cached. */
const noStore = { 'Cache-Control': 'no-store', Pragma: 'no-cache' };
const noStoreHeaders = {
  'Cache-Control': { description: '`no-store`.' },
  Pragma: { description: '`no-cache`.' },
};

/** RFC 6750 section 3: a registration access token refused. */
const TOKEN_CHALLENGE = 'Bearer error="invalid_token"';

const RegistrationParams = z.object({
  client_id: z.string().max(64).openapi({ description: 'The `client_id` of the registration.' }),
});

/** The answer of a registration operation: its success, or the error in the RFC's own form. */
function answer<T>(outcome: RegistrationOutcome<T>, success: (value: T) => { status: number; body?: unknown }) {
  if (!outcome.ok) {
    const challenge = outcome.status === 401 ? { 'WWW-Authenticate': TOKEN_CHALLENGE } : {};
    return { status: outcome.status, body: outcome.body, headers: { ...noStore, ...challenge } };
  }
  return { ...success(outcome.value), headers: noStore };
}

const registrationRefused = {
  description: 'RFC 7592: the registration access token is missing or wrong, or the client does not exist.',
  schema: RegistrationError,
  headers: { 'WWW-Authenticate': { description: '`Bearer error="invalid_token"`.' }, ...noStoreHeaders },
};

export const registerClient = defineOperation({
  operationId: 'registerClient',
  method: 'post',
  path: '/api/oauth/register',
  summary: 'Register a client (RFC 7591)',
  description:
    'Dynamic client registration, for applications such as AI agents that meet this service for the first ' +
    'time. The body is RFC 7591 client metadata (not the envelope), and so are the answers: the registered ' +
    'client (201), or, for metadata it refuses, a 400 in the form RFC 7591 section 3.2.2 fixes, ' +
    '`{"error": "invalid_redirect_uri" | "invalid_client_metadata", "error_description": "..."}` (the ' +
    '`RegistrationError` schema) rather than the envelope. A body that is not a JSON object, nests too deep or ' +
    'is too large is refused before it is read, with the envelope.\n\n' +
    'A registered client is public (`token_endpoint_auth_method` `none`, PKCE required, no ' +
    '`client_credentials`) and belongs to no tenant: a user of any tenant may sign in and approve it, and its ' +
    "tokens belong to that user's tenant, when the tenant allows such clients (`PUT /api/oauth/agent-clients`; " +
    'off by default). The consent page shows its name and the host of its redirect URI marked unverified.\n\n' +
    'The `registration_access_token` of the answer reads and deletes the registration at ' +
    '`registration_client_uri` (RFC 7592). Each client address may register `OAUTH_REGISTRATIONS_PER_MINUTE` ' +
    'clients per minute (default 10); beyond, 429.',
  tag,
  security: 'none',
  cors: true,
  limitPerAddress: {
    name: 'client registration',
    perMinute: (services) => services.config.oauthRegistrationsPerMinute,
  },
  body: ClientRegistrationRequest,
  responses: {
    201: { description: 'The registered client.', schema: ClientRegistration, headers: noStoreHeaders },
    400: {
      description:
        'Metadata refused, in the form RFC 7591 section 3.2.2 fixes (`RegistrationError`); or a body that is not ' +
        'a JSON object, nests too deep, or breaks a rule of every request (a string holding U+0000), with the ' +
        'error envelope.',
      schema: z.union([RegistrationError, ErrorEnvelopeSchema]),
      headers: {
        'Cache-Control': { description: '`no-store`, on a refusal of the metadata.', required: false },
        Pragma: { description: '`no-cache`, on a refusal of the metadata.', required: false },
      },
    },
  },
  errors: ['BAD_REQUEST', 'PAYLOAD_TOO_LARGE', 'TOO_MANY_REQUESTS'],
  async handler({ body, services }) {
    const outcome = await services.oauth.registration.register(body);
    return answer(outcome, (client) => ({ status: 201, body: client }));
  },
});

export const getClientRegistration = defineOperation({
  operationId: 'getClientRegistration',
  method: 'get',
  path: '/api/oauth/register/{client_id}',
  summary: 'Read a client registration (RFC 7592)',
  description:
    'With `Authorization: Bearer <registration_access_token>`: the registered client, as registration answered ' +
    'it. Any other token, or an unknown client, is a 401 with `{"error": "invalid_token"}`.',
  tag,
  security: 'none',
  params: RegistrationParams,
  responses: {
    200: { description: 'The registered client.', schema: ClientRegistration, headers: noStoreHeaders },
    401: registrationRefused,
  },
  errors: ['BAD_REQUEST'],
  async handler({ params, request, services }) {
    const outcome = await services.oauth.registration.read(params.client_id, request.headers.authorization);
    return answer(outcome, (client) => ({ status: 200, body: client }));
  },
});

export const deleteClientRegistration = defineOperation({
  operationId: 'deleteClientRegistration',
  method: 'delete',
  path: '/api/oauth/register/{client_id}',
  summary: 'Delete a client registration (RFC 7592)',
  description:
    'With `Authorization: Bearer <registration_access_token>`: deletes the client; every token issued to it ' +
    'stops working, and its grants, codes and consents go with it. Any other token, or an unknown client, is a ' +
    '401 with `{"error": "invalid_token"}`.',
  tag,
  security: 'none',
  params: RegistrationParams,
  responses: { 204: { description: 'Deleted.' }, 401: registrationRefused },
  errors: ['BAD_REQUEST', 'WRITE_INTERRUPTED'],
  async handler({ params, request, services }) {
    const outcome = await services.oauth.registration.delete(params.client_id, request.headers.authorization);
    return answer(outcome, () => ({ status: 204 }));
  },
});

/** The tenant's own settings need its full access: they decide who else gets access. */
function requireFullAccess(principal: Principal) {
  if (!principal.scopes.has(ALL_SCOPES)) throw insufficientScope(ALL_SCOPES);
}

const settingsDescription =
  "Whether the tenant's users may give access to applications of no tenant, such as AI agents: those that " +
  'registered themselves (`POST /api/oauth/register`; off by default) and those identified by a Client ID ' +
  'Metadata Document (a `client_id` that is an https URL; on by default). While one is off, such an application ' +
  "cannot be approved by the tenant's users, and the consent page says so. Turning one off revokes the access " +
  'its users gave such applications. A change names the members it changes. Needs scope `*`.';

export const getAgentClientSettings = defineOperation({
  operationId: 'getAgentClientSettings',
  method: 'get',
  path: '/api/oauth/agent-clients',
  summary: 'Read which applications of no tenant may be approved',
  description: settingsDescription,
  tag,
  security: 'bearer',
  responses: { 200: { description: 'The settings.', schema: singleEnvelope(AgentClientSettings) } },
  errors: ['UNAUTHORIZED', 'FORBIDDEN'],
  async handler({ principal, services }) {
    requireFullAccess(principal);
    return { status: 200, body: single(await services.oauth.registration.agentClientSettings(principal.tenantId)) };
  },
});

export const setAgentClientSettings = defineOperation({
  operationId: 'setAgentClientSettings',
  method: 'put',
  path: '/api/oauth/agent-clients',
  summary: 'Allow or refuse applications of no tenant',
  description: settingsDescription,
  tag,
  security: 'bearer',
  body: z.object({ data: AgentClientSettingsChange }).strict(),
  responses: { 200: { description: 'The settings.', schema: singleEnvelope(AgentClientSettings) } },
  errors: ['BAD_REQUEST', 'UNAUTHORIZED', 'FORBIDDEN', 'WRITE_INTERRUPTED'],
  async handler({ body, principal, services }) {
    requireFullAccess(principal);
    const settings = await services.oauth.registration.setAgentClientSettings(principal.tenantId, body.data);
    return { status: 200, body: single(settings) };
  },
});

export const registrationOperations = [
  registerClient,
  getClientRegistration,
  deleteClientRegistration,
  getAgentClientSettings,
  setAgentClientSettings,
];
