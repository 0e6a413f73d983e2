/**
 * Requests per minute per credential (an API key, or an OAuth client with the tokens it obtained),
 * and per client address on public endpoints that write (search events), counted in PostgreSQL by
 * rate-limiter-flexible so that every process of a deployment shares the count. A tenant's own
 * limit overrides RATE_LIMIT_PER_MINUTE; without either, no credential is counted.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { LRUCache } from 'lru-cache';
import { RateLimiterPostgres, RateLimiterRes } from 'rate-limiter-flexible';
import { poolOf, type Db, type DbOrTx } from './db';
import { AppError } from './errors';
import type { Principal } from './principal';

declare module 'fastify' {
  interface FastifyRequest {
    /** The caller's window, once a limit applied to the request (for the RateLimit-* headers). */
    rateLimit?: RateLimitState;
  }
}

export const WINDOW_SECONDS = 60;
/** What rate-limiter-flexible puts before each key it stores (its default, named so the rows can be found). */
const KEY_PREFIX = 'rlflx';
/** How long a tenant's limit is trusted without asking the database again. */
const TENANT_LIMIT_TTL_MS = 5_000;

export interface RateLimitState {
  limit: number;
  remaining: number;
  /** Seconds until the window ends. */
  reset: number;
}

/** The credential a request counts against: an API key, or the OAuth client behind a token. */
const credentialOf = ({ tenantId, actor }: Principal) =>
  `${tenantId}:${actor.type === 'user' ? `oauth_client:${actor.clientId}` : `${actor.type}:${actor.id}`}`;

export class RateLimits {
  /** Made on the first request a limit applies to: a deployment without limits never touches the table. */
  private limiter: RateLimiterPostgres | undefined;
  private readonly tenantLimits: LRUCache<string, { limit: number | null }>;

  constructor(
    private readonly db: Db,
    private readonly defaultLimit: number | undefined,
    tenantLimit: (tenantId: string) => Promise<number | null>,
  ) {
    this.tenantLimits = new LRUCache({
      max: 10_000,
      ttl: TENANT_LIMIT_TTL_MS,
      fetchMethod: async (tenantId) => ({ limit: await tenantLimit(tenantId) }),
    });
  }

  /** One limiter for every limit: it counts, and each request is compared with its tenant's limit. */
  private counter() {
    this.limiter ??= new RateLimiterPostgres({
      storeClient: poolOf(this.db),
      tableName: 'rate_limits',
      tableCreated: true,
      keyPrefix: KEY_PREFIX,
      points: Number.MAX_SAFE_INTEGER,
      duration: WINDOW_SECONDS,
      clearExpiredByTimeout: false,
    });
    return this.limiter;
  }

  /** Forgets a tenant's limit, after it changed in this process. */
  forget(tenantId: string) {
    this.tenantLimits.delete(tenantId);
  }

  /** Counts one request of the principal; TOO_MANY_REQUESTS beyond its limit. */
  async consume(principal: Principal): Promise<RateLimitState | undefined> {
    const own = (await this.tenantLimits.fetch(principal.tenantId))?.limit ?? null;
    const limit = own ?? this.defaultLimit;
    if (limit === undefined) return undefined;
    const counted: RateLimiterRes = await this.counter().consume(credentialOf(principal), 1);
    return this.judge(counted, limit, `this credential may make ${limit} requests per minute`);
  }

  /**
   * Counts one request from a client address to a public endpoint (`endpoint` names the count, so
   * each such endpoint has its own); TOO_MANY_REQUESTS beyond `limit` per minute.
   */
  async consumeByAddress(endpoint: string, address: string, limit: number): Promise<RateLimitState> {
    const counted: RateLimiterRes = await this.counter().consume(`address:${endpoint}:${address}`, 1);
    return this.judge(counted, limit, `this address may send ${limit} requests per minute to ${endpoint}`);
  }

  private judge(counted: RateLimiterRes, limit: number, refusal: string): RateLimitState {
    const reset = Math.max(1, Math.ceil(counted.msBeforeNext / 1000));
    const state = { limit, remaining: Math.max(0, limit - counted.consumedPoints), reset };
    if (counted.consumedPoints > limit) {
      throw new AppError('TOO_MANY_REQUESTS', refusal, {
        headers: { 'Retry-After': String(reset), ...rateLimitHeaders(state) },
      });
    }
    return state;
  }
}

const rateLimitHeaders = (state: RateLimitState) => ({
  'RateLimit-Limit': String(state.limit),
  'RateLimit-Remaining': String(state.remaining),
  'RateLimit-Reset': String(state.reset),
});

/** Authenticates, then counts the request against the caller's limit and keeps its window for the headers. */
export function limitedAuthentication(
  authenticate: (authorization: string | undefined) => Promise<Principal>,
  limits: RateLimits,
) {
  return async (authorization: string | undefined, request?: FastifyRequest) => {
    const principal = await authenticate(authorization);
    const state = await limits.consume(principal);
    if (state && request) request.rateLimit = state;
    return principal;
  };
}

/** Counts a request against a limit per client address and keeps its window for the headers. */
export function limitByAddress(limits: RateLimits) {
  return async (name: string, perMinute: number, request: FastifyRequest) => {
    request.rateLimit = await limits.consumeByAddress(name, request.ip, perMinute);
  };
}

/** Every answer to a limited request says where its caller stands. */
export function installRateLimitHeaders(app: FastifyInstance) {
  app.decorateRequest('rateLimit', undefined);
  app.addHook('onSend', async (request, reply) => {
    if (request.rateLimit) reply.headers(rateLimitHeaders(request.rateLimit));
  });
}

/** Deletes the counters of windows that have ended; safe in several processes at once. */
export const deleteEndedWindows = (db: Db) =>
  db.$executeRaw`DELETE FROM rate_limits WHERE expire < (extract(epoch FROM now()) * 1000)::bigint`;

/** Deletes the counters of a tenant's credentials (their keys start with the tenant id), with the tenant. */
export const deleteTenantCounters = (db: DbOrTx, tenantId: string) =>
  db.$executeRaw`DELETE FROM rate_limits WHERE key LIKE ${`${KEY_PREFIX}:${tenantId}:%`}`;
