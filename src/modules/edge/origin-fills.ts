/**
 * The data plane's way to the origin: requests passed through, and cacheable URLs fetched once
 * however many ask at the same time, stored (compressed when the route says so) and revalidated.
 */
import type { IncomingHttpHeaders, IncomingMessage } from 'node:http';
import { pipeline, Transform } from 'node:stream';
import type { EdgeConfig } from '../../kernel/config';
import { AppError } from '../../kernel/errors';
import type { TrafficLog } from './analytics/traffic-log';
import { ageSeconds, FAILURE_STATUSES, freshnessSeconds, isNotModified, revalidationSeconds } from './cache-policy';
import { withVary } from './cache-key';
import { responseTags, TAG_HEADERS } from './cache-tags';
import { answerFromEntry, notModifiedHeaders, validators, varyMatches } from './cached-answers';
import { compressBody, compressibleHeaders, compressionEnabled, minBytesOf } from './compression';
import { NOTHING_OMITTED, type CachePurge, type EdgeResponse, type Resolved } from './edge.types';
import {
  CONDITIONAL_HEADERS,
  endToEndHeaders,
  headerTokens,
  headerValue,
  originRequestHeaders,
  type HeaderMap,
} from './headers';
import { requestOrigin } from './origin-client';
import type { CachedResponse, ResponseCache } from './response-cache';

/** How long after its freshness an entry with a validator is kept for a conditional request (unless evicted). */
const KEPT_FOR_REVALIDATION_MS = 24 * 3600 * 1000;

/** What concurrent requests for one uncached URL get from the one request that went to the origin. */
type FillOutcome =
  { kind: 'entry'; entry: CachedResponse; stale: boolean } | { kind: 'pass' } | { kind: 'error'; error: unknown };

export class OriginFills {
  private readonly fills = new Map<string, Promise<FillOutcome>>();

  constructor(
    private readonly deps: {
      cache: ResponseCache;
      config: EdgeConfig;
      traffic: TrafficLog;
      /** How many purges there have been: a fill that started before a purge does not store its result. */
      purges: () => number;
      /** Purges in this process and announces it to the others. */
      purgeEverywhere: (purge: CachePurge) => Promise<void>;
      logError: (error: unknown, what: string) => void;
    },
  ) {}

  /**
   * Streams a request of one of PASSED_METHODS to the origin and its answer back. A success
   * (below 400) of an unsafe one purges `invalidate`: the stored responses of the same path.
   */
  async forward(resolved: Resolved, invalidate: { key: string; path: string } | null): Promise<EdgeResponse> {
    const response = await this.requestOrigin(resolved, NOTHING_OMITTED);
    if (invalidate && (response.statusCode ?? 500) < 400) {
      // The query string is the part of the cache key after the path. The origin has carried the
      // request out: a failed announcement leaves the others' copies to expire, never the client without its answer.
      await this.deps
        .purgeEverywhere({ key: invalidate.key, path: `${invalidate.path}?` })
        .catch((error: unknown) =>
          this.deps.logError(error, 'a cache invalidation was not announced to the other processes'),
        );
    }
    return this.relay(resolved, response, 0, false, () => {});
  }

  /** Sends the request to the origin without storing the answer; a failure falls back to `stale`. */
  async pass(resolved: Resolved, stale?: CachedResponse): Promise<EdgeResponse> {
    let response: IncomingMessage;
    try {
      response = await this.requestOrigin(resolved, NOTHING_OMITTED);
    } catch (error) {
      if (servableOnError(stale)) return answerFromEntry(stale, resolved.request, 'STALE');
      throw error;
    }
    if (servableOnError(stale) && FAILURE_STATUSES.has(response.statusCode ?? 0)) {
      response.destroy();
      return answerFromEntry(stale, resolved.request, 'STALE');
    }
    return this.relay(resolved, response, 0, false, () => {});
  }

  /**
   * Fetches a cacheable URL once however many requests ask for it at the same time: the first
   * goes to the origin and stores the answer, the others wait for it and are served from the
   * cache (or go to the origin themselves when the answer could not be stored).
   */
  async fill(resolved: Resolved, stale: CachedResponse | undefined): Promise<EdgeResponse> {
    const { cacheKey, request } = resolved;
    const running = this.fills.get(cacheKey);
    if (running) {
      const outcome = await running;
      if (outcome.kind === 'error') throw outcome.error;
      if (outcome.kind === 'entry' && varyMatches(outcome.entry, request.headers)) {
        return answerFromEntry(outcome.entry, request, outcome.stale ? 'STALE' : 'HIT');
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
      return answerFromEntry(entry, request, 'STALE');
    };

    // Whatever goes wrong, the requests waiting on this one must not wait forever (finish is idempotent).
    try {
      const purgesBefore = this.deps.purges();
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
        if (ttl > 0 && this.deps.purges() === purgesBefore) {
          this.deps.cache.set(cacheKey, renewed);
          finish({ kind: 'entry', entry: renewed, stale: false });
        } else {
          this.deps.cache.delete(cacheKey);
          finish({ kind: 'pass' });
        }
        return answerFromEntry(renewed, request, 'REVALIDATED');
      }
      const ttl = freshnessSeconds(resolved.cache, status, response.headers, now);
      const length = contentLength(response.headers);
      if (ttl <= 0 || (length !== undefined && !this.deps.cache.accepts(length))) {
        finish({ kind: 'pass' });
        return this.relay(resolved, response, 0, true, () => {});
      }
      return this.relay(resolved, response, ttl, true, (body) => {
        if (body === null || this.deps.purges() !== purgesBefore) return finish({ kind: 'pass' });
        const entry = this.entryFor(resolved, status, response.headers, body, now, ttl);
        if (!this.compresses(resolved, response.headers, body.length)) {
          this.deps.cache.set(cacheKey, entry);
          return finish({ kind: 'entry', entry, stale: false });
        }
        // Compressed once, before it is stored; the requests waiting meanwhile are served from it too.
        // A compression that fails leaves the response stored as it came: the origin's answer is still good.
        compressBody(body)
          .catch((error: unknown) => {
            this.deps.logError(error, 'a response was stored without its compressed forms');
            return undefined;
          })
          .then((encoded) => {
            if (this.deps.purges() !== purgesBefore) return finish({ kind: 'pass' });
            entry.encoded = encoded;
            this.deps.cache.set(cacheKey, entry);
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
    const staleIfErrorUntil = freshUntil + this.deps.config.staleIfErrorSeconds * 1000;
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
  revalidateInBackground(resolved: Resolved, entry: CachedResponse): void {
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
      body: request.body && { stream: request.body, maxBytes: this.deps.config.maxRequestBytes },
      timeoutMs: this.deps.config.originTimeoutMs,
      allowPrivateOrigins: this.deps.config.allowPrivateOrigins,
    }).then(
      (response) => {
        if ((response.statusCode ?? 0) >= 500) this.deps.traffic.originError(tenantId, key);
        return response;
      },
      (error: unknown) => {
        this.deps.traffic.originError(tenantId, key);
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
    const limit = this.deps.config.maxResponseBytes;
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
      this.deps.traffic.fromOrigin(resolved.proxy.tenantId, resolved.proxy.key, length, resolved.background !== true);
      return { status, headers, body: response };
    }

    let collected: Buffer[] | null = ttl > 0 ? [] : null;
    let seen = 0;
    const cache = this.deps.cache;
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
      this.deps.traffic.fromOrigin(resolved.proxy.tenantId, resolved.proxy.key, seen, resolved.background !== true);
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

/** Origin response headers meant for this cache only. */
const NOT_FOR_CLIENTS: ReadonlySet<string> = new Set(TAG_HEADERS);

const NOT_STORED = new Set([...NOT_FOR_CLIENTS, 'content-length', 'age', 'cache-control', 'set-cookie', 'x-cache']);

/** The origin's headers as stored: recomputed ones (length, age, cache-control) are set when serving. */
function storedHeaders(headers: IncomingHttpHeaders): HeaderMap {
  return endToEndHeaders(headers, NOT_STORED);
}
