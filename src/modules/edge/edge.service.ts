import { randomUUID } from 'node:crypto';
import type { IncomingHttpHeaders, IncomingMessage } from 'node:http';
import { pipeline, Transform, type Readable } from 'node:stream';
import { LRUCache } from 'lru-cache';
import { z } from 'zod';
import type { EdgeConfig } from '../../kernel/config';
import { MAX_PAYLOAD_BYTES, notify } from '../../kernel/database-notifications';
import type { Db } from '../../kernel/db';
import { AppError, notFound } from '../../kernel/errors';
import type { Authenticator } from '../auth/authenticator';
import { hasScope, insufficientScope, requireScope, type Principal, type Scope } from '../auth/scopes';
import { PROXY_KEY_PATTERN } from '../proxies/proxies.schemas';
import {
  ageSeconds,
  FAILURE_STATUSES,
  freshnessSeconds,
  isNotModified,
  NOT_MODIFIED_HEADERS,
  revalidationSeconds,
  usesCache,
} from './cache-policy';
import { keyedQuery, keyRuleOf, keySuffix, withVary, type KeyRule } from './cache-key';
import {
  compressBody,
  compressibleHeaders,
  compressionEnabled,
  encodedHeaders,
  minBytesOf,
  preferredEncoding,
  type Encoding,
} from './compression';
import { responseTags, TAG_HEADERS } from './cache-tags';
import { TrafficLog } from './analytics/traffic-log';
import * as repository from './edge.repository';
import { formatKey, ImageVariants, listedVariantKey } from './image-variants';
import { asksForTransform } from './images';
import {
  CONDITIONAL_HEADERS,
  endToEndHeaders,
  headerTokens,
  headerValue,
  originRequestHeaders,
  type ClientView,
  type HeaderMap,
} from './headers';
import { requestOrigin } from './origin-client';
import { ResponseCache, type CachedResponse } from './response-cache';
import {
  matchRoute,
  normalizePath,
  originUrl,
  withoutQueryParameters,
  type EdgeAuthSettings,
  type EdgeCacheSettings,
  type EdgeRoute,
} from './routing';
import { EXPIRES_PARAMETER, SIGNATURE_PARAMETER, signatureParameters, verifySignature } from './signature';

/** A proxy as the data plane reads it. */
export interface EdgeProxy {
  key: string;
  tenantId: string;
  routes: EdgeRoute[];
  signature: { secret: string | null; cache: EdgeCacheSettings; auth: EdgeAuthSettings };
  oauth: {
    issuer: string | null;
    client_id: string | null;
    authorize_url: string | null;
    return_url_key: string | null;
  };
  isActive: boolean;
  isSuspended: boolean;
  /** The writing transaction of the row this was read from (see `forgetProxy`). */
  version: string;
}

/** A request for a proxy, as the HTTP layer hands it over. */
export interface EdgeRequest extends ClientView {
  key: string;
  /** GET, HEAD, or one of PASSED_METHODS. */
  method: string;
  /** The request body as it arrives, for the methods that pass through. */
  body?: Readable;
  /** The proxy-relative path as sent (percent-encoded), starting with '/'. */
  path: string;
  /** The raw query string without '?', possibly ''. */
  query: string;
  headers: IncomingHttpHeaders;
  /** The URL the client asked for, for sending browsers back to it after login. */
  originalUrl: string;
}

/** What `answerFromCache` needs of a request. */
export type CacheLookup = Pick<EdgeRequest, 'key' | 'method' | 'path' | 'query' | 'headers'>;

/** A cached hit as the raw server writes it: headers as a flat list of names and values. */
export interface CachedAnswer {
  status: number;
  headers: string[];
  body: Buffer | undefined;
}

/**
 * See `EdgeService.hitRoute`; `cacheKey` null: the route's hits need more than the cache. The
 * key rule adds the request's headers and cookies to `cacheKey` per request.
 */
interface HitRoute {
  proxy: EdgeProxy;
  cacheKey: string | null;
  rule: KeyRule | null;
  /** For an image variant: `cacheKey` ends before its format, this one or (null, `auto`) the client's. */
  imageFormat?: string | null;
}
/** Bounds of `hitRoutes`: at most about 2 × 4 Mi characters of URLs and cache keys; longer URLs are not kept. */
const MAX_HIT_ROUTES_LENGTH = 4 * 1024 * 1024;
const MAX_HIT_ROUTE_URL_LENGTH = 2048;

/** REVALIDATED: the origin confirmed the stored response (304) and it was served from the cache. */
export type CacheStatus = 'HIT' | 'MISS' | 'STALE' | 'REVALIDATED';

export interface EdgeResponse {
  status: number;
  headers: HeaderMap;
  /** A cached body, or the origin's body streaming through; absent for 304 and redirects. */
  body?: Buffer | Readable;
}

/** No request header left out beyond the usual ones (one list, so the headers module can remember it). */
const NOTHING_OMITTED: readonly string[] = [];

const ACCEPT_ENCODING: readonly string[] = ['accept-encoding'];

/** Methods that go to the origin as they are, streamed both ways and never stored. */
export const PASSED_METHODS = ['POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'];

/** Methods whose success makes the stored GET of the same URL stale (RFC 9111 section 4.4). */
const UNSAFE_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/** How long after its freshness an entry with a validator is kept for a conditional request (unless evicted). */
const KEPT_FOR_REVALIDATION_MS = 24 * 3600 * 1000;

/** Channels of the database notifications the data plane follows. */
export const EDGE_PURGE_CHANNEL = 'edge_purge';
export const PROXY_CHANGED_CHANNEL = 'proxy_changed';

/**
 * A purge as announced to every process: the proxy, and optionally a normalised path prefix and
 * tags; a soft one marks the entries stale instead of removing them.
 */
export interface CachePurge {
  key: string;
  path?: string;
  tags?: string[];
  soft?: boolean;
}

/**
 * How long a softly purged entry is served at least (X-Cache: STALE) while one request fetches it
 * again, unless its own stale-while-revalidate window is longer.
 */
export const SOFT_PURGE_STALE_MS = 60_000;

/** A purge notification's payload: the purge and the process that made it. */
const purgeSchema = z.object({
  key: z.string(),
  path: z.string().optional(),
  tags: z.array(z.string()).optional(),
  soft: z.boolean().optional(),
  from: z.string(),
});

/**
 * How long a proxy's configuration is used without reading it again: changes reach every process
 * through the database's notifications; this bounds how long a lost one goes unnoticed.
 */
export const PROXY_CONFIG_TTL_MS = 5_000;
const MAX_CONFIGS_CACHED = 10_000;

/** What concurrent requests for one uncached URL get from the one request that went to the origin. */
type FillOutcome =
  { kind: 'entry'; entry: CachedResponse; stale: boolean } | { kind: 'pass' } | { kind: 'error'; error: unknown };

interface Resolved {
  request: EdgeRequest;
  proxy: EdgeProxy;
  /** A refresh no client waits for: its body is not served. */
  background?: boolean;
  target: URL;
  cache: EdgeCacheSettings;
  authRequired: boolean;
  visibility: 'public' | 'private';
  cacheKey: string;
  /** Request headers the cache key holds, for `Vary`. */
  keyVary: readonly string[];
  /** `keyVary` and Accept-Encoding, for responses the cache compresses. */
  compressionVary: readonly string[];
}

const nullCache: EdgeCacheSettings = { age: null, is_as_origin: null, is_public: null, stale_while_revalidate: null };
const nullAuth: EdgeAuthSettings = { is_required: null, scope: null };

/** Settings for signed requests: the signature block's, falling back field by field to the route's. */
const overlay = <T extends object>(over: T, under: T): T => {
  const result = { ...under } as Record<string, unknown>;
  for (const [name, value] of Object.entries(over)) if (value !== null && value !== undefined) result[name] = value;
  return result as T;
};

function toEdgeProxy(row: repository.ProxyVersionRow): EdgeProxy {
  const routes = (Array.isArray(row.routes) ? row.routes : [row.routes]) as unknown as EdgeRoute[];
  const auth = row.auth as { signature?: Partial<EdgeProxy['signature']> } | null;
  const oauth = (row.oauth ?? {}) as Partial<EdgeProxy['oauth']>;
  return {
    key: row.key,
    tenantId: row.tenantId,
    routes,
    signature: {
      secret: auth?.signature?.secret ?? null,
      cache: auth?.signature?.cache ?? nullCache,
      auth: auth?.signature?.auth ?? nullAuth,
    },
    oauth: {
      issuer: oauth.issuer ?? null,
      client_id: oauth.client_id ?? null,
      authorize_url: oauth.authorize_url ?? null,
      return_url_key: oauth.return_url_key ?? null,
    },
    isActive: row.isActive,
    isSuspended: row.isSuspended,
    version: row.version,
  };
}

/** The cache key prefix of a proxy's entries; a path prefix narrows it. */
const cacheKeyPrefix = (proxyKey: string, pathPrefix = '') => `${proxyKey}\n${pathPrefix}`;

/** See `EdgeService.hitRoute`. */
function answerableRoute(proxy: EdgeProxy, request: CacheLookup): HitRoute {
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
function varyMatches(entry: CachedResponse, headers: IncomingHttpHeaders): boolean {
  const varyOn = entry.varyOn;
  for (const name in varyOn) if ((headerValue(headers[name]) ?? '') !== varyOn[name]) return false;
  return true;
}

/**
 * The edge data plane: answers GET and HEAD for a proxy key from its routes, through a response
 * cache in front of the origins, with signed wildcard URLs and bearer authentication.
 */
/** How the cache took part in the data plane's answers, since the start (read by the metrics). */
export class EdgeCacheStats {
  readonly responses: Record<CacheStatus, number> = { HIT: 0, MISS: 0, STALE: 0, REVALIDATED: 0 };
  /** Body bytes answered from the cache (HIT, STALE and REVALIDATED). */
  cachedBytes = 0;

  record(status: string, body: unknown) {
    const key = status in this.responses ? (status as CacheStatus) : 'MISS';
    this.responses[key] += 1;
    if (key !== 'MISS' && Buffer.isBuffer(body)) this.cachedBytes += body.length;
  }
}

export class EdgeService {
  readonly stats = new EdgeCacheStats();
  /** Traffic per proxy, for its analytics and metrics. */
  readonly traffic: TrafficLog;
  private readonly images: ImageVariants;
  /** Tells this process's purge notifications from those of the others. */
  private readonly instanceId = randomUUID();
  private readonly configs = new LRUCache<string, Promise<EdgeProxy | null>>({
    max: MAX_CONFIGS_CACHED,
    ttl: PROXY_CONFIG_TTL_MS,
  });
  /** The configurations `configs` has read, for answering cached hits without waiting. */
  private readonly loaded = new LRUCache<string, EdgeProxy>({
    max: MAX_CONFIGS_CACHED,
    ttl: PROXY_CONFIG_TTL_MS,
  });
  private readonly cache: ResponseCache;
  /** Per data-plane URL, the cache key its hits are under (see `hitRoute`). */
  private readonly hitRoutes = new Map<string, HitRoute>();
  /** Characters of the URLs (and about as many of the cache keys) `hitRoutes` holds. */
  private hitRoutesLength = 0;
  private readonly fills = new Map<string, Promise<FillOutcome>>();
  /** Bumped by every purge, so that a fill that started before a purge does not store its result. */
  private purges = 0;

  constructor(
    private readonly db: Db,
    private readonly authenticator: Authenticator,
    private readonly config: EdgeConfig,
    /** Reports a failure no client sees, with what it left undone. */
    private readonly logError: (error: unknown, what: string) => void = () => {},
  ) {
    this.cache = new ResponseCache(config.cacheMaxBytes);
    this.traffic = new TrafficLog(db, (error) => logError(error, 'traffic counts were not stored'));
    this.images = new ImageVariants({
      cache: this.cache,
      purges: () => this.purges,
      source: (request) => this.answer(request),
      sourceEntry: (request) => this.cachedEntryOf(request),
      fromCache: (entry, request, status) => this.fromCache(entry, request, status),
    });
  }

  /** The stored entry a GET of `request` is answered from, if any (the route's key rule applied). */
  private cachedEntryOf(request: EdgeRequest): CachedResponse | undefined {
    const proxy = this.loaded.get(request.key);
    if (!proxy) return undefined;
    const route = answerableRoute(proxy, request);
    if (route.cacheKey === null) return undefined;
    return this.cache.get(route.cacheKey + keySuffix(request.headers, route.rule), Date.now());
  }

  /** Bytes this process's response cache holds. */
  get cachedBytes(): number {
    return this.cache.size;
  }

  /**
   * Drops this process's copy of a proxy's configuration and cached responses, after it changed.
   * A change announced with the `version` this process has already read (it made the change, and
   * served the new configuration before the announcement came back) changes nothing here.
   */
  forgetProxy(key: string, version?: string): void {
    if (version !== undefined && this.loaded.peek(key)?.version === version) return;
    this.configs.delete(key);
    this.loaded.delete(key);
    this.applyPurge({ key });
  }

  /** Drops every configuration and cached response of this process, when changes may have been missed. */
  forgetEverything(): void {
    this.configs.clear();
    this.loaded.clear();
    this.hitRoutes.clear();
    this.hitRoutesLength = 0;
    this.purges += 1;
    this.cache.clear();
  }

  /**
   * Purges the cached responses of a tenant's proxy in every process: all of them, or those whose
   * path starts with `purge.path` and (or) that carry one of `purge.tags`. This process is purged
   * before the call returns, the others when the database's notification reaches them.
   */
  async purgeCache(
    principal: Principal,
    key: string,
    purge: { path?: string; tags?: string[]; soft?: boolean },
  ): Promise<void> {
    requireScope(principal, 'proxies:write');
    if (!(await repository.tenantHoldsProxy(this.db, principal.tenantId, key)))
      throw notFound(`no proxy with key "${key}"`);
    // Cache keys hold normalised paths (dot segments resolved, characters percent-encoded).
    const path = purge.path === undefined ? undefined : (normalizePath(purge.path) ?? purge.path);
    await this.purgeEverywhere({ key, path, tags: purge.tags, ...(purge.soft ? { soft: true } : {}) });
  }

  /** Purges this process's cache, then announces the purge to the others. */
  private async purgeEverywhere(purge: CachePurge): Promise<void> {
    this.applyPurge(purge);
    const payload = JSON.stringify({ ...purge, from: this.instanceId });
    // A purge too long for a notification purges the whole proxy elsewhere: more than asked, never less.
    await notify(
      this.db,
      EDGE_PURGE_CHANNEL,
      Buffer.byteLength(payload) <= MAX_PAYLOAD_BYTES
        ? payload
        : JSON.stringify({ key: purge.key, soft: purge.soft, from: this.instanceId }),
    );
  }

  /** Applies a purge announced by any process; this process's own were applied when made. */
  receivePurge(payload: string): void {
    const { from, ...purge } = purgeSchema.parse(JSON.parse(payload));
    // Applied again when it arrives, the purge would also drop what was stored since.
    if (from !== this.instanceId) this.applyPurge(purge);
  }

  private applyPurge(purge: CachePurge): void {
    // A fill under way was fetched before the purge: it must not be stored as fresh after it.
    this.purges += 1;
    const prefix = cacheKeyPrefix(purge.key, purge.path);
    const tags = purge.tags === undefined ? undefined : new Set(purge.tags);
    if (purge.soft === true) this.cache.expireByPrefix(prefix, Date.now(), SOFT_PURGE_STALE_MS, tags);
    else this.cache.deleteByPrefix(prefix, tags);
  }

  /** Answers a request for a proxy. Expected failures are AppErrors (404, 403, 401, 502, 504). */
  async serve(request: EdgeRequest): Promise<EdgeResponse> {
    let answer: EdgeResponse | undefined;
    try {
      answer = await this.answer(request);
      return answer;
    } finally {
      // Only a proxy that was found counts; a streamed body counts as it arrives from the origin.
      const proxy = this.loaded.get(request.key);
      if (proxy !== undefined) {
        const result = (answer?.headers['x-cache'] ?? 'MISS') as CacheStatus;
        const bytes = Buffer.isBuffer(answer?.body) ? answer.body.length : 0;
        this.traffic.answered(proxy.tenantId, proxy.key, result, request.method === 'HEAD' ? 0 : bytes);
      }
    }
  }

  private async answer(request: EdgeRequest): Promise<EdgeResponse> {
    const proxy = await this.proxy(request.key);
    if (!proxy || !proxy.isActive) throw notFound(`no active proxy with key "${request.key}"`);
    if (proxy.isSuspended) throw new AppError('FORBIDDEN', `the proxy "${proxy.key}" is suspended`);
    const path = normalizePath(request.path);
    if (path === null) throw notFound('the path is not a valid path');
    const match = matchRoute(proxy.routes, path);
    if (!match) throw notFound(`no route of proxy "${proxy.key}" matches ${path}`);

    let cache = match.route.settings.cache;
    let auth = match.route.settings.auth;
    let query = request.query;
    if (match.isWildcard && proxy.signature.secret !== null) {
      const { expires, signature } = signatureParameters(query);
      const verdict = verifySignature(proxy.signature.secret, path, expires, signature, Math.floor(Date.now() / 1000));
      if (!verdict.ok) throw new AppError('EDGE_SIGNATURE_INVALID', verdict.reason);
      cache = overlay(proxy.signature.cache, cache);
      auth = overlay(proxy.signature.auth, auth);
      // The signature authorises the request; the origin and the cache key do without it.
      query = withoutQueryParameters(query, [EXPIRES_PARAMETER, SIGNATURE_PARAMETER]);
    }
    const authRequired = auth.is_required === true;
    if (authRequired) {
      const redirect = await this.authorize(proxy, auth, request);
      if (redirect) return redirect;
    }

    const rule = keyRuleOf(cache.key);
    const keyed = keyedQuery(query, rule);
    const resolved: Resolved = {
      request,
      proxy,
      target: originUrl(match.route.origin.uri, match.rest, rule?.keyedOrigin ? keyed : query),
      cache,
      authRequired,
      visibility: cache.is_public === true && !authRequired ? 'public' : 'private',
      cacheKey: `${cacheKeyPrefix(proxy.key, path)}?${keyed}${keySuffix(request.headers, rule)}`,
      keyVary: rule?.vary ?? NOTHING_OMITTED,
      compressionVary: rule === null ? ACCEPT_ENCODING : [...rule.vary, ...ACCEPT_ENCODING],
    };
    const caching = usesCache(cache) && this.config.cacheMaxBytes > 0;
    const image = match.route.settings.image;
    if (
      image?.is_enabled === true &&
      (request.method === 'GET' || request.method === 'HEAD') &&
      asksForTransform(query)
    ) {
      return this.images.serve(request, query, {
        settings: image,
        keyPrefix: cacheKeyPrefix(proxy.key, path),
        path,
        secret: proxy.signature.secret,
        age: caching ? (cache.age ?? 0) : 0,
        visibility: resolved.visibility,
      });
    }
    if (request.method !== 'GET' && request.method !== 'HEAD') {
      // Every query variant of the path is invalidated, in every process when any could hold one.
      return this.forward(resolved, UNSAFE_METHODS.has(request.method) && caching ? { key: proxy.key, path } : null);
    }
    if (!caching) return this.pass(resolved);
    const now = Date.now();
    const cached = this.cache.get(resolved.cacheKey, now);
    const entry = cached && varyMatches(cached, request.headers) ? cached : undefined;
    if (entry && entry.freshUntil > now) return this.fromCache(entry, request, 'HIT');
    if (entry && entry.revalidateUntil > now && request.headers.range === undefined) {
      this.revalidateInBackground(resolved, entry);
      return this.fromCache(entry, request, 'STALE');
    }
    // HEAD has no body to store, and a range is a part of one: both go to the origin as they are.
    if (request.method === 'HEAD' || request.headers.range !== undefined) return this.pass(resolved, entry);
    return this.fill(resolved, entry);
  }

  /** The proxy's configuration, read at most once per PROXY_CONFIG_TTL_MS however many requests ask at once. */
  private proxy(key: string): Promise<EdgeProxy | null> {
    if (!PROXY_KEY_PATTERN.test(key)) return Promise.resolve(null);
    const known = this.configs.get(key);
    if (known) return known;
    const proxy = repository.findProxyByKey(this.db, key).then((row) => (row ? toEdgeProxy(row) : null));
    this.configs.set(key, proxy);
    proxy.then(
      // Unless the proxy was forgotten while it was read.
      (loaded) => loaded && this.configs.peek(key) === proxy && this.loaded.set(key, loaded),
      () => this.configs.peek(key) === proxy && this.configs.delete(key),
    );
    return proxy;
  }

  /**
   * Answers a fresh cached hit at once, without the database, or null when the request needs
   * anything more (an unknown or changed proxy, a signature, a token, a range, a miss): then
   * `serve` answers it. Called before the HTTP framework sees the request; `url` is the raw
   * data-plane URL (`/edge/{key}/{path}?{query}`).
   */
  answerFromCache(request: CacheLookup & { url: string }): CachedAnswer | null {
    if ((request.method !== 'GET' && request.method !== 'HEAD') || request.headers.range !== undefined) return null;
    const proxy = this.loaded.get(request.key);
    if (!proxy) return null;
    const route = this.hitRoute(proxy, request);
    if (route.cacheKey === null) return null;
    const now = Date.now();
    const cacheKey =
      route.imageFormat !== undefined
        ? route.cacheKey + (route.imageFormat ?? formatKey({ format: 'auto' }, request.headers.accept))
        : route.rule === null
          ? route.cacheKey
          : route.cacheKey + keySuffix(request.headers, route.rule);
    const entry = this.cache.get(cacheKey, now);
    if (!entry || entry.freshUntil <= now || !varyMatches(entry, request.headers)) return null;
    const { headers } = request;
    if (headers['if-none-match'] === undefined && headers['if-modified-since'] === undefined) {
      const encoding =
        entry.encoded === undefined ? null : preferredEncoding(headers['accept-encoding'], entry.encoded);
      const body = encoding === null ? entry.body : entry.encoded![encoding]!;
      this.traffic.answered(proxy.tenantId, proxy.key, 'HIT', request.method === 'HEAD' ? 0 : body.length, now);
      return { status: entry.status, headers: preparedHitHeaders(entry, now, encoding), body };
    }
    const answer = this.fromCache(entry, request, 'HIT');
    const sent = Buffer.isBuffer(answer.body) && request.method !== 'HEAD' ? answer.body.length : 0;
    this.traffic.answered(proxy.tenantId, proxy.key, 'HIT', sent, now);
    return { status: answer.status, headers: flatHeaders(answer.headers), body: answer.body as Buffer | undefined };
  }

  /**
   * The route of a URL for answering its hits, worked out once per URL and proxy configuration:
   * the cache key (less the request's headers and cookies, which the key rule adds) of a URL whose
   * route the cache answers without anything more, null when the route needs a signature or a
   * token, or is not cached. A plain map cleared when full, not an LRU: this is on every cached hit, and a lookup
   * costs a fraction of lru-cache's get; a cleared map only costs recomputing.
   */
  private hitRoute(proxy: EdgeProxy, request: CacheLookup & { url: string }): HitRoute {
    const known = this.hitRoutes.get(request.url);
    if (known !== undefined && known.proxy === proxy) return known;
    const route = answerableRoute(proxy, request);
    if (request.url.length <= MAX_HIT_ROUTE_URL_LENGTH) {
      this.hitRoutesLength += request.url.length;
      if (this.hitRoutesLength > MAX_HIT_ROUTES_LENGTH) {
        this.hitRoutes.clear();
        this.hitRoutesLength = request.url.length;
      }
      this.hitRoutes.set(request.url, route);
    }
    return route;
  }

  /**
   * Checks the bearer token of a route that needs one: a credential of the proxy's tenant with the
   * route's scope. A browser without a token is sent to the proxy's login page when it has one.
   */
  private async authorize(
    proxy: EdgeProxy,
    auth: EdgeAuthSettings,
    request: EdgeRequest,
  ): Promise<EdgeResponse | null> {
    const header = headerValue(request.headers.authorization);
    if (header === undefined) {
      const login = proxy.oauth.authorize_url;
      if (login !== null && headerTokens(request.headers.accept).some((type) => type.startsWith('text/html'))) {
        const location = new URL(login);
        location.searchParams.set(
          proxy.oauth.return_url_key ?? 'return_url',
          `${request.protocol}://${request.host}${request.originalUrl}`,
        );
        return { status: 302, headers: { location: location.href, 'cache-control': 'no-store', 'x-cache': 'MISS' } };
      }
      throw new AppError('UNAUTHORIZED', 'this route needs a bearer token');
    }
    const principal = await this.authenticator.authenticate(header);
    if (principal.tenantId !== proxy.tenantId)
      throw new AppError('FORBIDDEN', 'the token belongs to another tenant than the proxy');
    if (auth.scope !== null && !hasScope(principal, auth.scope as Scope)) {
      throw insufficientScope(auth.scope, 'this route');
    }
    return null;
  }

  private fromCache(entry: CachedResponse, request: CacheLookup, status: CacheStatus): EdgeResponse {
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

  /**
   * Streams a request of one of PASSED_METHODS to the origin and its answer back. A success
   * (below 400) of an unsafe one purges `invalidate`: the stored responses of the same path.
   */
  private async forward(resolved: Resolved, invalidate: { key: string; path: string } | null): Promise<EdgeResponse> {
    const response = await this.requestOrigin(resolved, NOTHING_OMITTED);
    if (invalidate && (response.statusCode ?? 500) < 400) {
      // The query string is the part of the cache key after the path. The origin has carried the
      // request out: a failed announcement leaves the others' copies to expire, never the client without its answer.
      await this.purgeEverywhere({ key: invalidate.key, path: `${invalidate.path}?` }).catch((error: unknown) =>
        this.logError(error, 'a cache invalidation was not announced to the other processes'),
      );
    }
    return this.relay(resolved, response, 0, false, () => {});
  }

  /** Sends the request to the origin without storing the answer; a failure falls back to `stale`. */
  private async pass(resolved: Resolved, stale?: CachedResponse): Promise<EdgeResponse> {
    let response: IncomingMessage;
    try {
      response = await this.requestOrigin(resolved, NOTHING_OMITTED);
    } catch (error) {
      if (servableOnError(stale)) return this.fromCache(stale, resolved.request, 'STALE');
      throw error;
    }
    if (servableOnError(stale) && FAILURE_STATUSES.has(response.statusCode ?? 0)) {
      response.destroy();
      return this.fromCache(stale, resolved.request, 'STALE');
    }
    return this.relay(resolved, response, 0, false, () => {});
  }

  /**
   * Fetches a cacheable URL once however many requests ask for it at the same time: the first
   * goes to the origin and stores the answer, the others wait for it and are served from the
   * cache (or go to the origin themselves when the answer could not be stored).
   */
  private async fill(resolved: Resolved, stale: CachedResponse | undefined): Promise<EdgeResponse> {
    const { cacheKey, request } = resolved;
    const running = this.fills.get(cacheKey);
    if (running) {
      const outcome = await running;
      if (outcome.kind === 'error') throw outcome.error;
      if (outcome.kind === 'entry' && varyMatches(outcome.entry, request.headers)) {
        return this.fromCache(outcome.entry, request, outcome.stale ? 'STALE' : 'HIT');
      }
      return this.pass(resolved, stale);
    }

    let settle!: (outcome: FillOutcome) => void;
    const fill = new Promise<FillOutcome>((resolve) => (settle = resolve));
    this.fills.set(cacheKey, fill);
    let settled = false;
    const finish = (outcome: FillOutcome) => {
      if (settled) return;
      settled = true;
      if (this.fills.get(cacheKey) === fill) this.fills.delete(cacheKey);
      settle(outcome);
    };
    const serveStale = (entry: CachedResponse) => {
      finish({ kind: 'entry', entry, stale: true });
      return this.fromCache(entry, request, 'STALE');
    };

    // Whatever goes wrong, the requests waiting on this one must not wait forever (finish is idempotent).
    try {
      const purgesBefore = this.purges;
      let response: IncomingMessage;
      try {
        // The cache needs the full response, whatever validators this client holds; with an
        // expired entry, the entry's validators let the origin answer 304 instead of the body.
        response = await this.requestOrigin(resolved, CONDITIONAL_HEADERS, stale ? revalidationHeaders(stale) : {});
      } catch (error) {
        if (servableOnError(stale)) return serveStale(stale);
        throw error;
      }
      const status = response.statusCode ?? 502;
      if (servableOnError(stale) && FAILURE_STATUSES.has(status)) {
        response.destroy();
        return serveStale(stale);
      }
      const now = Date.now();
      if (stale && status === 304) {
        // The stored body is still the origin's: only its headers and freshness are renewed (RFC 9111 section 4.3.4).
        response.resume();
        const headers = { ...stale.headers, ...response.headers };
        const ttl = freshnessSeconds(resolved.cache, stale.status, headers, now);
        const renewed = this.entryFor(resolved, stale.status, headers, stale.body, now, ttl);
        // The same body: its compressed forms still hold.
        if (stale.encoded !== undefined && renewed.headers.vary === stale.headers.vary) renewed.encoded = stale.encoded;
        if (ttl > 0 && this.purges === purgesBefore) {
          this.cache.set(cacheKey, renewed);
          finish({ kind: 'entry', entry: renewed, stale: false });
        } else {
          this.cache.delete(cacheKey);
          finish({ kind: 'pass' });
        }
        return this.fromCache(renewed, request, 'REVALIDATED');
      }
      const ttl = freshnessSeconds(resolved.cache, status, response.headers, now);
      const length = contentLength(response.headers);
      if (ttl <= 0 || (length !== undefined && !this.cache.accepts(length))) {
        finish({ kind: 'pass' });
        return this.relay(resolved, response, 0, true, () => {});
      }
      return this.relay(resolved, response, ttl, true, (body) => {
        if (body === null || this.purges !== purgesBefore) return finish({ kind: 'pass' });
        const entry = this.entryFor(resolved, status, response.headers, body, now, ttl);
        if (!this.compresses(resolved, response.headers, body.length)) {
          this.cache.set(cacheKey, entry);
          return finish({ kind: 'entry', entry, stale: false });
        }
        // Compressed once, before it is stored; the requests waiting meanwhile are served from it too.
        // A compression that fails leaves the response stored as it came: the origin's answer is still good.
        compressBody(body)
          .catch((error: unknown) => {
            this.logError(error, 'a response was stored without its compressed forms');
            return undefined;
          })
          .then((encoded) => {
            if (this.purges !== purgesBefore) return finish({ kind: 'pass' });
            entry.encoded = encoded;
            this.cache.set(cacheKey, entry);
            finish({ kind: 'entry', entry, stale: false });
          });
      });
    } catch (error) {
      finish({ kind: 'error', error });
      throw error;
    }
  }

  /** A stored response, fetched at `now` and fresh for `ttl` seconds. */
  private entryFor(
    resolved: Resolved,
    status: number,
    headers: IncomingHttpHeaders,
    body: Buffer,
    now: number,
    ttl: number,
  ): CachedResponse {
    const freshUntil = now + ttl * 1000;
    const revalidateUntil = freshUntil + revalidationSeconds(resolved.cache, headers) * 1000;
    const staleIfErrorUntil = freshUntil + this.config.staleIfErrorSeconds * 1000;
    // With a validator, an expired entry can still be confirmed by a 304 instead of fetched again.
    const keptFor = headers.etag !== undefined || headers['last-modified'] !== undefined ? KEPT_FOR_REVALIDATION_MS : 0;
    return {
      status,
      headers: withVary(
        storedHeaders(headers),
        this.compresses(resolved, headers, body.length) ? resolved.compressionVary : resolved.keyVary,
      ),
      body,
      storedAt: now,
      initialAgeSeconds: ageSeconds(headers),
      freshUntil,
      revalidateUntil,
      staleIfErrorUntil,
      staleUntil: Math.max(revalidateUntil, staleIfErrorUntil, freshUntil + keptFor),
      visibility: resolved.visibility,
      varyOn: Object.fromEntries(
        headerTokens(headers.vary).map((name) => [name, headerValue(resolved.request.headers[name]) ?? '']),
      ),
      tags: responseTags(headers),
    };
  }

  /**
   * Refreshes an entry within its stale-while-revalidate window without a client waiting: one
   * request to the origin per URL, however many are served the entry meanwhile.
   */
  private revalidateInBackground(resolved: Resolved, entry: CachedResponse): void {
    if (this.fills.has(resolved.cacheKey)) return;
    // The refresh fetches the body even when the request that noticed was a HEAD.
    const refresh = { ...resolved, background: true, request: { ...resolved.request, method: 'GET' } };
    this.fill(refresh, entry).then(
      (response) => {
        if (response.body && !Buffer.isBuffer(response.body)) response.body.resume();
      },
      // The entry stays as it is; the next request past the window goes to the origin itself.
      () => {},
    );
  }

  /** Whether the cache stores a compressed form of a response with these headers and body length. */
  private compresses(
    resolved: Resolved,
    headers: Record<string, string | string[] | undefined>,
    bodyLength: number,
  ): boolean {
    const settings = resolved.cache.compression;
    return compressionEnabled(settings) && bodyLength >= minBytesOf(settings) && compressibleHeaders(headers);
  }

  private requestOrigin(
    resolved: Resolved,
    omit: readonly string[],
    extra: Record<string, string> = {},
  ): Promise<IncomingMessage> {
    const { request } = resolved;
    const headers = originRequestHeaders(request.headers, request, omit, request.body !== undefined);
    for (const name in extra) headers[name] = extra[name];
    // A body of unknown length goes on chunked, whatever node:http would default to for the method.
    if (request.body && headers['content-length'] === undefined && request.headers['transfer-encoding'] !== undefined)
      headers['transfer-encoding'] = 'chunked';
    const { tenantId, key } = resolved.proxy;
    return requestOrigin({
      url: resolved.target,
      method: request.method,
      headers,
      body: request.body && { stream: request.body, maxBytes: this.config.maxRequestBytes },
      timeoutMs: this.config.originTimeoutMs,
      allowPrivateOrigins: this.config.allowPrivateOrigins,
    }).then(
      (response) => {
        if ((response.statusCode ?? 0) >= 500) this.traffic.originError(tenantId, key);
        return response;
      },
      (error: unknown) => {
        this.traffic.originError(tenantId, key);
        throw error;
      },
    );
  }

  /**
   * Streams the origin's response to the client. With `ttl` > 0 the body is also collected and
   * handed to `onBody` at its end (null when it could not be collected whole), and the client is
   * told how long it may keep the response. With `answerConditional`, the request's validators
   * were not sent to the origin, so a match is answered with 304 here.
   */
  private relay(
    resolved: Resolved,
    response: IncomingMessage,
    ttl: number,
    answerConditional: boolean,
    onBody: (body: Buffer | null) => void,
  ): EdgeResponse {
    const limit = this.config.maxResponseBytes;
    const length = contentLength(response.headers);
    if (length !== undefined && length > limit) {
      response.destroy();
      onBody(null);
      throw new AppError('BAD_GATEWAY', `the origin's response of ${length} bytes exceeds the limit of ${limit} bytes`);
    }
    const status = response.statusCode ?? 502;
    const vary =
      ttl > 0 && this.compresses(resolved, response.headers, length ?? Infinity)
        ? resolved.compressionVary
        : resolved.keyVary;
    const headers = withVary(endToEndHeaders(response.headers, NOT_FOR_CLIENTS), vary);
    headers.age = String(ageSeconds(response.headers));
    headers['x-cache'] = 'MISS';
    if (ttl > 0) {
      headers['cache-control'] = `${resolved.visibility}, max-age=${ttl}`;
    } else if (resolved.authRequired && !headerTokens(response.headers['cache-control']).includes('no-store')) {
      // An authenticated answer must not be kept by shared caches in front of this service.
      headers['cache-control'] = 'private, no-cache';
    }

    if (ttl === 0 && length !== undefined) {
      // Nothing to collect and a length within the limit: the origin's body streams on as it is.
      if (
        answerConditional &&
        status === 200 &&
        isNotModified(resolved.request.headers, validators(response.headers))
      ) {
        response.destroy();
        return { status: 304, headers: notModifiedHeaders(headers) };
      }
      this.traffic.fromOrigin(resolved.proxy.tenantId, resolved.proxy.key, length, resolved.background !== true);
      return { status, headers, body: response };
    }

    let collected: Buffer[] | null = ttl > 0 ? [] : null;
    let seen = 0;
    const cache = this.cache;
    const body = new Transform({
      transform(chunk: Buffer, _encoding, callback) {
        seen += chunk.length;
        if (seen > limit) return callback(new Error(`the origin's response exceeds the limit of ${limit} bytes`));
        if (collected !== null) {
          if (cache.accepts(seen)) collected.push(chunk);
          else {
            collected = null;
            onBody(null);
          }
        }
        callback(null, chunk);
      },
      flush(callback) {
        if (collected !== null) onBody(Buffer.concat(collected));
        collected = null;
        callback();
      },
    });
    pipeline(response, body, (error) => {
      this.traffic.fromOrigin(resolved.proxy.tenantId, resolved.proxy.key, seen, resolved.background !== true);
      if (error && collected !== null) {
        collected = null;
        onBody(null);
      }
    });

    if (answerConditional && status === 200 && isNotModified(resolved.request.headers, validators(response.headers))) {
      if (ttl > 0)
        body.resume(); // keep filling the cache without a reader
      else body.destroy();
      return { status: 304, headers: notModifiedHeaders(headers) };
    }
    return { status, headers, body };
  }
}

const contentLength = (headers: IncomingHttpHeaders): number | undefined => {
  const value = headers['content-length'];
  return value !== undefined && /^\d+$/.test(value) ? Number(value) : undefined;
};

/** Whether an expired entry may stand in for an origin that failed (RFC 5861 stale-if-error). */
const servableOnError = (entry: CachedResponse | undefined): entry is CachedResponse =>
  entry !== undefined && entry.staleIfErrorUntil > Date.now();

/** The validators of a stored response as conditional request headers for the origin. */
function revalidationHeaders(entry: CachedResponse): Record<string, string> {
  const { etag, lastModified } = validators(entry.headers);
  return {
    ...(etag === undefined ? {} : { 'if-none-match': etag }),
    ...(lastModified === undefined ? {} : { 'if-modified-since': lastModified }),
  };
}

const validators = (headers: IncomingHttpHeaders | HeaderMap) => ({
  etag: headerValue(headers.etag),
  lastModified: headerValue(headers['last-modified']),
});

/** Origin response headers meant for this cache only. */
const NOT_FOR_CLIENTS: ReadonlySet<string> = new Set(TAG_HEADERS);

const NOT_STORED = new Set([...NOT_FOR_CLIENTS, 'content-length', 'age', 'cache-control', 'set-cookie', 'x-cache']);

/** The origin's headers as stored: recomputed ones (length, age, cache-control) are set when serving. */
function storedHeaders(headers: IncomingHttpHeaders): HeaderMap {
  return endToEndHeaders(headers, NOT_STORED);
}

function notModifiedHeaders(headers: HeaderMap): HeaderMap {
  const kept: HeaderMap = {};
  for (const name of [...NOT_MODIFIED_HEADERS, 'age', 'x-cache'])
    if (headers[name] !== undefined) kept[name] = headers[name]!;
  return kept;
}

/** A header map as the flat list of names and values `writeHead` takes. */
function flatHeaders(headers: HeaderMap): string[] {
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
function preparedHitHeaders(entry: CachedResponse, now: number, encoding: Encoding | null): string[] {
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
