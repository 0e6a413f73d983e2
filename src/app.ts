import { createHmac } from 'node:crypto';
import http, { type IncomingMessage } from 'node:http';
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import { Gauge } from 'prom-client';
import type { Config } from './kernel/config';
import { createCursorCodec } from './kernel/cursor';
import { DatabaseNotifications, notify, NotificationsNotHeard } from './kernel/database-notifications';
import { connectionOf, poolUse, type Db } from './kernel/db';
import { mountGraphQL } from './kernel/graphql/endpoint';
import { buildSchema } from './kernel/graphql/schema';
import {
  answerClientError,
  installErrorHandling,
  MAX_PATH_SEGMENT_LENGTH,
  sendFrameworkError,
  sendRawError,
} from './kernel/http-errors';
import { AppError } from './kernel/errors';
import { requestIdOf } from './kernel/ids';
import { installJsonBodyDoor, parameterProblem, queryParameterNames } from './kernel/request-limits';
import { HOSTILE_SENDERS_DEFAULTS, HostileSenders } from './kernel/hostile-senders';
import { installMetrics, METRICS_PREFIX } from './kernel/metrics';
import { installRateLimitHeaders, limitByAddress, limitedAuthentication, RateLimits } from './kernel/rate-limit';
import type { RawAnswerer, RawServerKit, Worker } from './kernel/module';
import { installReadiness } from './kernel/readiness';
import { mountRestApi } from './kernel/rest/router';
import { nameSpansByRoute, traceRequests } from './kernel/tracing/http-server';
import { traceLogMixin } from './kernel/tracing/spans';
import type { GraphQLContext, Services } from './modules/context';
import { modules } from './modules';

export const BODY_LIMIT_BYTES = 1024 * 1024;

export interface AppDependencies {
  config: Config;
  db: Db;
  masterKey: string;
  /** How long a verified API key is trusted without asking the database again. */
  authCacheTtlMs?: number;
  /** Run the reservation sweeper and the broadcast worker (default true). */
  backgroundWorkers?: boolean;
  /** Readable log lines (pino-pretty) instead of JSON lines: for a terminal. */
  prettyLogs?: boolean;
  /** How often the notification listener proves it still hears (default 30 s). */
  notificationCheckMs?: number;
  /** Where JSON log lines go instead of stdout (tests read them). */
  logStream?: { write(line: string): void };
}

/** Every REST operation of the service, in the order `openapi.yaml` lists them. */
export const restOperations = modules.flatMap((module) => module.rest ?? []);

/** The GraphQL schema: the base SDL plus every module's SDL and resolvers. */
export const buildGraphQLSchema = () =>
  buildSchema(modules.flatMap((module) => (module.graphql ? [module.graphql] : [])));

/** Builds the service container: the shared parts, then each module's services in list order. */
export function createServices(
  deps: Omit<AppDependencies, 'backgroundWorkers'> & { log: FastifyBaseLogger },
): Services {
  const { config } = deps;
  const services = {
    config,
    db: deps.db,
    masterKey: deps.masterKey,
    log: deps.log,
    authCacheTtlMs: deps.authCacheTtlMs,
    baseUrl:
      config.publicBaseUrl ?? `http://${config.host.includes(':') ? `[${config.host}]` : config.host}:${config.port}`,
    // Derived from the master key so every process of a deployment signs cursors alike.
    cursors: createCursorCodec(createHmac('sha256', deps.masterKey).update('pagination-cursors').digest()),
    // One listening connection per process, opened like the pool's.
    // One listening connection per process: on the direct URL when the pool goes through a pooler.
    notifications: new DatabaseNotifications(
      config.databaseDirectUrl
        ? { connectionString: config.databaseDirectUrl }
        : connectionOf(deps.db, config.databaseUrl),
      (error) => deps.log.warn({ err: error }, 'database notifications'),
      undefined,
      {
        send: (channel, payload) => notify(deps.db, channel, payload),
        watchIntervalMs: deps.notificationCheckMs,
      },
    ),
    rateLimits: new RateLimits(deps.db, config.rateLimitPerMinute, async (tenantId) => {
      const tenant = await deps.db.tenant.findUnique({ where: { id: tenantId }, select: { rateLimitPerMinute: true } });
      return tenant?.rateLimitPerMinute ?? null;
    }),
  } as Services;
  for (const module of modules) Object.assign(services, module.services?.(services));
  return services;
}

/** Fastify's `rewriteUrl`: the first module that claims a request decides its URL. */
function rewriteUrlOf(services: Services) {
  const rewriters = modules.flatMap((module) => module.rewriteUrl?.(services) ?? []);
  return (request: IncomingMessage) => {
    for (const rewrite of rewriters) {
      const url = rewrite(request);
      if (url !== undefined) return url;
    }
    return request.url ?? '/';
  };
}

export interface BuiltApp {
  app: FastifyInstance;
  services: Services;
  /** Resolves once no request is in flight (or after `timeoutMs`): call after `app.close()`. */
  whenIdle(timeoutMs: number): Promise<void>;
}

/** Builds the HTTP application: /api (REST), /graphql, /healthz and /readyz. Never listens. */
export async function buildApp(deps: AppDependencies): Promise<BuiltApp> {
  // The URL rewriting needs the services and the services need the logger: the rewriters are
  // looked up through this holder once both exist, and so are the raw answerers.
  let rewriteUrl: (request: IncomingMessage) => string = (request) => request.url ?? '/';
  let rawAnswerers: RawAnswerer[] = [];
  // Once `app.close()` starts, requests still arriving on open keep-alive connections are refused
  // with SERVICE_UNAVAILABLE (and the connection closed) while those in flight finish.
  let closing = false;
  // Readable lines are formatted in this thread and written synchronously, not by a transport's
  // worker thread, whose lines would come after the start banner that main.ts prints once the
  // service listens. Only a terminal gets them; a terminal's reader is not a log collector.
  const prettyStream =
    deps.prettyLogs && !deps.logStream
      ? (await import('pino-pretty')).default({ translateTime: 'HH:MM:ss', ignore: 'pid,hostname', sync: true })
      : undefined;
  const app = Fastify({
    logger: {
      level: deps.config.logLevel,
      // With tracing on, each line names the trace and span it was written in.
      mixin: traceLogMixin(),
      ...(deps.logStream ? { stream: deps.logStream } : prettyStream ? { stream: prettyStream } : {}),
    },
    bodyLimit: BODY_LIMIT_BYTES,
    // Per-request access logs cost throughput; errors are logged with their request id.
    logController: new LogController({ disableRequestLogging: true }),
    requestIdHeader: false,
    genReqId: (request) => requestIdOf(request.headers['x-request-id']),
    // Modules may answer requests before Fastify routes them (the edge's cached hits).
    serverFactory: (handler, options) => {
      const server = http.createServer(
        traceRequests((request, response) => {
          if (!closing) for (const answer of rawAnswerers) if (answer(request, response)) return;
          handler(request, response);
        }),
      );
      // Node keeps only the first 1 000 headers of a request, dropping the rest (a `Host` sent after
      // them included, which then fails as missing); the 16 KiB limit of a request head already
      // bounds how many can come, so every header is kept.
      server.maxHeadersCount = 0;
      // What Fastify sets on the servers it makes itself.
      server.keepAliveTimeout = Number(options.keepAliveTimeout ?? 72_000);
      server.requestTimeout = Number(options.requestTimeout ?? 0);
      return server;
    },
    // Fastify's own 503 while closing is outside the envelope: the onRequest hook answers instead.
    return503OnClosing: false,
    forceCloseConnections: 'idle',
    rewriteUrl: (request) => rewriteUrl(request),
    routerOptions: { maxParamLength: MAX_PATH_SEGMENT_LENGTH },
    frameworkErrors: sendFrameworkError,
    clientErrorHandler: answerClientError,
  });
  const services = createServices({ ...deps, log: app.log });
  rewriteUrl = rewriteUrlOf(services);
  nameSpansByRoute(app);

  // `app.close()` stops accepting connections but does not wait for requests whose body is still
  // arriving, so shutdown waits on this count before closing the database under them.
  let inFlight = 0;
  let idle: (() => void) | undefined;
  app.addHook('preClose', async () => {
    closing = true;
  });
  // The raw response's 'close' also covers replies that bypass Fastify's hooks (the edge data plane
  // streams through the raw response, or answers on the raw server) and connections that drop mid-request.
  const trackInFlight = (response: http.ServerResponse) => {
    inFlight += 1;
    response.once('close', () => {
      inFlight -= 1;
      if (inFlight === 0) idle?.();
    });
  };
  app.addHook('onRequest', async (request, reply) => {
    trackInFlight(reply.raw);
    reply.header('X-Request-Id', request.id);
    if (closing) throw new AppError('SERVICE_UNAVAILABLE');
  });
  const whenIdle = (timeoutMs: number) =>
    new Promise<void>((resolve) => {
      if (inFlight === 0) return resolve();
      const timer = setTimeout(resolve, timeoutMs);
      idle = () => {
        clearTimeout(timer);
        resolve();
      };
    });
  installErrorHandling(app);
  const { registry, recordAnswer } = installMetrics(app, { token: deps.config.metricsToken });
  const rawServerKit: RawServerKit = {
    recordAnswer,
    trackInFlight,
    sendError: (response, error, requestId, headers) => sendRawError(app.log, response, error, requestId, headers),
  };
  rawAnswerers = modules.flatMap((module) => module.rawAnswerer?.(services, rawServerKit) ?? []);
  new Gauge({
    name: `${METRICS_PREFIX}db_pool_connections`,
    help: 'Connections of the process pool to PostgreSQL: size (the maximum), open, idle, and requests waiting.',
    labelNames: ['state'],
    registers: [registry],
    collect() {
      const use = poolUse(deps.db);
      if (!use) return;
      this.set({ state: 'size' }, use.size);
      this.set({ state: 'open' }, use.total);
      this.set({ state: 'idle' }, use.idle);
      this.set({ state: 'waiting' }, use.waiting);
    },
  });
  // Fastify parses text/plain by default, and both openapi-backend and yoga would then read JSON out
  // of it. The API takes application/json only: anything else is a 415 from Fastify itself.
  app.removeContentTypeParser('text/plain');
  installJsonBodyDoor(
    app,
    BODY_LIMIT_BYTES,
    new HostileSenders({ ...HOSTILE_SENDERS_DEFAULTS, holdMs: deps.config.refusedBodyHoldMs }),
  );
  // Query strings are bounded at the door too, except the edge's: those belong to the origin.
  app.addHook('onRequest', async (request) => {
    if (request.routeOptions.config.metricsLabel === 'edge') return;
    const problem = parameterProblem(queryParameterNames(request.url), 'query');
    if (problem) throw problem;
  });

  app.get('/healthz', async (_request, reply) => {
    try {
      await deps.db.$queryRaw`SELECT 1`;
      return reply.send({ status: 'ok', database: 'up' });
    } catch {
      return reply.status(503).send({ status: 'unavailable', database: 'down' });
    }
  });
  installReadiness(app, {
    database: async () => {
      await deps.db.$queryRaw`SELECT 1`;
    },
    ...Object.assign({}, ...modules.map((module) => module.readiness?.(services) ?? {})),
  });
  // Modules close (writing what they hold back, such as searches waiting for their batch) once the
  // requests still in flight are done, before the database closes.
  app.addHook('onClose', async () => {
    await whenIdle(5_000);
    for (const module of modules) await module.close?.(services);
  });
  // Changes made by other processes reach this one's caches from the moment it is ready.
  app.addHook('onReady', async () => {
    try {
      await services.notifications.start();
    } catch (error) {
      if (!(error instanceof NotificationsNotHeard)) throw error;
      const through = deps.config.databaseDirectUrl ? 'DATABASE_DIRECT_URL' : 'DATABASE_URL';
      throw new Error(
        `Database notifications sent through the pool never reached the listener on ${through}: it goes through ` +
          'a transaction pooler (such as PgBouncer in transaction mode), which drops them. Set DATABASE_DIRECT_URL ' +
          'to a direct connection to the same PostgreSQL database (the listener and migrations use it), and keep ' +
          'DATABASE_URL on the pooler.',
        { cause: error },
      );
    }
  });
  app.addHook('onClose', async () => {
    await services.notifications.stop();
  });
  let workers: Worker[] = [];
  app.addHook('onReady', async () => {
    for (const module of modules) await module.start?.(services);
  });
  app.addHook('onReady', async () => {
    if (deps.backgroundWorkers === false) return;
    const logError = (error: unknown) => app.log.error(error);
    workers = modules.flatMap((module) => module.workers?.(services, logError) ?? []);
  });
  app.addHook('onClose', async () => {
    await Promise.all(workers.map((worker) => worker.stop()));
  });
  const { authenticator, rateLimits } = services;
  installRateLimitHeaders(app);
  const authenticate = limitedAuthentication((header) => authenticator.authenticate(header), rateLimits);
  await mountRestApi(app, restOperations, services, {
    authenticate,
    isMasterKey: (header) => authenticator.isMasterKey(header),
    limitAddress: limitByAddress(rateLimits),
  });
  await mountGraphQL<GraphQLContext>(app, {
    schema: buildGraphQLSchema(),
    authenticate,
    context: (principal, requestId) => ({ principal, services, requestId }),
  });
  for (const module of modules) await module.http?.(app, services);
  for (const module of modules) module.metrics?.(registry, services);
  return { app, services, whenIdle };
}
