/**
 * Per-proxy analytics: `GET /api/storage/edge/proxies/{key}/analytics` (hits, misses, stale, bytes
 * served and from the origin, origin errors per hour), counted in memory and written to
 * PostgreSQL in batches, merged across processes; the per-proxy metrics and their bound; refused
 * ranges, scopes and tenants.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { createKey, createTenant, type Tenant } from '../helpers/app';
import { sql } from '../helpers/db';
import { expectRestError } from '../helpers/rest';
import { edgeGet, proxyWith, startEdgeApp, startOrigin } from '../helpers/edge';
import { MAX_METRIC_PROXIES } from '../../src/modules/edge/analytics/traffic-log';

const METRICS_TOKEN = 'metrics-token-0123456789';
const one = await startEdgeApp({ METRICS_TOKEN, EDGE_STALE_IF_ERROR_SECONDS: '60' });
const two = await startEdgeApp({ METRICS_TOKEN }, { databaseUrl: one.databaseUrl });
const PROXIES = '/api/storage/edge/proxies';
const BODY = 'x'.repeat(1000);

let failing = false;
const origin = await startOrigin((request, response) => {
  if (failing || request.url!.includes('/broken')) {
    response.statusCode = 503;
    return void response.end('down');
  }
  response.setHeader('content-type', 'text/plain');
  response.end(BODY);
});

let tenant: Tenant;
let readOnly: string;
beforeAll(async () => {
  tenant = await createTenant(one.rest, 'Analytics tenant');
  readOnly = await createKey(one.rest, tenant.id, ['proxies:read']);
  for (const key of ['counted', 'quiet']) {
    const created = await one.rest.post(PROXIES, {
      token: tenant.key,
      body: proxyWith(key, [
        { path: '/', origin: { uri: origin.url }, settings: { cache: { age: 1 } } },
        { path: '/pass', origin: { uri: `${origin.url}/pass` } },
      ]),
    });
    expect(created.status).toBe(201);
  }
});

const analytics = (key: string, query = '', token = readOnly) =>
  one.rest.get(`${PROXIES}/${key}/analytics${query}`, { token });

describe('proxy analytics', () => {
  it('counts hits, misses, stale answers, bytes and origin errors per hour, across processes', async () => {
    await edgeGet(`${one.baseUrl}/edge/counted/page`); // miss: 1000 bytes from the origin
    await edgeGet(`${one.baseUrl}/edge/counted/page`); // hit
    await edgeGet(`${one.baseUrl}/edge/counted/page`); // hit
    await edgeGet(`${two.baseUrl}/edge/counted/page`); // miss in the other process
    await edgeGet(`${two.baseUrl}/edge/counted/pass/x`); // pass-through miss
    await edgeGet(`${two.baseUrl}/edge/counted/broken`); // origin error, passed on (503 is not stored)
    await new Promise((resolve) => setTimeout(resolve, 2100));
    failing = true;
    const stale = await edgeGet(`${one.baseUrl}/edge/counted/page`); // expired, origin fails: stale
    failing = false;
    expect(stale.headers['x-cache']).toBe('STALE');
    // The other process writes its counts in its next batch; this one writes its own when asked.
    await two.services.edge.traffic.flush();

    const response = await analytics('counted');
    expect(response.status, response.rawBody).toBe(200);
    const { data } = response.body;
    expect(data.totals).toEqual({
      hits: 2,
      misses: 4,
      stale: 1,
      bytes_served: 1000 * 6 + 4,
      bytes_from_origin: 1000 * 3 + 4,
      origin_errors: 2,
    });
    // The whole hours covering the last 24 hours.
    expect(data.hours).toHaveLength(25);
    const now = data.hours.at(-1);
    expect(now).toEqual({ hour: expect.any(String), ...data.totals });
    expect(Date.parse(data.to) - Date.parse(data.from)).toBe(25 * 3600_000);
    expect(new Date(data.from).getUTCMinutes()).toBe(0);

    const quiet = await analytics('quiet');
    expect(quiet.body.data.totals).toEqual({
      hits: 0,
      misses: 0,
      stale: 0,
      bytes_served: 0,
      bytes_from_origin: 0,
      origin_errors: 0,
    });
  });

  it('lists the hours of a range given, rounded out to whole hours', async () => {
    const response = await analytics('counted', '?from=2024-01-01T00:30:00Z&to=2024-01-01T03:10:00%2B01:00');
    expect(response.status, response.rawBody).toBe(200);
    expect(response.body.data.from).toBe('2024-01-01T00:00:00.000Z');
    expect(response.body.data.to).toBe('2024-01-01T03:00:00.000Z');
    expect(response.body.data.hours.map((h: { hour: string }) => h.hour)).toEqual([
      '2024-01-01T00:00:00.000Z',
      '2024-01-01T01:00:00.000Z',
      '2024-01-01T02:00:00.000Z',
    ]);
  });

  it('refuses bad ranges, a missing scope, unknown parameters and another tenant', async () => {
    for (const query of [
      '?from=yesterday',
      '?to=2024-13-01T00:00:00Z',
      '?from=2024-01-02T00:00:00Z&to=2024-01-01T00:00:00Z',
      '?from=2020-01-01T00:00:00Z&to=2024-01-01T00:00:00Z',
      '?limit=5',
      `?from=${'9'.repeat(10_000)}`,
    ]) {
      expectRestError(await analytics('counted', query), 400);
    }
    const noScope = await createKey(one.rest, tenant.id, ['search']);
    expectRestError(await analytics('counted', '', noScope), 403);
    const stranger = await createTenant(one.rest, 'Stranger');
    expectRestError(await analytics('counted', '', stranger.key), 404);
    expectRestError(await analytics('nothing-here'), 404);
  });

  it('drops the analytics of a deleted proxy with it', async () => {
    await edgeGet(`${one.baseUrl}/edge/quiet/page`);
    await one.services.edge.traffic.flush();
    const count = async () =>
      Number(
        (await sql(one.databaseUrl, "SELECT count(*) AS n FROM edge_proxy_traffic WHERE proxy_key = 'quiet'"))[0]!.n,
      );
    expect(await count()).toBe(1);
    expect((await one.rest.delete(`${PROXIES}/quiet`, { token: tenant.key })).status).toBe(204);
    expect(await count()).toBe(0);
  });
});

describe('per-proxy metrics', () => {
  async function scrape(): Promise<string> {
    const response = await one.app.inject({
      method: 'GET',
      url: '/metrics',
      headers: { authorization: `Bearer ${METRICS_TOKEN}` },
    });
    expect(response.statusCode).toBe(200);
    return response.body;
  }

  it('has series per proxy, bounded whatever the number of proxies', async () => {
    const text = await scrape();
    expect(text).toMatch(/edge_proxy_responses_total\{proxy="counted",result="HIT"\} 2/);
    expect(text).toMatch(/edge_proxy_bytes_total\{proxy="counted",direction="origin"\} \d+/);
    expect(text).toMatch(/edge_proxy_origin_errors_total\{proxy="counted"\} 1/);

    const keys = Array.from({ length: MAX_METRIC_PROXIES + 20 }, (_, i) => `many-${i}`);
    for (const key of keys) {
      const created = await one.rest.post(PROXIES, {
        token: tenant.key,
        body: proxyWith(key, { path: '/', origin: { uri: origin.url }, settings: { cache: { age: 60 } } }),
      });
      expect(created.status).toBe(201);
      await edgeGet(`${one.baseUrl}/edge/${key}/page`);
    }
    const after = await scrape();
    const proxies = new Set(
      [...after.matchAll(/edge_proxy_responses_total\{proxy="([^"]+)"/g)].map((match) => match[1]),
    );
    expect(proxies.size).toBe(MAX_METRIC_PROXIES + 1);
    expect(proxies.has('_other')).toBe(true);
  });
});
