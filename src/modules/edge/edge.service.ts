import { randomUUID } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import { z } from 'zod';
import type { EdgeConfig } from '../../kernel/config';
import { MAX_PAYLOAD_BYTES, notify } from '../../kernel/database-notifications';
import type { Db } from '../../kernel/db';
import { AppError, notFound } from '../../kernel/errors';
import type { Authenticator } from '../auth';
import { requireScope } from '../../kernel/scopes';
import type { Principal } from '../../kernel/principal';
import * as proxies from '../proxies';
import { TrafficLog } from './analytics/traffic-log';
import { usesCache } from './cache-policy';
import { keyedQuery, keyRuleOf, keySuffix } from './cache-key';
import { EdgeCacheStats } from './cache-stats';
import {
  answerableRoute,
  answerFromEntry,
  cacheKeyPrefix,
  flatHeaders,
  HitRoutes,
  preparedHitHeaders,
  varyMatches,
} from './cached-answers';
import { preferredEncoding } from './compression';
import { overlay, toEdgeProxy, type EdgeProxy } from './edge-proxy';
import {
  ACCEPT_ENCODING,
  NOTHING_OMITTED,
  type CachedAnswer,
  type CacheLookup,
  type CachePurge,
  type CacheStatus,
  type EdgeRequest,
  type EdgeResponse,
  type Resolved,
} from './edge.types';
import { formatKey, ImageVariants } from './image-variants';
import { asksForTransform } from './images';
import { OriginFills } from './origin-fills';
import { ResponseCache, type CachedResponse } from './response-cache';
import { matchRoute, normalizePath, originUrl, withoutQueryParameters } from './routing';
import { authorizeRoute } from './route-auth';
import { EXPIRES_PARAMETER, SIGNATURE_PARAMETER, signatureParameters, verifySignature } from './signature';

/** Methods whose success makes the stored GET of the same URL stale (RFC 9111 section 4.4). */
const UNSAFE_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/** Channels of the database notifications the data plane follows. */
export const EDGE_PURGE_CHANNEL = 'edge_purge';
export const PROXY_CHANGED_CHANNEL = 'proxy_changed';

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

/**
 * The edge data plane: answers GET and HEAD for a proxy key from its routes, through a response
 * cache in front of the origins, with signed wildcard URLs and bearer authentication.
 */
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
  /** Per data-plane URL, the cache key its hits are under. */
  private readonly hitRoutes = new HitRoutes();
  private readonly origin: OriginFills;
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
      fromCache: answerFromEntry,
    });
    this.origin = new OriginFills({
      cache: this.cache,
      config,
      traffic: this.traffic,
      purges: () => this.purges,
      purgeEverywhere: (purge) => this.purgeEverywhere(purge),
      logError,
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
    if (!(await proxies.tenantHoldsProxy(this.db, principal.tenantId, key)))
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
      const redirect = await authorizeRoute(this.authenticator, proxy, auth, request);
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
      return this.origin.forward(
        resolved,
        UNSAFE_METHODS.has(request.method) && caching ? { key: proxy.key, path } : null,
      );
    }
    if (!caching) return this.origin.pass(resolved);
    const now = Date.now();
    const cached = this.cache.get(resolved.cacheKey, now);
    const entry = cached && varyMatches(cached, request.headers) ? cached : undefined;
    if (entry && entry.freshUntil > now) return answerFromEntry(entry, request, 'HIT');
    if (entry && entry.revalidateUntil > now && request.headers.range === undefined) {
      this.origin.revalidateInBackground(resolved, entry);
      return answerFromEntry(entry, request, 'STALE');
    }
    // HEAD has no body to store, and a range is a part of one: both go to the origin as they are.
    if (request.method === 'HEAD' || request.headers.range !== undefined) return this.origin.pass(resolved, entry);
    return this.origin.fill(resolved, entry);
  }

  /** The proxy's configuration, read at most once per PROXY_CONFIG_TTL_MS however many requests ask at once. */
  private proxy(key: string): Promise<EdgeProxy | null> {
    if (!proxies.PROXY_KEY_PATTERN.test(key)) return Promise.resolve(null);
    const known = this.configs.get(key);
    if (known) return known;
    const proxy = proxies.proxyVersionOfKey(this.db, key).then((row) => (row ? toEdgeProxy(row) : null));
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
    const route = this.hitRoutes.get(proxy, request);
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
    const answer = answerFromEntry(entry, request, 'HIT');
    const sent = Buffer.isBuffer(answer.body) && request.method !== 'HEAD' ? answer.body.length : 0;
    this.traffic.answered(proxy.tenantId, proxy.key, 'HIT', sent, now);
    return { status: answer.status, headers: flatHeaders(answer.headers), body: answer.body as Buffer | undefined };
  }
}
