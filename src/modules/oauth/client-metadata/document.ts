/**
 * OAuth Client ID Metadata Documents (draft-ietf-oauth-client-id-metadata-document, which MCP's
 * 2026-07-28 authorization names the preferred registration): a client whose `client_id` is an
 * `https` URL publishes its metadata at that URL. What makes such a `client_id`, and what its
 * document must say to be used as a public client here.
 */
import { z } from 'zod';
// The rule of every client's redirect URIs: https, or http on a loopback host, without fragment.
import { RedirectUri } from '../oauth.schemas';

/** The longest `client_id` URL taken. */
export const MAX_CLIENT_ID_URL_LENGTH = 2048;
/** Redirect URIs one document may list. */
export const MAX_DOCUMENT_REDIRECT_URIS = 20;

/** A refusal of a client_id URL or its document, saying what is wrong in a sentence. */
export class ClientMetadataError extends Error {}

/** Whether `clientId` asks for a metadata document (an `https` URL) rather than naming a registered client. */
export const isClientIdUrl = (clientId: string) => clientId.startsWith('https://');

/**
 * The URL of a metadata document, checked as the draft requires (section 3): `https`, a path
 * other than `/`, no fragment, no user or password, no `.` or `..` path segment; and, here, no
 * query string (which the draft advises against) and a bounded length.
 */
export function documentUrl(clientId: string): URL {
  if (clientId.length > MAX_CLIENT_ID_URL_LENGTH)
    throw new ClientMetadataError(`a client_id URL is at most ${MAX_CLIENT_ID_URL_LENGTH} characters`);
  const rawPath = clientId.replace(/^[a-z]+:\/\/[^/?#]*/i, '').split(/[?#]/)[0]!;
  if (rawPath.split('/').some((segment) => /^(\.|%2e){1,2}$/i.test(segment)))
    throw new ClientMetadataError('a client_id URL must not have . or .. path segments');
  let url: URL;
  try {
    url = new URL(clientId);
  } catch {
    throw new ClientMetadataError('the client_id is not a URL');
  }
  if (url.protocol !== 'https:') throw new ClientMetadataError('a client_id URL must use https');
  if (url.username !== '' || url.password !== '')
    throw new ClientMetadataError('a client_id URL must not carry a user or password');
  if (clientId.includes('#')) throw new ClientMetadataError('a client_id URL must not have a fragment');
  if (clientId.includes('?')) throw new ClientMetadataError('a client_id URL must not have a query string');
  if (url.pathname === '/')
    throw new ClientMetadataError('a client_id URL must have a path (https://app.example/client.json)');
  if (url.href !== clientId)
    throw new ClientMetadataError(`the client_id URL must be in its normal form (${url.href})`);
  return url;
}

const WebUrl = z
  .string()
  .max(2000)
  .refine((value) => {
    try {
      return new URL(value).protocol === 'https:';
    } catch {
      return false;
    }
  }, 'must be an https URL');

/** The members of a document this service reads; others are ignored, secrets refused. */
export const ClientMetadataDocument = z
  .looseObject({
    client_id: z.string(),
    client_name: z.string().trim().min(1).max(200),
    redirect_uris: z.array(RedirectUri).min(1).max(MAX_DOCUMENT_REDIRECT_URIS),
    client_uri: WebUrl.optional(),
    logo_uri: WebUrl.optional(),
    token_endpoint_auth_method: z
      .literal('none', { message: 'only public clients ("none") can be identified by a metadata document here' })
      .optional(),
    grant_types: z
      .array(z.enum(['authorization_code', 'refresh_token']))
      .max(2)
      .optional(),
    response_types: z.array(z.literal('code')).max(1).optional(),
    scope: z.string().max(1000).optional(),
  })
  .refine((document) => !('client_secret' in document) && !('client_secret_expires_at' in document), {
    message: 'a metadata document must not hold a client secret',
    path: ['client_secret'],
  });

export type ClientMetadata = z.infer<typeof ClientMetadataDocument>;

/**
 * The document's metadata, or the refusal saying what is wrong: it must be JSON of the shape
 * above, and its `client_id` the URL it was fetched from, exactly.
 */
export function parseClientMetadata(url: string, body: string): ClientMetadata {
  let json: unknown;
  try {
    json = JSON.parse(body);
  } catch {
    throw new ClientMetadataError('the client metadata document is not JSON');
  }
  const parsed = ClientMetadataDocument.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const at = issue.path.length > 0 ? issue.path.join('.') : 'the document';
    throw new ClientMetadataError(`the client metadata document is invalid at ${at}: ${issue.message}`);
  }
  if (parsed.data.client_id !== url)
    throw new ClientMetadataError('the client_id of the client metadata document is not the URL it was fetched from');
  return parsed.data;
}
