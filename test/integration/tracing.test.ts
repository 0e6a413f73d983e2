/**
 * OpenTelemetry traces end to end, turned on by the service's own setup with an in-memory exporter:
 * the span trees of a REST write, a GraphQL mutation, an edge miss and hit, and a webhook delivery;
 * the client's `traceparent` continued, and sent on to origins and webhooks; the trace id in the
 * request's log lines; and nothing at all while tracing is off.
 */
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { context, propagation, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
  type ReadableSpan,
} from '@opentelemetry/sdk-trace-base';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { buildApp } from '../../src/app';
import { loadConfig } from '../../src/kernel/config';
import { createDb } from '../../src/kernel/db';
import { startTracing } from '../../src/kernel/tracing/setup';
import { createTenant, TEST_MASTER_KEY, type TestApp } from '../helpers/app';
import { createTestDatabase, sql } from '../helpers/db';
import { edgeRequest, proxyWith, startOrigin } from '../helpers/edge';
import { createRestClient } from '../helpers/rest';
import { startServiceProcess, temporaryDir } from '../helpers/service-process';
import { receiver, until } from './broadcasts.fixtures';
import { createStockWorld, type StockWorld } from './orders.fixtures';
import { graphqlData } from './stock.fixtures';

const exporter = new InMemorySpanExporter();
const tracing = startTracing(loadConfig({}).tracing, { spanProcessors: [new SimpleSpanProcessor(exporter)] })!;

interface TracedApp extends TestApp {
  baseUrl: string;
  /** The JSON log lines the app wrote. */
  logs: Record<string, unknown>[];
}

/** The application listening on 127.0.0.1 (server spans start on the socket), its log lines kept. */
async function startApp(): Promise<TracedApp> {
  const databaseUrl = await createTestDatabase();
  const config = loadConfig({
    DATABASE_URL: databaseUrl,
    MASTER_KEY: TEST_MASTER_KEY,
    LOG_LEVEL: 'error',
    EDGE_ALLOW_PRIVATE_ORIGINS: 'true',
    BROADCAST_ALLOW_PRIVATE_WEBHOOKS: 'true',
    BROADCAST_TIMEOUT_MS: '1000',
    BROADCAST_BACKOFF_MS: '20',
  });
  const db = createDb(databaseUrl, { poolSize: 5 });
  const logs: Record<string, unknown>[] = [];
  const logStream = { write: (line: string) => void logs.push(JSON.parse(line) as Record<string, unknown>) };
  const { app, services } = await buildApp({ config, db, masterKey: TEST_MASTER_KEY, logStream });
  await app.listen({ port: 0, host: '127.0.0.1' });
  afterAll(async () => {
    await app.close();
    await db.$disconnect();
  });
  const { port } = app.server.address() as AddressInfo;
  return {
    app,
    services,
    db,
    databaseUrl,
    config,
    rest: createRestClient(app),
    baseUrl: `http://127.0.0.1:${port}`,
    logs,
  };
}

/** A client's trace context: a new trace, and the id of the client's own span in it. */
function clientTrace() {
  const traceId = randomBytes(16).toString('hex');
  const spanId = randomBytes(8).toString('hex');
  return { traceId, spanId, traceparent: `00-${traceId}-${spanId}-01` };
}

const spansOf = (traceId: string) =>
  exporter.getFinishedSpans().filter((span) => span.spanContext().traceId === traceId);
const idOf = (span: ReadableSpan) => span.spanContext().spanId;
const parentIdOf = (span: ReadableSpan) => span.parentSpanContext?.spanId;
const childrenOf = (spans: ReadableSpan[], parent: ReadableSpan) => spans.filter((s) => parentIdOf(s) === idOf(parent));
const sqlSpans = (spans: ReadableSpan[]) => spans.filter((s) => s.attributes['db.system'] === 'postgresql');

/** The finished spans of a trace once `ready` holds for them (the server span ends after the client has its answer). */
const spansWhen = (traceId: string, ready: (spans: ReadableSpan[]) => boolean) =>
  until(async () => spansOf(traceId), ready);

/** The one span of `spans` named `name`. */
function only(spans: ReadableSpan[], name: string): ReadableSpan {
  const named = spans.filter((span) => span.name === name);
  expect(
    named.map((span) => span.name),
    `spans named "${name}" among ${spans.map((s) => s.name).join(', ')}`,
  ).toEqual([name]);
  return named[0]!;
}

const traceIdOfHeader = (header: unknown) => String(header).split('-')[1];
const parentIdOfHeader = (header: unknown) => String(header).split('-')[2];

const t = await startApp();
let world: StockWorld;

afterAll(() => tracing.shutdown());

beforeAll(async () => {
  world = await createStockWorld(t, 'Tracing tenant', 2);
});

const addStockOverHttp = (traceparent: string, sku: string) =>
  edgeRequest(`${t.baseUrl}/api/inventory/items`, {
    method: 'POST',
    headers: { authorization: `Bearer ${world.tenant.key}`, 'content-type': 'application/json', traceparent },
    body: JSON.stringify({
      data: [{ sku, quantity: 3, warehouseId: world.warehouseId, businessId: world.catalog.businessId }],
    }),
  });

describe('traces', () => {
  it('of a REST write: the HTTP span continues the client’s trace, the operation is its child, the SQL the operation’s', async () => {
    const client = clientTrace();
    const response = await addStockOverHttp(client.traceparent, 'SKU-1');
    expect(response.status, response.text).toBe(201);

    const spans = await spansWhen(client.traceId, (all) => all.some((s) => s.kind === SpanKind.SERVER));
    const server = only(spans, 'POST /api/inventory/items');
    expect(server.kind).toBe(SpanKind.SERVER);
    expect(parentIdOf(server)).toBe(client.spanId);
    expect(server.attributes).toMatchObject({
      'http.request.method': 'POST',
      'http.route': '/api/inventory/items',
      'url.path': '/api/inventory/items',
      'http.response.status_code': 201,
    });

    const operation = only(childrenOf(spans, server), 'addInventoryItems');
    expect(operation.attributes['rest.operation_id']).toBe('addInventoryItems');

    const statements = sqlSpans(spans);
    expect(statements.length).toBeGreaterThan(2);
    for (const statement of statements) {
      expect(statement.kind).toBe(SpanKind.CLIENT);
      expect(parentIdOf(statement)).toBe(idOf(operation));
      expect(statement.attributes).toMatchObject({ 'db.system': 'postgresql', 'db.system.name': 'postgresql' });
      // Statements carry placeholders, never the values sent with them.
      expect(String(statement.attributes['db.statement'])).not.toContain('SKU-1');
    }
    expect(statements.map((s) => s.name)).toEqual(expect.arrayContaining(['BEGIN', 'INSERT', 'COMMIT']));
  });

  it('of a GraphQL mutation: parse, validate and the named execution under the HTTP span, the SQL under the execution', async () => {
    const client = clientTrace();
    const response = await edgeRequest(`${t.baseUrl}/graphql`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${world.tenant.key}`,
        'content-type': 'application/json',
        traceparent: client.traceparent,
      },
      body: JSON.stringify({
        query: `mutation CreateChannel($input: CreateSalesChannelInput!) {
          createSalesChannel(input: $input) { sales_channel { id } } }`,
        variables: { input: { name: 'Traced shop' } },
      }),
    });
    expect(response.status, response.text).toBe(200);
    expect(response.json.errors, response.text).toBeUndefined();

    const spans = await spansWhen(client.traceId, (all) => all.some((s) => s.kind === SpanKind.SERVER));
    const server = only(spans, 'POST /graphql');
    expect(parentIdOf(server)).toBe(client.spanId);
    const phases = childrenOf(spans, server).filter(
      (s) => s.name.startsWith('graphql.') || s.name.startsWith('mutation'),
    );
    expect(phases.map((s) => s.name)).toEqual(['graphql.parse', 'graphql.validate', 'mutation CreateChannel']);
    const execution = phases[2]!;
    expect(execution.attributes).toMatchObject({
      'graphql.operation.type': 'mutation',
      'graphql.operation.name': 'CreateChannel',
    });
    const statements = childrenOf(spans, execution);
    expect(statements.length).toBeGreaterThan(0);
    expect(statements.every((s) => s.attributes['db.system'] === 'postgresql')).toBe(true);
    expect(statements.map((s) => s.name)).toContain('INSERT');
  });

  describe('of the edge', () => {
    const originHeaders: Record<string, unknown>[] = [];
    let originUrl: string;

    beforeAll(async () => {
      const origin = await startOrigin((request, response) => {
        originHeaders.push(request.headers);
        response.setHeader('content-type', 'text/plain');
        response.end('from the origin');
      });
      originUrl = origin.url;
      const created = await t.rest.post('/api/storage/edge/proxies', {
        token: world.tenant.key,
        body: proxyWith('traced', [
          { path: '/', origin: { uri: `${originUrl}/o` }, settings: { cache: { age: 300, is_public: true } } },
        ]),
      });
      expect(created.status, created.rawBody).toBe(201);
    });

    it('a miss: the request span (answered before Fastify) is the parent of the origin request, whose trace context the origin receives', async () => {
      const client = clientTrace();
      const response = await edgeRequest(`${t.baseUrl}/edge/traced/page?q=1`, {
        headers: { traceparent: client.traceparent, tracestate: 'vendor=opaque' },
      });
      expect(response.status).toBe(200);
      expect(response.headers['x-cache']).toBe('MISS');

      const spans = await spansWhen(client.traceId, (all) => all.some((s) => s.kind === SpanKind.SERVER));
      const server = only(spans, 'GET /edge/:key/*');
      expect(parentIdOf(server)).toBe(client.spanId);
      expect(server.attributes).toMatchObject({ 'http.route': '/edge/:key/*', 'http.response.status_code': 200 });
      const originRequest = only(childrenOf(spans, server), 'GET');
      expect(originRequest.kind).toBe(SpanKind.CLIENT);
      expect(originRequest.attributes).toMatchObject({
        'http.request.method': 'GET',
        // Without the query string, which is the client's.
        'url.full': `${originUrl}/o/page`,
        'http.response.status_code': 200,
      });

      const received = originHeaders.at(-1)!;
      expect(traceIdOfHeader(received.traceparent)).toBe(client.traceId);
      expect(parentIdOfHeader(received.traceparent)).toBe(idOf(originRequest));
      expect(received.tracestate).toBe('vendor=opaque');
    });

    it('a hit: one span, answered from the cache without an origin request', async () => {
      const client = clientTrace();
      const before = originHeaders.length;
      const response = await edgeRequest(`${t.baseUrl}/edge/traced/page?q=1`, {
        headers: { traceparent: client.traceparent },
      });
      expect(response.headers['x-cache']).toBe('HIT');
      const spans = await spansWhen(client.traceId, (all) => all.some((s) => s.kind === SpanKind.SERVER));
      expect(spans.map((s) => s.name)).toEqual(['GET /edge/:key/*']);
      expect(originHeaders.length).toBe(before);
    });
  });

  it('of a webhook delivery: the worker continues the trace of the write that queued it, and the webhook receives it', async () => {
    const webhook = await receiver(() => 200);
    const channelId = world.channelId;
    await graphqlData(
      t,
      world.tenant.key,
      `mutation($input: SetSalesChannelWebhookInput!) { setSalesChannelWebhook(input: $input) { channel_id } }`,
      { input: { channel_id: channelId, url: webhook.url, secret: 'channel-secret-0123456789' } },
    );

    const client = clientTrace();
    const response = await addStockOverHttp(client.traceparent, 'SKU-2');
    expect(response.status, response.text).toBe(201);
    const [delivered] = await until(
      async () => webhook.received,
      (received) => received.length > 0,
    );
    expect(traceIdOfHeader(delivered!.headers.traceparent)).toBe(client.traceId);

    // The outbox row kept the trace context of the transaction that wrote it.
    const [row] = await sql<{ traceparent: string }>(
      t.databaseUrl,
      `SELECT traceparent FROM stock_broadcasts ORDER BY created_at DESC LIMIT 1`,
    );
    expect(traceIdOfHeader(row!.traceparent)).toBe(client.traceId);

    const spans = await spansWhen(client.traceId, (all) => all.some((s) => s.name === 'deliver broadcast'));
    const operation = only(spans, 'addInventoryItems');
    const delivery = only(spans, 'deliver broadcast');
    expect(delivery.kind).toBe(SpanKind.CONSUMER);
    expect(parentIdOf(delivery)).toBe(parentIdOfHeader(row!.traceparent));
    expect(parentIdOf(delivery)).toBe(idOf(operation));
    expect(delivery.attributes['broadcast.attempt']).toBe(1);
    const post = only(childrenOf(spans, delivery), 'POST');
    expect(post.kind).toBe(SpanKind.CLIENT);
    expect(post.attributes).toMatchObject({ 'url.full': webhook.url, 'http.response.status_code': 200 });
    expect(parentIdOfHeader(delivered!.headers.traceparent)).toBe(idOf(post));
    // Recording the attempt is part of the delivery.
    expect(sqlSpans(childrenOf(spans, delivery)).map((s) => s.name)).toContain('UPDATE');
  });

  it('name the trace in the log lines of the request, and fail the spans of an unexpected error', async () => {
    const spy = vi.spyOn(t.services.edge, 'purgeCache').mockRejectedValueOnce(new Error('the cache is on fire'));
    const client = clientTrace();
    const response = await edgeRequest(`${t.baseUrl}/api/storage/edge/proxies/traced/cache`, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${world.tenant.key}`, traceparent: client.traceparent },
    });
    spy.mockRestore();
    expect(response.status).toBe(500);

    const line = t.logs.find((entry) => entry.msg === 'unhandled error' && entry.trace_id === client.traceId);
    expect(line, JSON.stringify(t.logs)).toBeDefined();
    const spans = await spansWhen(client.traceId, (all) => all.some((s) => s.kind === SpanKind.SERVER));
    const server = only(spans, 'DELETE /api/storage/edge/proxies/:key/cache');
    const operation = only(childrenOf(spans, server), 'purgeProxyCache');
    // Fastify's error handler writes it once the operation has failed, in the request's span.
    expect(line!.span_id).toBe(idOf(server));
    expect(server.status.code).toBe(SpanStatusCode.ERROR);
    expect(operation.status.code).toBe(SpanStatusCode.ERROR);
    expect(operation.events.map((event) => event.name)).toEqual(['exception']);
  });
});

describe('the service process', () => {
  it('exports its spans over OTLP/HTTP when OTEL_EXPORTER_OTLP_ENDPOINT is set, named by OTEL_SERVICE_NAME', async () => {
    // A stand-in collector: what OTLP/HTTP JSON posts to /v1/traces.
    const exports: { path: string; body: any }[] = [];
    const collector = createServer((request, response) => {
      let body = '';
      request.on('data', (chunk) => (body += chunk));
      request.on('end', () => {
        exports.push({ path: request.url!, body: JSON.parse(body) });
        response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      });
    });
    await new Promise<void>((resolve) => collector.listen(0, '127.0.0.1', resolve));
    afterAll(() => new Promise<void>((resolve) => collector.close(() => resolve())));

    const service = await startServiceProcess({
      DATA_DIR: temporaryDir(),
      DATABASE_URL: await createTestDatabase(),
      MASTER_KEY: TEST_MASTER_KEY,
      OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${(collector.address() as AddressInfo).port}`,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      OTEL_SERVICE_NAME: 'commerce-under-test',
      OTEL_BSP_SCHEDULE_DELAY: '50',
    });
    expect(service.output()).toContain('tracing: spans go to http://127.0.0.1:');
    const client = clientTrace();
    const health = await edgeRequest(`http://127.0.0.1:${service.port}/healthz`, {
      headers: { traceparent: client.traceparent },
    });
    expect(health.status).toBe(200);

    const exported = async () =>
      exports.flatMap(({ path, body }) =>
        (body.resourceSpans as any[]).flatMap((resourceSpans) =>
          (resourceSpans.scopeSpans as any[]).flatMap((scope) =>
            (scope.spans as any[]).map((span) => ({ path, resource: resourceSpans.resource, span })),
          ),
        ),
      );
    const ofRequest = (all: Awaited<ReturnType<typeof exported>>) =>
      all.filter(({ span }) => span.traceId === client.traceId);
    // OTLP's SPAN_KIND_SERVER is 2: the request's own span, the last of it to end.
    const spans = ofRequest(await until(exported, (all) => ofRequest(all).some(({ span }) => span.kind === 2)));
    const { path, resource, span } = spans.find(({ span }) => span.kind === 2)!;
    expect(path).toBe('/v1/traces');
    expect(span).toMatchObject({ name: 'GET /healthz', parentSpanId: client.spanId });
    expect(resource.attributes).toContainEqual({ key: 'service.name', value: { stringValue: 'commerce-under-test' } });
    // Its database check is a span of the request too.
    expect(spans.map(({ span }) => span.name)).toContain('SELECT');
    service.child.kill('SIGTERM');
    expect(await service.exited).toBe(0);
  });
});

describe('with tracing off', () => {
  it('makes no span, even with a tracer provider registered, and passes the client’s trace context through unchanged', async () => {
    await tracing.shutdown();
    // Another library's tracing, registered globally: the service must not use it.
    const elsewhere = new InMemorySpanExporter();
    const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(elsewhere)] });
    context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
    propagation.setGlobalPropagator(new W3CTraceContextPropagator());
    trace.setGlobalTracerProvider(provider);
    try {
      const untraced = await startApp();
      const tenant = await createTenant(untraced.rest, 'Untraced tenant');
      const origin = await startOrigin((_request, response) => response.end('plain'));
      const created = await untraced.rest.post('/api/storage/edge/proxies', {
        token: tenant.key,
        body: proxyWith('plain', [{ path: '/', origin: { uri: origin.url } }]),
      });
      expect(created.status).toBe(201);

      const client = clientTrace();
      const edge = await edgeRequest(`${untraced.baseUrl}/edge/plain/x`, {
        headers: { traceparent: client.traceparent },
      });
      expect(edge.status).toBe(200);
      expect(origin.requests.at(-1)!.headers.traceparent).toBe(client.traceparent);
      const graphql = await edgeRequest(`${untraced.baseUrl}/graphql`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${tenant.key}`,
          'content-type': 'application/json',
          traceparent: client.traceparent,
        },
        body: JSON.stringify({ query: '{ salesChannels(first: 1) { edges { node { id } } } }' }),
      });
      expect(graphql.status).toBe(200);

      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(elsewhere.getFinishedSpans()).toEqual([]);
    } finally {
      await provider.shutdown();
      trace.disable();
      propagation.disable();
      context.disable();
    }
  });
});
