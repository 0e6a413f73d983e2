/**
 * Answers from stored responses: the routes whose hits the cache answers alone, the headers of a
 * hit, and a stored response as the answer to a request (304 when the client's validators match).
 */
import type { IncomingHttpHeaders } from 'node:http';
import { isNotModified, NOT_MODIFIED_HEADERS, usesCache } from './cache-policy';
import { keyedQuery, keyRuleOf, type KeyRule } from './cache-key';
import { encodedHeaders, preferredEncoding, type Encoding } from './compression';
import type { EdgeProxy } from './edge-proxy';
import type { CacheLookup, CacheStatus, EdgeResponse } from './edge.types';
import { headerValue, type HeaderMap } from './headers';
import { listedVariantKey } from './image-variants';
import { asksForTransform } from './images';
import type { CachedResponse } from './response-cache';
import { matchRoute, normalizePath } from './routing';

/**
 * See `HitRoutes`; `cacheKey` null: the route's hits need more than the cache. The
 * key rule adds the request's headers and cookies to `cacheKey` per request.
 */
export interface HitRoute {
  proxy: EdgeProxy;
  cacheKey: string | null;
  rule: KeyRule | null;
  /** For an image variant: `cacheKey` ends before its format, this one or (null, `auto`) the client's. */
  imageFormat?: string | null;
}
/** Bounds of `hitRoutes`: at most about 2 × 4 Mi characters of URLs and cache keys; longer URLs are not kept. */
const MAX_HIT_ROUTES_LENGTH = 4 * 1024 * 1024;
const MAX_HIT_ROUTE_URL_LENGTH = 2048;

export const cacheKeyPrefix = (proxyKey: string, pathPrefix = '') => `${proxyKey}\n${pathPrefix}`;

/** See `HitRoutes`. */
export function answerableRoute(proxy: EdgeProxy, request: CacheLookup): HitRoute {
  const unanswerable = { proxy, cacheKey: null, rule: null };
  if (!proxy.isActive || proxy.isSuspended) return unanswerable;
  const path = normalizePath(request.path);
  const match = path === null ? null : matchRoute(proxy.routes, path);
  if (!match) return unanswerable;
  const { cache, auth } = match.route.settings;
  if ((match.isWildcard && proxy.signature.secret !== null) || auth.is_required === true || !usesCache(cache)) {
    return unanswerable;
  }
  const image = match.route.settings.image;
  if (image?.is_enabled === true && asksForTransform(request.query)) {
    // Variants of listed sizes are answered here; the others (signed, malformed) by the image variants.
    const variant = listedVariantKey(cacheKeyPrefix(proxy.key, path!), request.query, image);
    return variant === null ? unanswerable : { proxy, cacheKey: variant.base, rule: null, imageFormat: variant.format };
  }
  const rule = keyRuleOf(cache.key);
  return { proxy, cacheKey: `${cacheKeyPrefix(proxy.key, path!)}?${keyedQuery(request.query, rule)}`, rule };
}

/** Whether the request's headers are those the entry was fetched with (a loop: this is on every hit). */
export function varyMatches(entry: CachedResponse, headers: IncomingHttpHeaders): boolean {
  const varyOn = entry.varyOn;
  for (const name in varyOn) if ((headerValue(headers[name]) ?? '') !== varyOn[name]) return false;
  return true;
}

/**
 * The route of a URL for answering its hits, worked out once per URL and proxy configuration:
 * the cache key (less the request's headers and cookies, which the key rule adds) of a URL whose
 * route the cache answers without anything more, null when the route needs a signature or a
 * token, or is not cached. A plain map cleared when full, not an LRU: this is on every cached hit, and a lookup
 * costs a fraction of lru-cache's get; a cleared map only costs recomputing.
 */
export class HitRoutes {
  private readonly routes = new Map<string, HitRoute>();
  /** Characters of the URLs (and about as many of the cache keys) held. */
  private length = 0;

  get(proxy: EdgeProxy, request: CacheLookup & { url: string }): HitRoute {
    const known = this.routes.get(request.url);
    if (known !== undefined && known.proxy === proxy) return known;
    const route = answerableRoute(proxy, request);
    if (request.url.length <= MAX_HIT_ROUTE_URL_LENGTH) {
      this.length += request.url.length;
      if (this.length > MAX_HIT_ROUTES_LENGTH) {
        this.routes.clear();
        this.length = request.url.length;
      }
      this.routes.set(request.url, route);
    }
    return route;
  }

  clear(): void {
    this.routes.clear();
    this.length = 0;
  }
}

/** A stored response as the answer to `request`, with its age, freshness and how the cache took part. */
export function answerFromEntry(entry: CachedResponse, request: CacheLookup, status: CacheStatus): EdgeResponse {
  const now = Date.now();
  const maxAge = status === 'STALE' ? 0 : Math.max(0, Math.ceil((entry.freshUntil - now) / 1000));
  const encoding =
    entry.encoded === undefined ? null : preferredEncoding(request.headers['accept-encoding'], entry.encoded);
  const headers: HeaderMap = {
    ...(encoding === null ? entry.headers : encodedHeaders(entry.headers, encoding)),
    age: String(Math.floor((now - entry.storedAt) / 1000) + entry.initialAgeSeconds),
    'cache-control': `${entry.visibility}, max-age=${maxAge}`,
    'x-cache': status,
  };
  if (entry.status === 200 && isNotModified(request.headers, validators(headers))) {
    return { status: 304, headers: notModifiedHeaders(headers) };
  }
  return { status: entry.status, headers, body: encoding === null ? entry.body : entry.encoded![encoding] };
}

export const validators = (headers: IncomingHttpHeaders | HeaderMap) => ({
  etag: headerValue(headers.etag),
  lastModified: headerValue(headers['last-modified']),
});

export function notModifiedHeaders(headers: HeaderMap): HeaderMap {
  const kept: HeaderMap = {};
  for (const name of [...NOT_MODIFIED_HEADERS, 'age', 'x-cache'])
    if (headers[name] !== undefined) kept[name] = headers[name]!;
  return kept;
}

/** A header map as the flat list of names and values `writeHead` takes. */
export function flatHeaders(headers: HeaderMap): string[] {
  const flat: string[] = [];
  for (const name in headers) {
    const value = headers[name]!;
    if (Array.isArray(value)) for (const one of value) flat.push(name, one);
    else flat.push(name, value);
  }
  return flat;
}

/**
 * The headers of a fresh hit on `entry` at `now`, ending with its length: made once per second of
 * age (Age and max-age are whole seconds) and kept on the entry, so a hit copies a list and no more.
 */
export function preparedHitHeaders(entry: CachedResponse, now: number, encoding: Encoding | null): string[] {
  const age = Math.floor((now - entry.storedAt) / 1000) + entry.initialAgeSeconds;
  const maxAge = Math.max(0, Math.ceil((entry.freshUntil - now) / 1000));
  const form = encoding ?? 'identity';
  const prepared = entry.prepared?.[form];
  if (prepared !== undefined && prepared.age === age && prepared.maxAge === maxAge) return prepared.headers.slice();
  const body = encoding === null ? entry.body : entry.encoded![encoding]!;
  const headers = flatHeaders(encoding === null ? entry.headers : encodedHeaders(entry.headers, encoding));
  headers.push(
    'age',
    String(age),
    'cache-control',
    `${entry.visibility}, max-age=${maxAge}`,
    'x-cache',
    'HIT',
    'content-length',
    String(body.length),
  );
  entry.prepared = { ...entry.prepared, [form]: { age, maxAge, headers } };
  return headers.slice();
}
