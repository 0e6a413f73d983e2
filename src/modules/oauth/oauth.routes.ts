import { single } from '../../kernel/envelope';
import { isFormRequest } from '../../kernel/rest/form-body';
import { defineOperation } from '../context';
import { singleEnvelope, z } from '../../kernel/rest/schemas';
import {
  AuthorizationSession,
  AuthorizeQuery,
  Introspection,
  TokenOperationRequest,
  TokenRequest,
  TokenResponse,
} from './oauth.schemas';

const tag = 'OAuth';

/** RFC 6749 section 5.1: token responses must not be cached. */
const noStore = { 'Cache-Control': 'no-store', Pragma: 'no-cache' };
const noStoreHeaders = {
  'Cache-Control': { description: '`no-store`: tokens are never cached.' },
  Pragma: { description: '`no-cache`.' },
};

const formNote =
  'The body is either the envelope `{"data": {...}}` as JSON, or the members of `data` as ' +
  '`application/x-www-form-urlencoded` with the RFC 6749 names (what standard OAuth client libraries send). ' +
  'The client authenticates with HTTP Basic (`client_id:client_secret`) or with `client_id`/`client_secret` in the ' +
  'body, not both; ' +
  'credentials in the query string are refused (400). Errors use the envelope; their message carries the RFC 6749 ' +
  'error code, ' +
  'e.g. `Bad request: ...; invalid_grant: the authorization code has expired`.';

export const obtainToken = defineOperation({
  operationId: 'obtainToken',
  method: 'post',
  path: '/api/oauth/authorize',
  summary: 'Obtain a token',
  description:
    `${formNote}\n\nGrants: \`client_credentials\` (confidential clients; no refresh token), ` +
    `\`authorization_code\` with PKCE ` +
    '(S256, required for public clients; a code works once, within 60 seconds, for its client and redirect URI; ' +
    'presenting it again revokes what it issued), ' +
    'and `refresh_token` (each refresh token works once; presenting a used one revokes every token of its grant).\n\n' +
    'A JSON request is answered 201 with the envelope; a form request 200 with the plain RFC 6749 token response. ' +
    'invalid_client is a 401 with `WWW-Authenticate: Basic`; after 10 failed authentications of a client within 5 ' +
    'minutes, ' +
    'requests for that client answer 429 until the 5 minutes have passed.',
  tag,
  security: 'none',
  acceptsForm: true,
  // Browser apps (public clients) call it from their own origin; no cookie is involved.
  cors: true,
  validationErrorCode: 'invalid_request',
  body: z.object({ data: TokenRequest }).strict(),
  responses: {
    200: {
      description: 'Tokens, for a form-encoded request: the RFC 6749 token response.',
      schema: TokenResponse,
      headers: noStoreHeaders,
    },
    201: { description: 'Tokens, for a JSON request.', schema: singleEnvelope(TokenResponse), headers: noStoreHeaders },
  },
  errors: ['BAD_REQUEST', 'UNAUTHORIZED', 'TOO_MANY_REQUESTS', 'WRITE_INTERRUPTED'],
  async handler({ body, request, services }) {
    const tokens = await services.oauth.tokens.token(body.data, request.headers.authorization);
    return isFormRequest(request)
      ? { status: 200, body: tokens, headers: noStore }
      : { status: 201, body: single(tokens), headers: noStore };
  },
});

export const revokeToken = defineOperation({
  operationId: 'revokeToken',
  method: 'post',
  path: '/api/oauth/revoke',
  summary: 'Revoke a token (RFC 7009)',
  description:
    `${formNote}\n\nRevokes an access or refresh token of the calling client and every token of the same grant ` +
    '(the authorization and its refresh family). Answers 200 also for a token that is unknown, expired or another ' +
    "client's, as RFC 7009 asks. " +
    'Other service processes stop accepting a revoked access token within a second.',
  tag,
  security: 'none',
  acceptsForm: true,
  // Browser apps (public clients) call it from their own origin; no cookie is involved.
  cors: true,
  validationErrorCode: 'invalid_request',
  body: z.object({ data: TokenOperationRequest }).strict(),
  responses: { 200: { description: 'Revoked (or nothing to revoke).', headers: noStoreHeaders } },
  errors: ['BAD_REQUEST', 'UNAUTHORIZED', 'TOO_MANY_REQUESTS'],
  async handler({ body, request, services }) {
    await services.oauth.tokens.revoke(body.data, request.headers.authorization);
    return { status: 200, headers: noStore };
  },
});

export const introspectToken = defineOperation({
  operationId: 'introspectToken',
  method: 'post',
  path: '/api/oauth/introspect',
  summary: 'Introspect a token (RFC 7662)',
  description:
    `${formNote}\n\nAny client of the tenant may ask. A token is \`active\` when it is a valid, unexpired, ` +
    `unrevoked access or refresh token ` +
    'of the caller\'s tenant; otherwise the answer is `{"active": false}` and nothing else. A form request gets ' +
    'the plain RFC 7662 object, a JSON request the envelope.',
  tag,
  security: 'none',
  acceptsForm: true,
  validationErrorCode: 'invalid_request',
  body: z.object({ data: TokenOperationRequest }).strict(),
  responses: {
    200: {
      description:
        'What the token grants: the RFC 7662 object (form request) or it inside the envelope (JSON request).',
      schema: z.union([Introspection, singleEnvelope(Introspection)]),
      headers: noStoreHeaders,
    },
  },
  errors: ['BAD_REQUEST', 'UNAUTHORIZED', 'TOO_MANY_REQUESTS'],
  async handler({ body, request, services }) {
    const result = await services.oauth.tokens.introspect(body.data, request.headers.authorization);
    return { status: 200, body: isFormRequest(request) ? result : single(result), headers: noStore };
  },
});

export const getAuthorization = defineOperation({
  operationId: 'getAuthorization',
  method: 'get',
  path: '/api/oauth/session/authorize',
  summary: 'Start an authorization (authorization code flow)',
  description:
    'Validates the authorization request. Any invalid parameter is a **400** and never a redirect: an unknown ' +
    '`client_id`, a `redirect_uri` that is not ' +
    'exactly one registered for the client, a `response_type` other than `code`, an unknown or excessive scope, a ' +
    'missing PKCE challenge for a public client. The one exception is RFC 8707 `resource` (repeatable): once ' +
    '`client_id` and `redirect_uri` are valid, a resource that is unknown, not absolute, has a fragment or is not ' +
    "the client's is answered with a **302** to `redirect_uri` with `error=invalid_target`, `error_description`, " +
    '`state` and `iss`, and nothing is stored.\n\n' +
    'With `silent=true` the answer is always a **302** to `redirect_uri`: with `code` (and `state`, `iss`) when ' +
    "the browser's login cookie names a user of the " +
    'tenant who has already approved these scopes for this client; with `error=login_required` when no user is ' +
    'signed in; with `error=consent_required` ' +
    'when the user has not approved them.\n\n' +
    "Otherwise the answer is **200** with a session: send the user's browser to its `forward_uri`, the login and " +
    'consent page of this service, which ' +
    'ends in a redirect to `redirect_uri` with `code` and `state` (or `error=access_denied`). Exchange the code at ' +
    '`POST /api/oauth/authorize`.',
  tag,
  security: 'none',
  validationErrorCode: 'invalid_request',
  query: AuthorizeQuery,
  responses: {
    200: {
      description: 'The user must act at `forward_uri`.',
      schema: singleEnvelope(AuthorizationSession),
      headers: noStoreHeaders,
    },
    302: {
      description:
        'silent=true: the redirect to the client with `code` or `error`; or, for any request, with ' +
        '`error=invalid_target` for a `resource` refused.',
      headers: {
        Location: { description: '`redirect_uri` with `code`, `state` and `iss`, or with `error` and `state`.' },
        ...noStoreHeaders,
      },
    },
  },
  errors: ['BAD_REQUEST'],
  async handler({ query, request, services }) {
    const outcome = await services.oauth.authorization.authorize(
      query,
      services.oauth.browser.signedInUser(request.headers.cookie),
    );
    return outcome.kind === 'redirect'
      ? { status: 302, headers: { ...noStore, Location: outcome.location } }
      : { status: 200, body: single(outcome.session), headers: noStore };
  },
});

export const oauthOperations = [obtainToken, revokeToken, introspectToken, getAuthorization];
