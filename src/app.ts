import Fastify, { LogController, type FastifyInstance } from 'fastify';
import type { Config } from './kernel/config';
import type { Db } from './kernel/db';
import { mountGraphQL } from './kernel/graphql/endpoint';
import { installErrorHandling } from './kernel/http-errors';
import { uuidv7 } from './kernel/ids';
import { mountRestApi } from './kernel/rest/router';
import { restOperations } from './rest-operations';
import { createServices, type Services } from './services';

export const BODY_LIMIT_BYTES = 1024 * 1024;

export interface AppDependencies {
  config: Config;
  db: Db;
  masterKey: string;
  /** How long a verified API key is trusted without asking the database again. */
  authCacheTtlMs?: number;
}

const requestIdPattern = /^[A-Za-z0-9._:-]{1,128}$/;

/** Builds the HTTP application: /api (REST), /graphql and /healthz. Never listens. */
export async function buildApp(deps: AppDependencies): Promise<{ app: FastifyInstance; services: Services }> {
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
  });
  const services = createServices(deps);

  app.addHook('onRequest', async (request, reply) => {
    reply.header('X-Request-Id', request.id);
  });
  installErrorHandling(app);

  app.get('/healthz', async (_request, reply) => {
    try {
      await deps.db.$queryRaw`SELECT 1`;
      return reply.send({ status: 'ok', database: 'up' });
    } catch {
      return reply.status(503).send({ status: 'unavailable', database: 'down' });
    }
  });
  await mountRestApi(app, restOperations, services);
  mountGraphQL(app, services);
  return { app, services };
}
