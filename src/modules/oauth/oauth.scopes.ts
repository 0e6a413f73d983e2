import { ALL_SCOPES, SCOPES } from '../../kernel/scopes';
import { oauthError } from './oauth.errors';

/** The OpenID Connect scope: asks for an ID token next to the access token. */
export const OPENID = 'openid';

/** Every scope an OAuth client may be registered with and ask for. */
export const CLIENT_SCOPES = [...SCOPES, ALL_SCOPES, OPENID] as const;

/**
 * What a client of no tenant (self-registered, or named by a metadata document) may ask for by
 * default: every API scope and `openid`, not `*`.
 */
export const AGENT_CLIENT_SCOPES: string[] = CLIENT_SCOPES.filter((scope) => scope !== ALL_SCOPES);
export type ClientScope = (typeof CLIENT_SCOPES)[number];

const descriptions: Record<ClientScope, string> = {
  'proxies:read': 'Read your edge proxy configuration',
  'proxies:write': 'Create, change and delete your edge proxies',
  'indexes:read': 'Read your search indexes',
  'indexes:write': 'Create and change your search indexes and their documents',
  search: 'Search your indexes',
  'inventory:read': 'Read your stock',
  'inventory:write': 'Change your stock',
  'catalog:read': 'Read your catalog',
  'catalog:write': 'Change your catalog',
  'orders:read': 'Read your orders',
  'orders:write': 'Change your orders',
  'pricing:write': 'Change your prices, tax zones, shipping methods and discounts',
  'checkout:write': 'Create, change, complete and cancel carts and checkouts',
  '*': 'Full access to everything in your account',
  openid: 'Confirm who you are (your user id) to the application',
};

export const describeScope = (scope: string) => ({
  id: scope,
  description: descriptions[scope as ClientScope] ?? scope,
});

const isKnown = (scope: string): scope is ClientScope => (CLIENT_SCOPES as readonly string[]).includes(scope);

/** Whether a scope falls within what a client (or an earlier grant) holds; `*` covers every API scope. */
function covered(scope: string, held: readonly string[]): boolean {
  if (held.includes(scope)) return true;
  return scope !== OPENID && held.includes(ALL_SCOPES);
}

/**
 * The scopes a request ends up with: the space-separated `requested` scopes, each of which must be
 * held, or every held scope when none are requested. `openid` only where an ID token can be issued.
 */
export function resolveScopes(
  requested: string | undefined,
  held: readonly string[],
  options: { openid: boolean },
): string[] {
  const allowed = options.openid ? held : held.filter((scope) => scope !== OPENID);
  if (requested === undefined || requested.trim() === '') {
    if (allowed.length === 0) throw oauthError('invalid_scope', 'the client has no scope that this request can grant');
    return [...allowed];
  }
  const scopes = [...new Set(requested.trim().split(/ +/))];
  for (const scope of scopes) {
    if (!isKnown(scope)) throw oauthError('invalid_scope', `unknown scope "${scope}"`);
    if (scope === OPENID && !options.openid)
      throw oauthError('invalid_scope', 'openid needs a signed-in user (authorization_code)');
    if (!covered(scope, allowed))
      throw oauthError('invalid_scope', `scope "${scope}" exceeds what the client may ask for`);
  }
  return scopes;
}

/** Whether every scope of `requested` is covered by `approved` (a user's consent). */
export const scopesCovered = (requested: readonly string[], approved: readonly string[]) =>
  requested.every((scope) => covered(scope, approved));
