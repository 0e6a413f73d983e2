/**
 * Pure cache rules: whether an origin response may be stored, for how long, and whether a
 * conditional request is answered with 304.
 */
import type { IncomingHttpHeaders } from 'node:http';
import { headerTokens, headerValue, type HeaderMap } from './headers';
import type { EdgeCacheSettings } from './routing';

/** Statuses the cache stores. */
export const CACHEABLE_STATUSES = new Set([200, 301, 404]);

/** Origin statuses that count as a failure, for serving stale (RFC 5861 stale-if-error). */
export const FAILURE_STATUSES = new Set([500, 502, 503, 504]);

/** Whether requests to a route with these settings go through the cache at all. */
export const usesCache = (settings: EdgeCacheSettings) => settings.is_as_origin === true || (settings.age ?? 0) > 0;

function cacheControlDirectives(value: string | string[] | undefined): Map<string, string | true> {
  const directives = new Map<string, string | true>();
  for (const token of headerTokens(value)) {
    const [name, argument] = token.split('=', 2) as [string, string | undefined];
    directives.set(name.trim(), argument === undefined ? true : argument.trim().replace(/^"|"$/g, ''));
  }
  return directives;
}

const seconds = (value: string | true | undefined) =>
  typeof value === 'string' && /^\d+$/.test(value) ? Math.min(Number(value), 31_536_000) : undefined;

/**
 * For how many seconds the response stays fresh, or 0 when it must not be stored: either the
 * route's `age`, or (with `is_as_origin`) the origin's `s-maxage`, `max-age` or `Expires`.
 * Never stored whatever the settings: other statuses than 200/301/404, `Set-Cookie`, `Vary: *` or
 * `Vary: Authorization`, and what the origin marks `no-store` or `private`.
 */
export function freshnessSeconds(
  settings: EdgeCacheSettings,
  status: number,
  headers: IncomingHttpHeaders,
  now: number,
): number {
  if (!CACHEABLE_STATUSES.has(status)) return 0;
  if (headers['set-cookie'] !== undefined) return 0;
  const vary = headerTokens(headers.vary);
  if (vary.includes('*') || vary.includes('authorization')) return 0;
  const directives = cacheControlDirectives(headers['cache-control']);
  if (directives.has('no-store') || directives.has('private')) return 0;
  if (settings.is_as_origin !== true) return settings.age ?? 0;
  if (directives.has('no-cache')) return 0;
  const shared = seconds(directives.get('s-maxage')) ?? seconds(directives.get('max-age'));
  if (shared !== undefined) return Math.max(0, shared - ageSeconds(headers));
  const expires = headerValue(headers.expires);
  if (expires === undefined) return 0;
  const expiresAt = Date.parse(expires);
  if (Number.isNaN(expiresAt)) return 0;
  const date = Date.parse(headerValue(headers.date) ?? '');
  return Math.max(0, Math.floor((expiresAt - (Number.isNaN(date) ? now : date)) / 1000));
}

/**
 * For how many seconds after its freshness an entry is served at once while one request in the
 * background refreshes it (RFC 5861): the origin's `stale-while-revalidate` with `is_as_origin`,
 * otherwise the route's own setting.
 */
export function revalidationSeconds(settings: EdgeCacheSettings, headers: IncomingHttpHeaders): number {
  if (settings.is_as_origin !== true) return settings.stale_while_revalidate ?? 0;
  return seconds(cacheControlDirectives(headers['cache-control']).get('stale-while-revalidate')) ?? 0;
}

/** The origin's `Age` in seconds (0 when absent or malformed). */
export function ageSeconds(headers: IncomingHttpHeaders | HeaderMap): number {
  const value = headerValue(headers.age);
  return value !== undefined && /^\d+$/.test(value) ? Number(value) : 0;
}

const opaqueTag = (tag: string) => tag.trim().replace(/^W\//, '');

/**
 * Whether a conditional GET/HEAD is answered with 304 given the response's validators:
 * `If-None-Match` (weak comparison) wins over `If-Modified-Since`, as RFC 9110 section 13.2.2 says.
 */
export function isNotModified(
  request: IncomingHttpHeaders,
  validators: { etag?: string; lastModified?: string },
): boolean {
  const ifNoneMatch = request['if-none-match'];
  if (ifNoneMatch !== undefined) {
    if (validators.etag === undefined) return false;
    const tags = (Array.isArray(ifNoneMatch) ? ifNoneMatch.join(',') : ifNoneMatch).split(',').map((tag) => tag.trim());
    return tags.includes('*') || tags.some((tag) => opaqueTag(tag) === opaqueTag(validators.etag!));
  }
  const ifModifiedSince = headerValue(request['if-modified-since']);
  if (ifModifiedSince === undefined || validators.lastModified === undefined) return false;
  const since = Date.parse(ifModifiedSince);
  const modified = Date.parse(validators.lastModified);
  return !Number.isNaN(since) && !Number.isNaN(modified) && modified <= since;
}

/** Headers a 304 carries over from the full response (RFC 9110 section 15.4.5). */
export const NOT_MODIFIED_HEADERS = [
  'cache-control',
  'content-location',
  'date',
  'etag',
  'expires',
  'last-modified',
  'vary',
];
