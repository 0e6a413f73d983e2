import { z } from '../../kernel/rest/schemas';
import { trimmedName } from '../../kernel/validation';
import { CLIENT_SCOPES } from './oauth.scopes';
import { RedirectUri } from './oauth.schemas';

/** The most redirect URIs a client may register, as for the clients the operator registers. */
export const MAX_REGISTERED_REDIRECT_URIS = 20;

/** The grants a self-registered client uses: never client_credentials (it has no secret). */
export const REGISTERED_GRANT_TYPES = ['authorization_code', 'refresh_token'] as const;

const scopeList = z
  .string()
  .max(2048)
  .refine(
    (value) =>
      value
        .trim()
        .split(/ +/)
        .every((scope) => (CLIENT_SCOPES as readonly string[]).includes(scope)),
    `must be space-separated scopes of this server (${CLIENT_SCOPES.join(', ')})`,
  );

/**
 * The RFC 7591 client metadata this server reads, validated by the registration service so that
 * a refusal has the RFC's `{error, error_description}` form. Other members are ignored, as the RFC
 * allows.
 */
export const RegistrationMetadata = z.object({
  redirect_uris: z.array(RedirectUri).min(1).max(MAX_REGISTERED_REDIRECT_URIS),
  client_name: trimmedName(200).optional(),
  token_endpoint_auth_method: z.literal('none', { error: 'must be none: registered clients are public' }).optional(),
  grant_types: z
    .array(z.enum(REGISTERED_GRANT_TYPES, { error: 'must be authorization_code or refresh_token' }))
    .max(REGISTERED_GRANT_TYPES.length * 2)
    .optional(),
  response_types: z
    .array(z.literal('code', { error: 'must be code' }))
    .max(4)
    .optional(),
  scope: scopeList.optional(),
});

/**
 * What the OpenAPI document shows of a registration request. Every member is `unknown` to the
 * request parser, so that the registration service (RegistrationMetadata) answers what it refuses
 * in the RFC 7591 error form rather than the envelope; the documented types are given by hand.
 */
const documented = (schema: Record<string, unknown>, description: string) =>
  z
    .unknown()
    .openapi({ ...schema, description } as never)
    .optional();

export const ClientRegistrationRequest = z
  .object({
    redirect_uris: documented(
      { type: 'array', items: { type: 'string' } },
      `Required: 1 to ${MAX_REGISTERED_REDIRECT_URIS} absolute https URLs without fragment (http only on a ` +
        'loopback host), as for the clients the operator registers. An authorization request must name one exactly.',
    ),
    client_name: documented(
      { type: 'string' },
      'Shown on the consent page (at most 200 characters). Default: the redirect host.',
    ),
    token_endpoint_auth_method: documented(
      { type: 'string' },
      '`none`, the only method: a registered client is public and must use PKCE.',
    ),
    grant_types: documented(
      { type: 'array', items: { type: 'string' } },
      '`authorization_code` and `refresh_token` (the default); never `client_credentials`.',
    ),
    response_types: documented({ type: 'array', items: { type: 'string' } }, '`code`, the only one (the default).'),
    scope: documented(
      { type: 'string' },
      'Space-separated scopes the client may ask for. Default: every API scope and `openid`, but not `*` ' +
        '(which must be asked for).',
    ),
  })
  .catchall(z.unknown())
  .openapi('ClientRegistrationRequest', {
    required: ['redirect_uris'],
    description:
      'RFC 7591 client metadata; `redirect_uris` is required. Members not listed here are accepted and ignored.',
  });

export const ClientRegistration = z
  .object({
    client_id: z.string(),
    client_id_issued_at: z.int().openapi({ description: 'Unix seconds.' }),
    registration_access_token: z.string().openapi({
      description:
        'RFC 7592: reads (`GET`) and deletes (`DELETE`) the registration at `registration_client_uri`, as a ' +
        'bearer token. Shown in the registration response and echoed on reads; stored only as a hash.',
    }),
    registration_client_uri: z.string(),
    client_name: z.string(),
    redirect_uris: z.array(z.string()),
    grant_types: z.array(z.string()),
    response_types: z.array(z.string()),
    token_endpoint_auth_method: z.literal('none'),
    scope: z.string(),
  })
  .openapi('ClientRegistration', { description: 'A registered client (RFC 7591 section 3.2.1).' });

export const RegistrationError = z
  .object({
    error: z.string().openapi({
      description:
        '`invalid_redirect_uri` or `invalid_client_metadata` (RFC 7591 section 3.2.2) for a registration; ' +
        '`invalid_token` for a registration access token refused (RFC 7592, RFC 6750).',
    }),
    error_description: z.string(),
  })
  .openapi('RegistrationError', { description: 'The error format RFC 7591 and RFC 7592 fix.' });

export const AgentClientSettings = z
  .object({
    dynamic_clients_allowed: z.boolean().openapi({
      description:
        "Whether this tenant's users may give access to applications that registered themselves " +
        '(`POST /api/oauth/register`). Default: false. Turning it off revokes the access they gave.',
    }),
    metadata_document_clients_allowed: z.boolean().openapi({
      description:
        "Whether this tenant's users may give access to applications identified by a Client ID Metadata Document " +
        '(a `client_id` that is an https URL). Default: true. Turning it off revokes the access they gave.',
    }),
  })
  .strict()
  .openapi('AgentClientSettings');

export type AgentClientSettingsData = z.infer<typeof AgentClientSettings>;

/** A change of the settings: the members given, at least one. */
export const AgentClientSettingsChange = AgentClientSettings.partial()
  .strict()
  .refine((change) => Object.keys(change).length > 0, { message: 'give at least one setting' })
  .openapi('AgentClientSettingsChange');
