/**
 * Revalidation of expired responses: stale-while-revalidate (from the origin's Cache-Control, or
 * the route's setting) served at once while one background request refreshes the entry, and
 * conditional requests to the origin whose 304 renews the entry without a body.
 */
import type { ServerResponse } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { beforeAll, describe, expect, it } from 'vitest';
import { createTenant, type Tenant } from '../helpers/app';
import { sql } from '../helpers/db';
import { edgeGet, proxyWith, startEdgeApp, startOrigin } from '../helpers/edge';

// Expired entries are not kept for serving on errors: only the revalidation windows keep them.
const { rest, baseUrl, databaseUrl } = await startEdgeApp({ EDGE_STALE_IF_ERROR_SECONDS: '0' });
const PROXIES = '/api/storage/edge/proxies';

/** Versions served per path, and a gate that holds the answers to refreshes back until opened. */
const versions = new Map<string, number>();
let hold: Promise<void> | null = null;
const behaviour = new Map<string, (request: import('node:http').IncomingMessage, response: ServerResponse) => void>();
const origin = await startOrigin((request, response) => {
  const path = request.url!.split('?')[0]!;
  const version = (versions.get(path) ?? 0) + 1;
  versions.set(path, version);
  const answer = () => {
    const custom = behaviour.get(path);
    if (custom) return custom(request, response);
    if (path.startsWith('/origin/')) response.setHeader('cache-control', 'max-age=1, stale-while-revalidate=60');
    response.setHeader('content-type', 'text/plain');
    response.end(`${path} v${version}`);
  };
  if (hold && version > 1) void hold.then(answer);
  else answer();
});

let tenant: Tenant;
const get = (path: string, headers: Record<string, string> = {}) => edgeGet(`${baseUrl}/edge/fresh${path}`, headers);
const originRequests = (path: string) => origin.requests.filter((request) => request.url.split('?')[0] === path);

beforeAll(async () => {
  tenant = await createTenant(rest, 'Revalidation tenant');
  const created = await rest.post(PROXIES, {
    token: tenant.key,
    body: proxyWith('fresh', [
      {
        path: '/route',
        origin: { uri: `${origin.url}/route` },
        settings: { cache: { age: 1, stale_while_revalidate: 60 } },
      },
      { path: '/origin', origin: { uri: `${origin.url}/origin` }, settings: { cache: { is_as_origin: true } } },
      { path: '/plain', origin: { uri: `${origin.url}/plain` }, settings: { cache: { age: 1 } } },
    ]),
  });
  expect(created.status).toBe(201);
});

describe('stale-while-revalidate', () => {
  it.each([
    ['the route setting', '/route/page'],
    ["the origin's Cache-Control", '/origin/page'],
  ])('serves the expired entry at once while one background request refreshes it (%s)', async (_, path) => {
    expect((await get(path)).text).toBe(`${path} v1`);
    await sleep(1_100); // until the entry's freshness has run out
    let open!: () => void;
    hold = new Promise((resolve) => (open = resolve));
    try {
      // The refresh is held at the origin: every answer meanwhile is the stored one.
      const answers = await Promise.all(Array.from({ length: 5 }, () => get(path)));
      for (const answer of answers) {
        expect(answer.status).toBe(200);
        expect(answer.headers['x-cache']).toBe('STALE');
        expect(answer.text).toBe(`${path} v1`);
      }
      expect(originRequests(path)).toHaveLength(2);
    } finally {
      open();
      hold = null;
    }
    await expect.poll(async () => (await get(path)).text).toBe(`${path} v2`);
    expect((await get(path)).headers['x-cache']).toBe('HIT');
    expect(originRequests(path)).toHaveLength(2);
  });

  it('refuses a negative or fractional stale_while_revalidate, storing nothing', async () => {
    for (const value of [-1, 1.5, '60']) {
      const response = await rest.post(PROXIES, {
        token: tenant.key,
        body: proxyWith('bad-swr', [
          { path: '/', origin: { uri: origin.url }, settings: { cache: { age: 1, stale_while_revalidate: value } } },
        ]),
      });
      expect(response.status).toBe(400);
      expect(response.body.error.details[0].field).toContain('stale_while_revalidate');
    }
    expect((await rest.get(`${PROXIES}/bad-swr`, { token: tenant.key })).status).toBe(404);
  });

  it('spells the setting out in the proxy, null when not given', async () => {
    const proxy = await rest.get(`${PROXIES}/fresh`, { token: tenant.key });
    expect(proxy.body.data.routes.map((route: any) => route.settings.cache.stale_while_revalidate)).toEqual([
      60,
      null,
      null,
    ]);
  });

  it('reads proxies stored before the setting existed as null', async () => {
    const route = { path: '/', origin: { uri: origin.url }, settings: { cache: { age: 5 } } };
    expect((await rest.post(PROXIES, { token: tenant.key, body: proxyWith('legacy', route) })).status).toBe(201);
    await sql(
      databaseUrl,
      `UPDATE proxies SET routes = jsonb_set(routes, '{settings,cache}', (routes #> '{settings,cache}') - 'stale_while_revalidate')
        WHERE key = 'legacy'`,
    );
    const [stored] = await sql<{ cache: object }>(
      databaseUrl,
      `SELECT routes #> '{settings,cache}' AS cache FROM proxies WHERE key = 'legacy'`,
    );
    expect(stored!.cache).not.toHaveProperty('stale_while_revalidate');
    const proxy = await rest.get(`${PROXIES}/legacy`, { token: tenant.key });
    expect(proxy.body.data.routes.settings.cache.stale_while_revalidate).toBeNull();
    expect((await edgeGet(`${baseUrl}/edge/legacy/page`)).headers['x-cache']).toBe('MISS');
  });
});

describe('conditional revalidation', () => {
  const validated = (validator: 'etag' | 'last-modified') => (request: any, response: ServerResponse) => {
    const value = validator === 'etag' ? '"v1"' : 'Mon, 02 Jan 2023 03:04:05 GMT';
    response.setHeader(validator, value);
    const header = validator === 'etag' ? 'if-none-match' : 'if-modified-since';
    if (request.headers[header] === value) {
      response.statusCode = 304;
      return response.end();
    }
    response.setHeader('content-type', 'text/plain');
    response.end(`body of ${request.url}`);
  };

  it.each([
    ['If-None-Match', 'etag', '/plain/etag'],
    ['If-Modified-Since', 'last-modified', '/plain/modified'],
  ] as const)('sends %s for an expired entry and serves it again on 304', async (header, validator, path) => {
    behaviour.set(path, validated(validator));
    const first = await get(path);
    expect(first.headers['x-cache']).toBe('MISS');
    await sleep(1_100); // until the entry's freshness has run out
    const revalidated = await get(path);
    expect(revalidated.status).toBe(200);
    expect(revalidated.headers['x-cache']).toBe('REVALIDATED');
    expect(revalidated.text).toBe(first.text);
    expect(revalidated.headers['cache-control']).toMatch(/max-age=1$/);
    const [, second] = originRequests(path);
    expect(second!.headers[header.toLowerCase()]).toBeDefined();
    // Renewed: fresh again without asking the origin.
    expect((await get(path)).headers['x-cache']).toBe('HIT');
    expect(originRequests(path)).toHaveLength(2);
  });

  it("answers the client's own conditional request with 304 after a revalidation", async () => {
    const path = '/plain/client-conditional';
    behaviour.set(path, validated('etag'));
    await get(path);
    await sleep(1_100); // until the entry's freshness has run out
    const response = await get(path, { 'if-none-match': '"v1"' });
    expect(response.status).toBe(304);
    expect(response.headers['x-cache']).toBe('REVALIDATED');
    expect(response.body.length).toBe(0);
  });
});
