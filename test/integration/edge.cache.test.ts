/**
 * The edge cache against real origins on 127.0.0.1: hits and misses, expiry, the origin's own
 * Cache-Control, conditional requests, purging through the REST API, stale-if-error, what is never
 * stored, the byte bound, and request coalescing.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { createKey, createTenant, type Tenant } from '../helpers/app';
import { edgeGet, edgeRequest, proxyWith, startEdgeApp, startOrigin } from '../helpers/edge';

const { rest, baseUrl, services } = await startEdgeApp({
  EDGE_STALE_IF_ERROR_SECONDS: '60',
  EDGE_CACHE_MAX_BYTES: String(1024 * 1024),
});

const PROXIES = '/api/storage/edge/proxies';

/** What the origin answers per path; the default is a 200 with the path and a counter. */
const behaviour = new Map<string, (response: import('node:http').ServerResponse) => void>();
let served = 0;
const origin = await startOrigin((request, response) => {
  served += 1;
  const path = request.url!.split('?')[0]!.replace(/^\/o/, '');
  const custom = behaviour.get(path);
  if (custom) return custom(response);
  response.setHeader('content-type', 'text/plain');
  response.setHeader('etag', `"${path}"`);
  response.setHeader('last-modified', 'Mon, 02 Jan 2023 03:04:05 GMT');
  response.end(`${path} #${served}`);
});

let tenant: Tenant;
const originCount = (path: string) => origin.requests.filter((r) => r.url.split('?')[0] === `/o${path}`).length;
const get = (path: string, headers: Record<string, string> = {}) => edgeGet(`${baseUrl}/edge/cached${path}`, headers);

beforeAll(async () => {
  tenant = await createTenant(rest, 'Cache tenant');
  const created = await rest.post(PROXIES, {
    token: tenant.key,
    body: proxyWith('cached', [
      { path: '/', origin: { uri: `${origin.url}/o` }, settings: { cache: { age: 300, is_public: true } } },
      { path: '/short', origin: { uri: `${origin.url}/o/short` }, settings: { cache: { age: 1 } } },
      {
        path: '/as-origin',
        origin: { uri: `${origin.url}/o/as-origin` },
        settings: { cache: { age: 300, is_as_origin: true, is_public: false } },
      },
      { path: '/uncached', origin: { uri: `${origin.url}/o/uncached` } },
    ]),
  });
  expect(created.status).toBe(201);
});

describe('cache', () => {
  it('misses, then hits with Age, X-Cache and Cache-Control from is_public', async () => {
    const first = await get('/page');
    expect(first.status).toBe(200);
    expect(first.headers['x-cache']).toBe('MISS');
    expect(first.headers['cache-control']).toBe('public, max-age=300');
    const second = await get('/page');
    expect(second.headers['x-cache']).toBe('HIT');
    expect(second.text).toBe(first.text);
    expect(second.headers.etag).toBe('"/page"');
    expect(second.headers['content-type']).toBe('text/plain');
    expect(Number(second.headers.age)).toBeGreaterThanOrEqual(0);
    expect(second.headers['cache-control']).toMatch(/^public, max-age=\d+$/);
    expect(originCount('/page')).toBe(1);
  });

  it('answers a fresh hit before the HTTP framework routes the request, with its length and a request id', async () => {
    expect((await get('/fast')).headers['x-cache']).toBe('MISS');
    const serve = vi.spyOn(services.edge, 'serve');
    try {
      const hit = await get('/fast', { 'x-request-id': 'fast-1' });
      expect(hit.headers['x-cache']).toBe('HIT');
      expect(hit.headers['x-request-id']).toBe('fast-1');
      expect(Number(hit.headers['content-length'])).toBe(hit.body.length);
      const head = await edgeRequest(`${baseUrl}/edge/cached/fast`, { method: 'HEAD' });
      expect(head.headers['x-cache']).toBe('HIT');
      expect(Number(head.headers['content-length'])).toBe(hit.body.length);
      expect(head.body.length).toBe(0);
      const notModified = await get('/fast', { 'if-none-match': '"/fast"' });
      expect(notModified.status).toBe(304);
      expect(serve).not.toHaveBeenCalled();
      // A miss asks the service.
      expect((await get('/fast-miss')).headers['x-cache']).toBe('MISS');
      expect(serve).toHaveBeenCalledTimes(1);
    } finally {
      serve.mockRestore();
    }
  });

  it('stops answering from the cache at once when a change of the proxy makes its route need a token', async () => {
    const key = 'cached-then-private';
    const route = (settings: object) => [{ path: '/', origin: { uri: `${origin.url}/o` }, settings }];
    const cache = { cache: { age: 300, is_public: true } };
    expect((await rest.post(PROXIES, { token: tenant.key, body: proxyWith(key, route(cache)) })).status).toBe(201);
    const page = `${baseUrl}/edge/${key}/private-later`;
    expect((await edgeGet(page)).headers['x-cache']).toBe('MISS');
    expect((await edgeGet(page)).headers['x-cache']).toBe('HIT');
    const replaced = await rest.put(`${PROXIES}/${key}`, {
      token: tenant.key,
      body: proxyWith(key, route({ ...cache, auth: { is_required: true } })),
    });
    expect(replaced.status).toBe(204);
    const refused = await edgeGet(page);
    expect(refused.status).toBe(401);
    expect(refused.json.error.code).toBe(401);
    const reader = await createKey(rest, tenant.id, ['*']);
    const allowed = await edgeGet(page, { authorization: `Bearer ${reader}` });
    expect(allowed.status).toBe(200);
    expect(allowed.headers['cache-control']).not.toContain('public');
  });

  it('keys the cache on the query string and serves HEAD from a stored GET', async () => {
    await get('/q?a=1');
    await get('/q?a=2');
    expect(originCount('/q')).toBe(2);
    const head = await edgeRequest(`${baseUrl}/edge/cached/q?a=1`, { method: 'HEAD' });
    expect(head.headers['x-cache']).toBe('HIT');
    expect(head.body.length).toBe(0);
    expect(originCount('/q')).toBe(2);
  });

  it('goes back to the origin once the age has passed', async () => {
    const first = await get('/short/x');
    expect(first.headers['cache-control']).toBe('private, max-age=1');
    await sleep(1100);
    const second = await get('/short/x');
    expect(second.headers['x-cache']).toBe('MISS');
    expect(originCount('/short/x')).toBe(2);
  });

  it('does not cache a route without cache settings', async () => {
    await get('/uncached/a');
    const second = await get('/uncached/a');
    expect(second.headers['x-cache']).toBe('MISS');
    expect(originCount('/uncached/a')).toBe(2);
  });

  it("follows the origin's Cache-Control and Expires with is_as_origin", async () => {
    behaviour.set('/as-origin/max-age', (response) =>
      response.setHeader('cache-control', 'public, max-age=120').end('a'),
    );
    behaviour.set('/as-origin/no-store', (response) => response.setHeader('cache-control', 'no-store').end('b'));
    behaviour.set('/as-origin/none', (response) => response.end('c'));
    behaviour.set('/as-origin/expires', (response) => {
      response.setHeader('date', new Date().toUTCString());
      response.setHeader('expires', new Date(Date.now() + 90_000).toUTCString());
      response.end('d');
    });
    for (const path of ['/as-origin/max-age', '/as-origin/no-store', '/as-origin/none', '/as-origin/expires']) {
      await get(path);
      await get(path);
    }
    expect(originCount('/as-origin/max-age')).toBe(1);
    expect((await get('/as-origin/max-age')).headers['cache-control']).toMatch(/^private, max-age=1[12]\d$/);
    expect(originCount('/as-origin/no-store')).toBe(2);
    expect(originCount('/as-origin/none')).toBe(2);
    expect(originCount('/as-origin/expires')).toBe(1);
  });

  it('answers conditional requests with 304 from the cache and on a miss', async () => {
    const miss = await get('/conditional', { 'if-none-match': '"/conditional"' });
    expect(miss.status).toBe(304);
    expect(miss.body.length).toBe(0);
    expect(miss.headers.etag).toBe('"/conditional"');
    // The origin was asked for the full response, which the cache stored.
    expect(origin.requests.at(-1)!.headers['if-none-match']).toBeUndefined();
    const hit = await get('/conditional', { 'if-none-match': 'W/"other", "/conditional"' });
    expect(hit.status).toBe(304);
    expect(hit.headers['x-cache']).toBe('HIT');
    const since = await get('/conditional', { 'if-modified-since': 'Tue, 03 Jan 2023 00:00:00 GMT' });
    expect(since.status).toBe(304);
    const older = await get('/conditional', { 'if-modified-since': 'Sun, 01 Jan 2023 00:00:00 GMT' });
    expect(older.status).toBe(200);
    const mismatch = await get('/conditional', { 'if-none-match': '"stale"' });
    expect(mismatch.status).toBe(200);
    expect(mismatch.text).toMatch(/^\/conditional #\d+$/);
    expect(originCount('/conditional')).toBe(1);
  });

  it('never stores responses with Set-Cookie, Vary: Authorization, no-store or other statuses', async () => {
    behaviour.set('/cookie', (response) => response.setHeader('set-cookie', 'session=abc').end('personal'));
    behaviour.set('/vary-auth', (response) => response.setHeader('vary', 'Authorization').end('personal'));
    behaviour.set('/private', (response) => response.setHeader('cache-control', 'private, max-age=60').end('personal'));
    behaviour.set('/created', (response) => response.writeHead(201).end('made'));
    for (const path of ['/cookie', '/vary-auth', '/private', '/created']) {
      await get(path);
      const second = await get(path);
      expect(second.headers['x-cache'], path).toBe('MISS');
      expect(originCount(path), path).toBe(2);
    }
    expect((await get('/cookie')).headers['set-cookie']).toEqual(['session=abc']);
  });

  it('stores 404 and 301 responses', async () => {
    behaviour.set('/gone', (response) => response.writeHead(404).end('no'));
    behaviour.set('/moved', (response) => response.writeHead(301, { location: '/new' }).end());
    for (const path of ['/gone', '/moved']) {
      await get(path);
      const second = await get(path);
      expect(second.headers['x-cache'], path).toBe('HIT');
    }
    expect((await get('/moved')).headers.location).toBe('/new');
    expect((await get('/gone')).status).toBe(404);
  });

  it('keeps one variant per Vary header value', async () => {
    behaviour.set('/lang', (response) => response.setHeader('vary', 'Accept-Language').end('hallo'));
    await get('/lang', { 'accept-language': 'nl' });
    expect((await get('/lang', { 'accept-language': 'nl' })).headers['x-cache']).toBe('HIT');
    expect((await get('/lang', { 'accept-language': 'de' })).headers['x-cache']).toBe('MISS');
  });

  it('serves stale within the window when the origin fails, then fetches again when it is back', async () => {
    await get('/short/stale');
    await sleep(1100);
    behaviour.set('/short/stale', (response) => response.writeHead(503).end('down'));
    const stale = await get('/short/stale');
    expect(stale.status).toBe(200);
    expect(stale.headers['x-cache']).toBe('STALE');
    expect(stale.headers['cache-control']).toBe('private, max-age=0');
    expect(stale.text).toMatch(/^\/short\/stale #\d+$/);
    behaviour.set('/short/stale', (response) => response.socket!.resetAndDestroy());
    expect((await get('/short/stale')).headers['x-cache']).toBe('STALE');
    behaviour.delete('/short/stale');
    const fresh = await get('/short/stale');
    expect(fresh.headers['x-cache']).toBe('MISS');
  });

  it('passes the origin failure on when nothing stale is stored', async () => {
    behaviour.set('/short/never', (response) => response.writeHead(503).end('down'));
    const response = await get('/short/never');
    expect(response.status).toBe(503);
    expect(response.headers['x-cache']).toBe('MISS');
  });

  it('sends 200 concurrent requests for one uncached path to the origin once', async () => {
    behaviour.set('/popular', (response) => {
      // Answers slowly enough that every request arrives while the first is in flight.
      setTimeout(() => response.end('popular'), 200);
    });
    const responses = await Promise.all(Array.from({ length: 200 }, () => get('/popular')));
    expect(responses.every((r) => r.status === 200 && r.text === 'popular')).toBe(true);
    expect(originCount('/popular')).toBe(1);
    expect(responses.filter((r) => r.headers['x-cache'] === 'MISS')).toHaveLength(1);
  });

  it('gives requests waiting on a failed origin request its error instead of asking again', async () => {
    behaviour.set('/failing', (response) => {
      setTimeout(() => response.socket!.resetAndDestroy(), 500);
    });
    const responses = await Promise.all(Array.from({ length: 20 }, () => get('/failing')));
    expect(responses.map((r) => r.status)).toEqual(Array(20).fill(502));
    expect(originCount('/failing')).toBe(1);
  });

  it('stays within EDGE_CACHE_MAX_BYTES, evicting the least recently used responses', async () => {
    const body = 'x'.repeat(100 * 1024);
    behaviour.set('/bulk', (response) => response.end(body));
    // Three times the bound passes through the cache.
    for (let i = 0; i < 31; i++) await get(`/bulk?n=${i}`);
    expect(services.edge.cachedBytes).toBeLessThanOrEqual(1024 * 1024);
    expect((await get('/bulk?n=30')).headers['x-cache']).toBe('HIT');
    expect((await get('/bulk?n=0')).headers['x-cache']).toBe('MISS');
  });
});

describe('DELETE /api/storage/edge/proxies/{key}/cache', () => {
  it("purges the proxy's cache, or only the paths under a prefix", async () => {
    await get('/purge/a');
    await get('/purge/b');
    await get('/kept');
    const byPrefix = await rest.delete(`${PROXIES}/cached/cache?path=/purge/a`, { token: tenant.key });
    expect(byPrefix.status).toBe(204);
    expect((await get('/purge/a')).headers['x-cache']).toBe('MISS');
    expect((await get('/purge/b')).headers['x-cache']).toBe('HIT');
    const all = await rest.delete(`${PROXIES}/cached/cache`, { token: tenant.key });
    expect(all.status).toBe(204);
    expect((await get('/purge/b')).headers['x-cache']).toBe('MISS');
    expect((await get('/kept')).headers['x-cache']).toBe('MISS');
  });

  it("keeps the origin's Cache-Tag and Surrogate-Key from clients and purges by tag", async () => {
    const tagged = (header: string, value: string) => (response: import('node:http').ServerResponse) => {
      response.setHeader(header, value);
      response.end('tagged');
    };
    behaviour.set('/tags/a', tagged('cache-tag', 'red,both'));
    behaviour.set('/tags/b', tagged('surrogate-key', 'blue both'));
    behaviour.set('/tags/c', tagged('cache-tag', 'green'));
    for (const path of ['/tags/a', '/tags/b', '/tags/c']) {
      const miss = await get(path);
      expect(miss.headers['x-cache']).toBe('MISS');
      const hit = await get(path);
      expect(hit.headers['x-cache']).toBe('HIT');
      for (const response of [miss, hit]) {
        expect(response.headers['cache-tag']).toBeUndefined();
        expect(response.headers['surrogate-key']).toBeUndefined();
      }
    }
    const purge = (query: string) => rest.delete(`${PROXIES}/cached/cache${query}`, { token: tenant.key });
    expect((await purge('?tag=red')).status).toBe(204);
    expect((await get('/tags/a')).headers['x-cache']).toBe('MISS');
    expect((await get('/tags/b')).headers['x-cache']).toBe('HIT');
    expect((await purge('?tag=blue%2Cgreen')).status).toBe(204);
    expect((await get('/tags/b')).headers['x-cache']).toBe('MISS');
    expect((await get('/tags/c')).headers['x-cache']).toBe('MISS');
    // With a path as well, only tagged responses under it.
    expect((await purge('?tag=both&path=/tags/b')).status).toBe(204);
    expect((await get('/tags/a')).headers['x-cache']).toBe('HIT');
    expect((await get('/tags/b')).headers['x-cache']).toBe('MISS');
  });

  it('drops invalid tags and those beyond the hundredth instead of storing them', async () => {
    const many = Array.from({ length: 150 }, (_, i) => `t${i}`);
    behaviour.set('/tags/many', (response) => {
      response.setHeader('cache-tag', many.join(','));
      response.end('many');
    });
    behaviour.set('/tags/long', (response) => {
      response.setHeader('cache-tag', `${'x'.repeat(1025)} short`);
      response.end('long');
    });
    await get('/tags/many');
    await get('/tags/long');
    const purge = (tag: string) => rest.delete(`${PROXIES}/cached/cache?tag=${tag}`, { token: tenant.key });
    expect((await purge('t120')).status).toBe(204);
    expect((await get('/tags/many')).headers['x-cache']).toBe('HIT');
    expect((await purge('t99')).status).toBe(204);
    expect((await get('/tags/many')).headers['x-cache']).toBe('MISS');
    expect((await get('/tags/long')).headers['x-cache']).toBe('HIT');
    expect((await purge('short')).status).toBe(204);
    expect((await get('/tags/long')).headers['x-cache']).toBe('MISS');
  });

  it('refuses empty, invalid or too many tags and an empty path, purging nothing', async () => {
    await get('/refused');
    const tooMany = Array.from({ length: 101 }, (_, i) => `t${i}`).join(',');
    for (const query of [
      '?path=&tag=',
      '?tag=',
      '?tag=%2C%20',
      '?path=',
      '?tag=a%01b',
      `?tag=${'x'.repeat(1025)}`,
      `?tag=${tooMany}`,
      '?tag=a&tag=b',
    ]) {
      const response = await rest.delete(`${PROXIES}/cached/cache${query}`, { token: tenant.key });
      expect(response.status, query).toBe(400);
      expect(response.body.error.code, query).toBe(400);
      expect(response.body.error.message, query).toMatch(/path|tag/);
    }
    expect((await get('/refused')).headers['x-cache']).toBe('HIT');
  });

  it('needs proxies:write, a proxy of the caller\'s tenant and a path starting with "/"', async () => {
    await get('/guarded');
    const reader = await createKey(rest, tenant.id, ['proxies:read']);
    const other = await createTenant(rest, 'Other tenant');
    const attempts = [
      [await rest.delete(`${PROXIES}/cached/cache`, { token: reader }), 403],
      [await rest.delete(`${PROXIES}/cached/cache`, { token: other.key }), 404],
      [await rest.delete(`${PROXIES}/cached/cache`), 401],
      [await rest.delete(`${PROXIES}/no-such/cache`, { token: tenant.key }), 404],
      [await rest.delete(`${PROXIES}/cached/cache?path=guarded`, { token: tenant.key }), 400],
      [await rest.delete(`${PROXIES}/cached/cache?prefix=/`, { token: tenant.key }), 400],
    ] as const;
    for (const [response, status] of attempts) expect(response.status).toBe(status);
    expect((await get('/guarded')).headers['x-cache']).toBe('HIT');
  });
});
