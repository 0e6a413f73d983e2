import { oauthError } from './oauth.errors';
import { PROTECTED_RESOURCE_PATHS } from './oauth.constants';

/** At most this many `resource` parameters in one request (there are only a few resources to name). */
export const MAX_RESOURCES = 10;
/** The longest `resource` value accepted. */
export const MAX_RESOURCE_LENGTH = 2048;

/**
 * The RFC 8707 resource indicators this authorization server issues tokens for: the REST and
 * GraphQL API (the issuer itself) and each resource under a path such as `/mcp`.
 */
export const knownResources = (issuer: string): string[] => PROTECTED_RESOURCE_PATHS.map((path) => `${issuer}${path}`);

/**
 * A resource indicator in its canonical form (lowercase scheme and host, as the MCP specification
 * asks servers to accept uppercase ones), or null when it is not an absolute URI without a fragment
 * (RFC 8707 section 2).
 */
export function canonicalResource(value: string): string | null {
  if (value.length === 0 || value.length > MAX_RESOURCE_LENGTH || value.includes('#')) return null;
  const match = /^([A-Za-z][A-Za-z0-9+.-]*):\/\/([^/?#]+)(.*)$/s.exec(value);
  if (!match) return null;
  try {
    new URL(value);
  } catch {
    return null;
  }
  return `${match[1]!.toLowerCase()}://${match[2]!.toLowerCase()}${match[3]!}`;
}

/** The `resource` parameters of a request: none, one, or several (a repeated parameter, or a JSON array). */
export const resourceList = (value: string | string[] | undefined): string[] =>
  value === undefined ? [] : typeof value === 'string' ? [value] : value;

/**
 * The resources a request names, checked: each must be absolute without a fragment, one this
 * server protects, and one of `allowed` (the client's, or what the grant holds). Throws
 * `invalid_target`. Duplicates are dropped; the order of first mention is kept.
 */
export function resolveResources(
  requested: string | string[] | undefined,
  allowed: readonly string[],
  known: readonly string[],
  refusal = 'is not a resource this client may ask for',
): string[] {
  const values = resourceList(requested);
  if (values.length > MAX_RESOURCES)
    throw oauthError('invalid_target', `at most ${MAX_RESOURCES} resource parameters are accepted`);
  const resources: string[] = [];
  for (const value of values) {
    const resource = canonicalResource(value);
    if (resource === null) throw oauthError('invalid_target', 'a resource must be an absolute URI without a fragment');
    if (!known.includes(resource))
      throw oauthError('invalid_target', `${shown(value)} is not a resource of this server (${known.join(', ')})`);
    if (!allowed.includes(resource)) throw oauthError('invalid_target', `${shown(value)} ${refusal}`);
    if (!resources.includes(resource)) resources.push(resource);
  }
  return resources;
}

/** A resource as quoted in an error: never more than a line of it. */
const shown = (value: string) => JSON.stringify(value.length > 200 ? `${value.slice(0, 200)}…` : value);

/** The resources a client may ask for: its list, or every known resource when it has none. */
export const clientResources = (client: { resources: string[] }, known: readonly string[]): string[] =>
  client.resources.length > 0 ? client.resources.filter((resource) => known.includes(resource)) : [...known];

/**
 * What a grant covers: the resources asked for when it was made, or the API (the issuer, the
 * audience of tokens when none is asked) when none were.
 */
export const grantResources = (grant: { resources: string[] }, issuer: string): string[] =>
  grant.resources.length > 0 ? grant.resources : [issuer];

/**
 * The resources of an authorization or client_credentials request: those named (checked as in
 * `resolveResources` against the client's), or, when none are, none (tokens for the API, as before
 * resource indicators) if the client may use the API, else every resource the client may use.
 */
export function requestedResources(
  requested: string | string[] | undefined,
  client: { resources: string[] },
  issuer: string,
): string[] {
  const known = knownResources(issuer);
  const mayUse = clientResources(client, known);
  const resources = resolveResources(requested, mayUse, known);
  if (resources.length > 0 || mayUse.includes(issuer)) return resources;
  if (mayUse.length === 0) throw oauthError('invalid_target', 'the client may ask for no resource of this server');
  return mayUse;
}

/** The `error_description` of an OAuth error: its reason without the code leading it. */
export const errorDescription = (message: string) => message.replace(/^[^;]*; [a-z_]+: /, '');

/**
 * The resources of a token request under an existing authorization (a code or a refresh token's
 * grant): a subset of what it was made for (RFC 8707 section 2.2), or all of it when none are named.
 */
export function narrowedResources(
  requested: string | string[] | undefined,
  granted: { resources: string[] },
  issuer: string,
): string[] {
  const resources = resolveResources(
    requested,
    grantResources(granted, issuer),
    knownResources(issuer),
    'was not part of the authorization',
  );
  return resources.length > 0 ? resources : granted.resources;
}
