/**
 * Prometheus metrics (prom-client): a registry per application (several may run in one process),
 * the Node process metrics, HTTP requests by operation and status with their latency, and the
 * gauges modules add (`metrics` of a module). `GET /metrics` serves them, behind METRICS_TOKEN
 * when it is set.
 */
import { timingSafeEqual } from 'node:crypto';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import { AppError } from './errors';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The `operation` label of a route outside the REST operations (`edge`, `oauth_pages`, ...). */
    metricsLabel?: string;
  }
  interface FastifyRequest {
    /** The `operation` label of a GraphQL request: `graphql <type> <name>`. */
    graphqlOperation?: string;
  }
}

export const METRICS_PREFIX = 'commerce_';

/** Latency buckets (seconds): a cached edge hit takes well under a millisecond, a large write seconds. */
const BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/** At most this many GraphQL operation names are labels of their own (names are the client's); the rest are `other`. */
const MAX_GRAPHQL_NAMES = 200;

export interface Metrics {
  registry: Registry;
  /** Counts an answer given outside Fastify (no hook sees it) like the others. */
  recordAnswer(operation: string, status: number, seconds: number): void;
}

/** The `operation` label of a request: its REST operationId, GraphQL operation, route label, or a fixed class. */
function operationOf(request: FastifyRequest, status: number): string {
  const config = request.routeOptions.config;
  if (config.restOperation) return config.restOperation.operationId;
  if (request.graphqlOperation) return request.graphqlOperation;
  if (config.metricsLabel) return config.metricsLabel;
  if (request.routeOptions.url === undefined) return status === 404 ? 'not_found' : 'unrouted';
  return 'other';
}

export function installMetrics(app: FastifyInstance, options: { token: string | undefined }): Metrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: METRICS_PREFIX });
  const requests = new Counter({
    name: `${METRICS_PREFIX}http_requests_total`,
    help: 'HTTP requests answered, by operation (REST operationId, GraphQL operation, or route class) and status.',
    labelNames: ['operation', 'status'],
    registers: [registry],
  });
  const duration = new Histogram({
    name: `${METRICS_PREFIX}http_request_duration_seconds`,
    help: 'Time from the request to the end of its response, by operation.',
    labelNames: ['operation'],
    buckets: BUCKETS,
    registers: [registry],
  });
  const graphqlNames = new Set<string>();
  app.decorateRequest('graphqlOperation', undefined);
  app.addHook('onResponse', async (request, reply) => {
    let operation = operationOf(request, reply.statusCode);
    if (request.graphqlOperation && !graphqlNames.has(operation)) {
      if (graphqlNames.size >= MAX_GRAPHQL_NAMES) operation = 'graphql other';
      else graphqlNames.add(operation);
    }
    requests.inc({ operation, status: reply.statusCode });
    duration.observe({ operation }, reply.elapsedTime / 1000);
  });

  const expected = options.token === undefined ? undefined : Buffer.from(`Bearer ${options.token}`);
  app.get('/metrics', { config: { metricsLabel: 'metrics' } }, async (request, reply) => {
    if (expected) {
      const given = Buffer.from(request.headers.authorization ?? '');
      if (given.length !== expected.length || !timingSafeEqual(given, expected))
        throw new AppError('UNAUTHORIZED', 'GET /metrics needs the METRICS_TOKEN as bearer token');
    }
    reply.type(registry.contentType);
    return registry.metrics();
  });
  // The series of each label pair, kept: looking them up by labels on every answer costs more than the answer.
  const series = new Map<string, { count: Counter.Internal; time: Histogram.Internal<string> }>();
  const recordAnswer = (operation: string, status: number, seconds: number) => {
    const name = `${operation} ${status}`;
    let known = series.get(name);
    if (!known) {
      known = { count: requests.labels({ operation, status }), time: duration.labels({ operation }) };
      series.set(name, known);
    }
    known.count.inc();
    known.time.observe(seconds);
  };
  return { registry, recordAnswer };
}

/** How long a gauge read from the database may take on a scrape before it is left out of that scrape. */
export const SCRAPE_QUERY_TIMEOUT_MS = 2_000;

/** The query's result, or undefined when it fails or outlasts `SCRAPE_QUERY_TIMEOUT_MS`: a scrape never hangs on it. */
export async function scrapeQuery<T>(query: () => Promise<T>): Promise<T | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<undefined>((resolve) => {
    timer = setTimeout(() => resolve(undefined), SCRAPE_QUERY_TIMEOUT_MS).unref();
  });
  try {
    return await Promise.race([query().catch(() => undefined), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * A gauge with a series per row that `read` gives at each scrape (so the rows it reads must be
 * bounded), labelled `label` with `labelOf(row)`, holding `measure(row)`. A read that fails or
 * times out (see `scrapeQuery`) leaves the values of the last scrape.
 */
export function gaugePerRow<Row>(
  registry: Registry,
  gauge: {
    name: string;
    help: string;
    label: string;
    read: () => Promise<Row[]>;
    labelOf: (row: Row) => string;
    measure: (row: Row) => number;
  },
): void {
  new Gauge({
    name: `${METRICS_PREFIX}${gauge.name}`,
    help: gauge.help,
    labelNames: [gauge.label],
    registers: [registry],
    async collect() {
      const rows = await scrapeQuery(gauge.read);
      if (!rows) return;
      this.reset();
      for (const row of rows) this.set({ [gauge.label]: gauge.labelOf(row) }, gauge.measure(row));
    },
  });
}
