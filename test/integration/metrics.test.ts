/**
 * GET /metrics in Prometheus' text format: requests by REST operationId, GraphQL operation and
 * route class with their status and latency, the database pool, the broadcast outbox, expired
 * reservations, search index sizes and the edge cache; protected by METRICS_TOKEN when set, and
 * with a bounded number of series whatever paths clients ask for.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { createTenant, type Tenant } from '../helpers/app';
import { edgeGet, proxyWith, startEdgeApp, startOrigin } from '../helpers/edge';
import { graphqlData } from './stock.fixtures';

const METRICS_TOKEN = 'metrics-token-0123456789';
const t = await startEdgeApp({ METRICS_TOKEN, EDGE_CACHE_MAX_BYTES: String(1024 * 1024) });
const origin = await startOrigin((_request, response) => {
  response.setHeader('content-type', 'text/plain');
  response.end('hello from the origin');
});
let tenant: Tenant;

async function scrape(): Promise<string> {
  const response = await t.app.inject({
    method: 'GET',
    url: '/metrics',
    headers: { authorization: `Bearer ${METRICS_TOKEN}` },
  });
  expect(response.statusCode).toBe(200);
  expect(response.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/);
  return response.body;
}

/** The value of one series (`name{labels}`), or undefined when it is absent. */
function value(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

beforeAll(async () => {
  tenant = await createTenant(t.rest, 'Metrics');
  const created = await t.rest.post('/api/storage/edge/proxies', {
    token: tenant.key,
    body: proxyWith('shop', [{ path: '/', origin: { uri: origin.url }, settings: { cache: { age: 300 } } }]),
  });
  expect(created.status).toBe(201);
});

describe('GET /metrics', () => {
  it('needs the METRICS_TOKEN when one is set', async () => {
    for (const authorization of [undefined, 'Bearer wrong-token-0123456789', `Basic ${METRICS_TOKEN}`]) {
      const response = await t.app.inject({
        method: 'GET',
        url: '/metrics',
        headers: authorization ? { authorization } : {},
      });
      expect(response.statusCode).toBe(401);
      expect(response.json().error.code).toBe(401);
    }
    await scrape();
  });

  it('counts requests by REST operationId, GraphQL operation and status, with their latency', async () => {
    const before = await scrape();
    const count = (text: string, operation: string, status: number) =>
      value(text, `commerce_http_requests_total{operation="${operation}",status="${status}"}`) ?? 0;

    await t.rest.get('/api/storage/edge/proxies', { token: tenant.key });
    await t.rest.get('/api/storage/edge/proxies', { token: tenant.key });
    await t.rest.get('/api/storage/edge/proxies/nope', { token: tenant.key });
    await t.rest.get('/api/storage/edge/proxies?unknown=1', { token: tenant.key });
    await graphqlData(t, tenant.key, 'query Shelf { products(first: 1) { edges { node { id } } } }');
    await t.app.inject({ method: 'GET', url: '/no/such/path' });

    const after = await scrape();
    expect(count(after, 'listProxies', 200) - count(before, 'listProxies', 200)).toBe(2);
    expect(count(after, 'getProxy', 404) - count(before, 'getProxy', 404)).toBe(1);
    expect(count(after, 'listProxies', 400) - count(before, 'listProxies', 400)).toBe(1);
    expect(count(after, 'graphql query Shelf', 200) - count(before, 'graphql query Shelf', 200)).toBe(1);
    expect(count(after, 'not_found', 404) - count(before, 'not_found', 404)).toBe(1);
    expect(
      value(after, 'commerce_http_request_duration_seconds_count{operation="listProxies"}'),
    ).toBeGreaterThanOrEqual(3);
    expect(after).toContain('commerce_http_request_duration_seconds_bucket{le="0.005",operation="listProxies"}');
  });

  it('adds no series for paths clients make up', async () => {
    const seriesOf = (text: string) =>
      text.split('\n').filter((line) => line.startsWith('commerce_http_requests_total'));
    await t.app.inject({ method: 'GET', url: '/made/up/0' });
    const before = seriesOf(await scrape()).length;
    for (let i = 1; i <= 50; i++) await t.app.inject({ method: 'GET', url: `/made/up/${i}?x=${i}` });
    for (let i = 1; i <= 20; i++)
      await graphqlData(t, tenant.key, `query Name${i} { __typename }`).catch(() => undefined);
    const after = seriesOf(await scrape());
    // 20 GraphQL operation names are 20 series (names are bounded); the made-up paths add none.
    expect(after.length - before).toBe(20);
    expect(after.some((line) => line.includes('/made/up'))).toBe(false);
  });

  it('reports the delay of the event loop that answers every request, /healthz included', async () => {
    // prom-client samples the loop with perf_hooks' monitorEventLoopDelay (10 ms resolution).
    await new Promise((resolve) => setTimeout(resolve, 50));
    const text = await scrape();
    for (const series of [
      'commerce_nodejs_eventloop_lag_seconds',
      'commerce_nodejs_eventloop_lag_p99_seconds',
      'commerce_nodejs_eventloop_lag_max_seconds',
    ]) {
      const seconds = value(text, series);
      expect(seconds, series).toBeGreaterThanOrEqual(0);
    }
  });

  it('reports the edge cache, the pool, the outbox, expired reservations and search indexes', async () => {
    const before = await scrape();
    const edge = (text: string, result: string) =>
      value(text, `commerce_edge_cache_responses_total{result="${result}"}`) ?? 0;
    expect((await edgeGet(`${t.baseUrl}/edge/shop/page`)).headers['x-cache']).toBe('MISS');
    expect((await edgeGet(`${t.baseUrl}/edge/shop/page`)).headers['x-cache']).toBe('HIT');
    const after = await scrape();
    expect(edge(after, 'MISS') - edge(before, 'MISS')).toBe(1);
    expect(edge(after, 'HIT') - edge(before, 'HIT')).toBe(1);
    expect(
      value(after, 'commerce_edge_cache_served_bytes_total')! -
        (value(before, 'commerce_edge_cache_served_bytes_total') ?? 0),
    ).toBe('hello from the origin'.length);
    expect((value(after, 'commerce_http_requests_total{operation="edge",status="200"}') ?? 0) >= 2).toBe(true);

    expect(value(after, 'commerce_db_pool_connections{state="size"}')).toBeGreaterThan(0);
    expect(value(after, 'commerce_db_pool_connections{state="open"}')).toBeGreaterThan(0);
    expect(value(after, 'commerce_db_pool_connections{state="waiting"}')).toBe(0);
    expect(value(after, 'commerce_broadcast_backlog{measure="pending"}')).toBe(0);
    expect(value(after, 'commerce_reservations_expired_total')).toBe(0);
    expect(value(after, 'commerce_search_log_dropped_total')).toBe(0);
    expect(after).toContain('commerce_process_cpu_user_seconds_total');

    const index = await t.rest.post('/api/instant/indexes', {
      token: tenant.key,
      body: { data: { name: 'Products', alias: 'products', fields: [{ from: 'title', type: 'STRING' }] } },
    });
    expect(index.status).toBe(201);
    const put = await t.rest.put('/api/instant/indexes/products/documents', {
      token: tenant.key,
      body: {
        data: [
          { id: '1', title: 'Lamp' },
          { id: '2', title: 'Chair' },
        ],
      },
    });
    expect(put.status).toBe(204);
    const withIndex = await scrape();
    const indexId = String(index.body.data.id);
    expect(value(withIndex, `commerce_search_index_documents{index="${indexId}"}`)).toBe(2);
    expect(withIndex).toContain(`commerce_search_index_catch_up_lag{index="${indexId}"}`);
  });
});
