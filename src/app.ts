import Fastify, { LogController, type FastifyInstance } from 'fastify';
import type { Config } from './kernel/config';
import type { Db } from './kernel/db';
import { mountGraphQL } from './kernel/graphql/endpoint';
import { installErrorHandling } from './kernel/http-errors';
import { uuidv7 } from './kernel/ids';
import { mountRestApi } from './kernel/rest/router';
import { mountEdgeDataPlane, rewriteEdgeHost } from './modules/edge/edge.http';
import { mountOAuthHttp } from './modules/oauth/oauth.http';
import { startBroadcastWorker } from './modules/broadcasts/broadcast-worker';
import { startReservationSweeper } from './modules/reservations/reservation-sweeper';
import { restOperations } from './rest-operations';
import { createServices, type Services } from './services';

export const BODY_LIMIT_BYTES = 1024 * 1024;

export interface AppDependencies {
  config: Config;
  db: Db;
  masterKey: string;
  /** How long a verified API key is trusted without asking the database again. */
  authCacheTtlMs?: number;
  /** Run the reservation sweeper and the broadcast worker (default true). */
  backgroundWorkers?: boolean;
}

const requestIdPattern = /^[A-Za-z0-9._:-]{1,128}$/;

export interface BuiltApp {
  app: FastifyInstance;
  services: Services;
  /** Resolves once no request is in flight (or after `timeoutMs`): call after `app.close()`. */
  whenIdle(timeoutMs: number): Promise<void>;
}

/** Builds the HTTP application: /api (REST), /graphql and /healthz. Never listens. */
export async function buildApp(deps: AppDependencies): Promise<BuiltApp> {
  const app = Fastify({
    logger: { level: deps.config.logLevel },
    bodyLimit: BODY_LIMIT_BYTES,
    // Per-request access logs cost throughput; errors are logged with their request id.
    logController: new LogController({ disableRequestLogging: true }),
    requestIdHeader: false,
    genReqId: (request) => {
      const given = request.headers['x-request-id'];
      return typeof given === 'string' && requestIdPattern.test(given) ? given : uuidv7();
    },
    return503OnClosing: true,
    forceCloseConnections: 'idle',
    rewriteUrl: rewriteEdgeHost(deps.config.edge.domain),
  });
  const services = createServices(deps);

  // `app.close()` stops accepting connections but does not wait for requests whose body is still
  // arriving, so shutdown waits on this count before closing the database under them.
  let inFlight = 0;
  let idle: (() => void) | undefined;
  app.addHook('onRequest', async (request, reply) => {
    inFlight += 1;
    // The raw response's 'close' also covers replies that bypass Fastify's hooks (the edge data
    // plane streams through the raw response) and connections that drop mid-request.
    reply.raw.once('close', () => {
      inFlight -= 1;
      if (inFlight === 0) idle?.();
    });
    reply.header('X-Request-Id', request.id);
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
  // Fastify parses text/plain by default, and both openapi-backend and yoga would then read JSON out
  // of it. The API takes application/json only: anything else is a 415 from Fastify itself.
  app.removeContentTypeParser('text/plain');

  app.get('/healthz', async (_request, reply) => {
    try {
      await deps.db.$queryRaw`SELECT 1`;
      return reply.send({ status: 'ok', database: 'up' });
    } catch {
      return reply.status(503).send({ status: 'unavailable', database: 'down' });
    }
  });
  // Searches waiting for their batch are written before the database closes, once the requests
  // still in flight (which may record searches) are done.
  app.addHook('onClose', async () => {
    await whenIdle(5_000);
    await services.search.close();
  });
  // Expired reservations are released in the ledger, and stock broadcasts delivered, by every
  // process: each exactly once overall.
  let workers: { stop(): Promise<void> }[] = [];
  app.addHook('onReady', async () => {
    if (deps.backgroundWorkers === false) return;
    const logError = (error: unknown) => app.log.error(error);
    workers = [startReservationSweeper(services.reservations, logError), startBroadcastWorker(services.broadcasts, logError)];
  });
  app.addHook('onClose', async () => {
    await Promise.all(workers.map((worker) => worker.stop()));
  });
  await mountRestApi(app, restOperations, services);
  mountGraphQL(app, services);
  mountEdgeDataPlane(app, services);
  mountOAuthHttp(app, services);
  return { app, services, whenIdle };
}
