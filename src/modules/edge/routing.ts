/**
 * Pure routing of the edge data plane: which route of a proxy answers a path, and the origin URL
 * the rest of the path maps onto.
 */
import type { EdgeCacheKeySettings } from './cache-key';
import type { EdgeCompressionSettings } from './compression';
import type { EdgeImageSettings } from './images';

export interface EdgeCacheSettings {
  age: number | null;
  is_as_origin: boolean | null;
  is_public: boolean | null;
  /** Absent from proxies stored before it existed. */
  stale_while_revalidate?: number | null;
  /** Absent from proxies stored before it existed. */
  key?: EdgeCacheKeySettings | null;
  /** Absent from proxies stored before it existed. */
  compression?: EdgeCompressionSettings | null;
}

export interface EdgeAuthSettings {
  is_required: boolean | null;
  scope: string | null;
}

export interface EdgeRoute {
  path: string;
  origin: { uri: string; is_bucket: boolean | null };
  /** `image` is absent from proxies stored before it existed. */
  settings: { cache: EdgeCacheSettings; auth: EdgeAuthSettings; image?: EdgeImageSettings | null };
}

export const WILDCARD_PATH = '*';

export interface RouteMatch {
  route: EdgeRoute;
  /** The part of the request path after the route's prefix ('' or starting with '/'). */
  rest: string;
  isWildcard: boolean;
}

const BASE = 'http://edge.invalid';
const PLAIN_PATH = /^\/[\w.~/-]*$/;
const DOT_SEGMENT = /\/\.\.?(?:\/|$)/;

/**
 * The request path with `.` and `..` segments resolved (also their percent-encoded forms), so
 * that `/public/../private` is matched, signed and forwarded as `/private`. Null when the path is
 * not a path.
 */
export function normalizePath(rawPath: string): string | null {
  if (rawPath === '') return '/';
  // The common case, checked cheaply: unreserved characters only and no dot segment, which URL leaves as it is.
  if (PLAIN_PATH.test(rawPath) && !DOT_SEGMENT.test(rawPath)) return rawPath;
  if (!rawPath.startsWith('/')) return null;
  try {
    // Appended to a fixed origin, never resolved against it: "//host/x" stays a path.
    return new URL(`${BASE}${rawPath}`).pathname;
  } catch {
    return null;
  }
}

/** A route prefix without its trailing slashes: `/images/` and `/images` both match `/images/a.jpg`. */
const prefixOf = (routePath: string) => routePath.replace(/\/+$/, '');

/**
 * The route answering `path`: the longest prefix that matches on a segment boundary (`/images`
 * matches `/images` and `/images/a.jpg`, not `/imagesx`), otherwise the wildcard route `*`.
 */
export function matchRoute(routes: readonly EdgeRoute[], path: string): RouteMatch | null {
  let best: { route: EdgeRoute; prefix: string } | null = null;
  let wildcard: EdgeRoute | null = null;
  for (const route of routes) {
    if (route.path === WILDCARD_PATH) {
      wildcard = route;
      continue;
    }
    const prefix = prefixOf(route.path);
    const matches = prefix === '' || path === prefix || path.startsWith(`${prefix}/`);
    if (matches && (!best || prefix.length > best.prefix.length)) best = { route, prefix };
  }
  if (best) return { route: best.route, rest: path.slice(best.prefix.length), isWildcard: false };
  if (wildcard) return { route: wildcard, rest: path, isWildcard: true };
  return null;
}

/**
 * The origin URL for a request: the route's origin URI with the rest of the path appended to its
 * path and the request's query string appended to its own query.
 */
export function originUrl(originUri: string, rest: string, query: string): URL {
  const url = new URL(originUri);
  url.hash = '';
  const base = url.pathname.replace(/\/+$/, '');
  url.pathname = `${base}${rest}` || '/';
  if (query !== '') url.search = url.search.length > 1 ? `${url.search}&${query}` : `?${query}`;
  return url;
}

/** The query string without the given parameters, otherwise byte for byte as sent. */
export function withoutQueryParameters(query: string, names: readonly string[]): string {
  if (query === '') return query;
  return query
    .split('&')
    .filter((pair) => {
      const name = pair.split('=', 1)[0]!;
      let decoded = name;
      try {
        decoded = decodeURIComponent(name.replaceAll('+', ' '));
      } catch {
        // A malformed escape is kept as sent.
      }
      return !names.includes(decoded);
    })
    .join('&');
}
