import { z } from '../../kernel/rest/schemas';
import { CLIENT_SCOPES } from './oauth.scopes';
import { trimmedName } from '../../kernel/validation';
import { MAX_RESOURCE_LENGTH, MAX_RESOURCES } from './resources';

const text = (max: number, description: string) => z.string().max(max).optional().openapi({ description });

const resourceValue = z.string().max(MAX_RESOURCE_LENGTH);

/** RFC 8707 `resource`: one value, or several (a repeated query parameter, or a JSON array). */
const resourceParameter = (description: string) =>
  z
    .union([resourceValue, z.array(resourceValue).max(MAX_RESOURCES)])
    .optional()
    .openapi({
      description:
        `${description} The resources of this server are the API (the issuer, ` +
        'e.g. `https://api.example.com`, ' +
        'for `/api` and `/graphql`) and `/mcp` (the issuer followed by `/mcp`), as their protected resource ' +
        'metadata names them. An unknown resource, a relative one, one with a fragment, or one the client may not ' +
        `use is refused with \`invalid_target\`. At most ${MAX_RESOURCES}, ` +
        `each at most ${MAX_RESOURCE_LENGTH} characters.`,
    });

const clientAuthFields = {
  client_id: text(
    256,
    'The client id. Confidential clients may send it with `client_secret` here instead of using HTTP Basic; public ' +
      'clients always send it.',
  ),
  client_secret: text(256, 'The client secret, when not sent with HTTP Basic. Never in the query string.'),
};

/** Token request (RFC 6749 names); unrecognised members are ignored, as RFC 6749 section 3.2 asks. */
export const TokenRequest = z
  .object({
    grant_type: z
      .string()
      .max(64)
      .openapi({ description: '`client_credentials`, `authorization_code` or `refresh_token`.' }),
    ...clientAuthFields,
    scope: text(
      2048,
      "Space-separated scopes, a subset of the client's (or, on refresh, of the grant's). Omitted: all of them.",
    ),
    code: text(256, 'authorization_code: the code from the redirect.'),
    redirect_uri: text(2048, 'authorization_code: the redirect URI of the authorization request, exactly.'),
    code_verifier: text(
      128,
      'authorization_code: the PKCE verifier (43-128 characters) whose S256 challenge was sent.',
    ),
    refresh_token: text(256, 'refresh_token: the refresh token; each works once.'),
    resource: resourceParameter(
      'RFC 8707: the resources the access token is for (its `aud`). client_credentials: within the ' +
        "client's resources; authorization_code and refresh_token: a subset of those of the authorization " +
        '(omitted: all of them). No resource at all: the audience is the issuer (the API). A form request ' +
        'carries one `resource`; send several as a JSON array.',
    ),
  })
  .openapi('TokenRequest');

export const TokenResponse = z
  .object({
    token_type: z.literal('Bearer'),
    expires_in: z.int().openapi({ description: 'Seconds until the access token expires (3600).' }),
    access_token: z.string().openapi({ description: 'A signed JWT; send it as `Authorization: Bearer <token>`.' }),
    refresh_token: z
      .string()
      .optional()
      .openapi({
        description:
          'Exchanges once for new tokens within 30 days. Absent for client_credentials, which asks again with its ' +
          'secret.',
      }),
    scope: z.string().openapi({ description: 'Space-separated scopes granted.' }),
    id_token: z
      .string()
      .optional()
      .openapi({ description: "OpenID Connect ID token (with the request's `nonce`), when `openid` was granted." }),
  })
  .openapi('TokenResponse');

export const TokenOperationRequest = z
  .object({
    token: z.string().max(4096).openapi({ description: 'The access or refresh token.' }),
    token_type_hint: text(64, '`access_token` or `refresh_token`; optional, the server finds out itself.'),
    ...clientAuthFields,
  })
  .openapi('TokenOperationRequest');

export const Introspection = z
  .object({
    active: z.boolean(),
    scope: z.string().optional(),
    client_id: z.string().optional(),
    sub: z.string().optional().openapi({ description: 'The user, or the client itself for client_credentials.' }),
    exp: z.int().optional(),
    iat: z.int().optional(),
    iss: z.string().optional(),
    aud: z
      .union([z.string(), z.array(z.string())])
      .optional()
      .openapi({ description: "An access token's audience: the resource it is for, or an array of several." }),
    jti: z.string().optional(),
    token_type: z.string().optional(),
    tenant_id: z.string().optional(),
  })
  .openapi('TokenIntrospection');

export const AuthorizeQuery = z
  .object({
    client_id: text(256, 'The client id. Unknown: 400.'),
    redirect_uri: text(
      2048,
      "Must equal one of the client's registered redirect URIs exactly (no trailing-slash or query leeway), else 400.",
    ),
    response_type: text(64, 'Must be `code`.'),
    scope: text(
      2048,
      "Space-separated scopes within the client's; `openid` adds an ID token. Omitted: all of the client's scopes.",
    ),
    tenant: text(
      64,
      "The tenant id; when given it must be the client's tenant (ignored for a self-registered client, whose " +
        'user names their tenant on the login page).',
    ),
    state: text(2048, 'Returned unchanged on the redirect.'),
    nonce: text(512, 'Put into the ID token.'),
    silent: text(
      5,
      '`true`: never show a page; redirect at once with a code, or with `error=login_required` or `consent_required`.',
    ),
    code_challenge: text(43, 'PKCE: base64url SHA-256 of the code verifier. Required for public clients.'),
    code_challenge_method: text(8, 'PKCE: `S256` (the only method supported).'),
    resource: resourceParameter(
      'RFC 8707: the resources the tokens will be for; repeat the parameter for several. Omitted: the API when ' +
        'the client may use it, else every resource the client may use. An invalid one redirects to ' +
        '`redirect_uri` with `error=invalid_target` (and `error_description`, `state`, `iss`).',
    ),
  })
  .strict();

export const AuthorizationSession = z
  .object({
    forward_uri: z
      .string()
      .openapi({ description: "The login and consent page of this session: send the user's browser there." }),
    client_name: z.string(),
    client_redirect_uri: z.string(),
    scope: z.array(z.object({ id: z.string(), description: z.string() })),
    is_authorization_approved: z.boolean().openapi({
      description: 'Whether the signed-in user (login cookie) has already approved these scopes for this client.',
    }),
    is_id_token_issued: z.boolean().openapi({ description: 'Whether an ID token will be issued (`openid` scope).' }),
    expires_in: z.int().openapi({ description: 'Seconds the `forward_uri` stays usable.' }),
  })
  .openapi('AuthorizationSession');

const loopbackHosts = new Set(['localhost', '127.0.0.1', '[::1]']);

/** An absolute https URL without fragment, or http on a loopback host (native and development clients). */
export const RedirectUri = z
  .string()
  .max(2048)
  .refine((value) => {
    try {
      const url = new URL(value);
      if (url.hash || value.includes('#')) return false;
      return url.protocol === 'https:' || (url.protocol === 'http:' && loopbackHosts.has(url.hostname));
    } catch {
      return false;
    }
  }, 'must be an absolute https URL without fragment (http only on localhost, 127.0.0.1 or [::1])')
  .openapi({ description: 'An absolute https URL without fragment; http only on a loopback host.' });

export const ClientScopeName = z.enum(CLIENT_SCOPES).openapi('ClientScope', {
  description: 'A scope an OAuth client may ask for: an API scope, `*` (all) or `openid` (ID token).',
});

export const OAuthClientInput = z
  .object({
    name: trimmedName(200).openapi({ description: 'Shown to users on the consent page.' }),
    redirect_uris: z.array(RedirectUri).min(1).max(20),
    scopes: z.array(ClientScopeName).min(1).max(CLIENT_SCOPES.length),
    is_confidential: z.boolean().openapi({
      description: 'true: a server-side client with a secret; false: a browser or native app, which must use PKCE.',
    }),
    resources: z
      .array(resourceValue)
      .min(1)
      .max(MAX_RESOURCES)
      .optional()
      .openapi({
        description:
          'RFC 8707 resources the client may ask tokens for: the API (the issuer) and `${issuer}/mcp`. Omitted: ' +
          'every resource of this server, including ones added later.',
      }),
  })
  .strict();

const clientFields = {
  client_id: z.string(),
  name: z.string(),
  redirect_uris: z.array(z.string()),
  scopes: z.array(ClientScopeName),
  is_confidential: z.boolean(),
  resources: z.array(z.string()).openapi({ description: 'The RFC 8707 resources the client may ask tokens for.' }),
  tenant_id: z.string(),
  created_at: z.iso.datetime(),
};

export const OAuthClientOutput = z
  .object(clientFields)
  .openapi('OAuthClient', { description: 'An OAuth client without its secret, which is never shown again.' });

export const OAuthClientCreated = z
  .object({
    ...clientFields,
    client_secret: z
      .string()
      .nullable()
      .openapi({ description: 'Shown only in this response; null for a public client.' }),
  })
  .openapi('OAuthClientCreated');

export const OAuthClientChanges = z
  .object({
    name: OAuthClientInput.shape.name.optional(),
    redirect_uris: OAuthClientInput.shape.redirect_uris.optional(),
    scopes: OAuthClientInput.shape.scopes.optional(),
    resources: OAuthClientInput.shape.resources,
  })
  .strict();

const Password = z
  .string()
  .min(10)
  .max(1024)
  .openapi({ description: '10 to 1024 characters; stored only as a salted scrypt hash.' });

export const UserInput = z
  .object({
    email: z.email().max(320).openapi({ description: 'Unique within the tenant, compared without regard to case.' }),
    password: Password,
  })
  .strict();

export const PasswordInput = z.object({ password: Password }).strict();

export const UserOutput = z
  .object({ id: z.string(), email: z.string(), tenant_id: z.string(), created_at: z.iso.datetime() })
  .openapi('User', { description: 'A user of the login page; never their password or its hash.' });

export const SigningKeyRotation = z
  .object({
    kid: z.string().openapi({
      description: 'Key id of the new key, in the JWKS at once: tokens signed from `signs_from` on carry it.',
    }),
    signs_from: z.iso.datetime().openapi({
      description:
        'When the new key starts signing: `OAUTH_JWKS_MAX_AGE_SECONDS` after the rotation, once every JWKS ' +
        'cached before it has expired. Until then the superseded key signs.',
    }),
    retiring: z
      .array(
        z.object({
          kid: z.string(),
          retire_at: z.iso.datetime().openapi({
            description: 'Until then the key stays in the JWKS and verifies the tokens it signed; it is deleted after.',
          }),
        }),
      )
      .openapi({ description: 'The keys the new one supersedes.' }),
  })
  .openapi('SigningKeyRotation');
