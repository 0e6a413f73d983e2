/**
 * Compression of cached responses (`settings.cache.compression`): gzip and brotli negotiated from
 * Accept-Encoding, stored compressed, Vary and Content-Length right, weak ETags, never an origin's
 * encoded answer compressed again, and the settings the API refuses.
 */
import { brotliDecompressSync, gunzipSync, gzipSync } from 'node:zlib';
import { beforeAll, describe, expect, it } from 'vitest';
import { createTenant, type Tenant } from '../helpers/app';
import { sql } from '../helpers/db';
import { expectRestError } from '../helpers/rest';
import { edgeGet, edgeRequest, proxyWith, startEdgeApp, startOrigin } from '../helpers/edge';

const { rest, baseUrl, databaseUrl } = await startEdgeApp();
const PROXIES = '/api/storage/edge/proxies';

const PAGE = `<html><body>${'<p>The same paragraph, again and again.</p>'.repeat(400)}</body></html>`;
const LARGE = JSON.stringify(Array.from({ length: 40_000 }, (_, i) => ({ id: i, name: `item ${i}` })));
const PRE_GZIPPED = gzipSync(Buffer.from(PAGE));

const origin = await startOrigin((request, response) => {
  const path = request.url!.split('?')[0]!.replace(/^\/(on|off)/, '');
  response.setHeader('etag', '"v1"');
  if (path.startsWith('/page')) response.setHeader('content-type', 'text/html; charset=utf-8');
  // Text, not JSON: the test client would parse a JSON body before it is decompressed.
  if (path === '/large.txt') return void response.setHeader('content-type', 'text/plain').end(LARGE);
  if (path === '/small.txt') return void response.setHeader('content-type', 'text/plain').end('tiny');
  if (path === '/image.png') return void response.setHeader('content-type', 'image/png').end(Buffer.alloc(4096, 7));
  if (path === '/encoded') {
    response.setHeader('content-type', 'text/html');
    response.setHeader('content-encoding', 'gzip');
    return void response.end(PRE_GZIPPED);
  }
  if (path === '/no-transform') {
    response.setHeader('content-type', 'text/html');
    response.setHeader('cache-control', 'no-transform');
  }
  response.end(PAGE);
});

let tenant: Tenant;
beforeAll(async () => {
  tenant = await createTenant(rest, 'Compression tenant');
  const created = await rest.post(PROXIES, {
    token: tenant.key,
    body: proxyWith('packed', [
      {
        path: '/on',
        origin: { uri: `${origin.url}/on` },
        settings: { cache: { age: 300, compression: { is_enabled: true } } },
      },
      { path: '/off', origin: { uri: `${origin.url}/off` }, settings: { cache: { age: 300 } } },
    ]),
  });
  expect(created.status, created.rawBody).toBe(201);
});

const get = (path: string, acceptEncoding?: string) =>
  edgeGet(`${baseUrl}/edge/packed${path}`, acceptEncoding === undefined ? {} : { 'accept-encoding': acceptEncoding });

/** The body as the client would read it after undoing its Content-Encoding. */
function decoded(response: { headers: Record<string, unknown>; body: Buffer }): string {
  const encoding = response.headers['content-encoding'];
  if (encoding === 'br') return brotliDecompressSync(response.body).toString();
  if (encoding === 'gzip') return gunzipSync(response.body).toString();
  return response.body.toString();
}

describe('compression', () => {
  it('stores brotli and gzip forms and answers each client with the one it prefers', async () => {
    const miss = await get('/on/page', 'gzip, br');
    expect(miss.headers['x-cache']).toBe('MISS');
    expect(miss.headers.vary).toBe('accept-encoding');
    expect(miss.text).toBe(PAGE);
    const cases: [string | undefined, string | undefined][] = [
      ['gzip, deflate, br, zstd', 'br'],
      ['gzip', 'gzip'],
      ['br;q=0, gzip', 'gzip'],
      ['gzip;q=0.5, br;q=0.4', 'gzip'],
      ['*', 'br'],
      ['identity', undefined],
      ['gzip;q=0, br;q=0', undefined],
      [undefined, undefined],
    ];
    for (const [accept, expected] of cases) {
      const hit = await get('/on/page', accept);
      expect(hit.headers['x-cache'], accept).toBe('HIT');
      expect(hit.headers['content-encoding'], accept).toBe(expected);
      expect(Number(hit.headers['content-length']), accept).toBe(hit.body.length);
      expect(hit.headers.vary).toBe('accept-encoding');
      expect(decoded(hit)).toBe(PAGE);
      if (expected !== undefined) expect(hit.body.length).toBeLessThan(PAGE.length / 10);
      expect(hit.headers.etag).toBe(expected === undefined ? '"v1"' : 'W/"v1"');
    }
  });

  it('answers HEAD with the length of the form it would send, and validators with 304', async () => {
    await get('/on/page-head');
    const get1 = await get('/on/page-head', 'br');
    const head = await edgeRequest(`${baseUrl}/edge/packed/on/page-head`, {
      method: 'HEAD',
      headers: { 'accept-encoding': 'br' },
    });
    expect(head.headers['content-encoding']).toBe('br');
    expect(Number(head.headers['content-length'])).toBe(get1.body.length);
    const notModified = await edgeGet(`${baseUrl}/edge/packed/on/page-head`, {
      'accept-encoding': 'gzip',
      'if-none-match': 'W/"v1"',
    });
    expect(notModified.status).toBe(304);
  });

  it('compresses a large body off the event loop', async () => {
    await get('/on/large.txt');
    const hit = await get('/on/large.txt', 'gzip');
    expect(hit.headers['content-encoding']).toBe('gzip');
    expect(JSON.parse(decoded(hit))).toHaveLength(40_000);
  });

  it('leaves small bodies, binary types, no-transform and routes without the setting as they are', async () => {
    for (const path of ['/on/small.txt', '/on/image.png', '/on/no-transform', '/off/page']) {
      await get(path);
      const hit = await get(path, 'gzip, br');
      expect(hit.headers['x-cache'], path).toBe('HIT');
      expect(hit.headers['content-encoding'], path).toBeUndefined();
      expect(hit.headers.vary, path).toBeUndefined();
    }
  });

  it('never compresses an answer the origin encoded itself', async () => {
    await get('/on/encoded', 'gzip');
    const hit = await get('/on/encoded', 'gzip, br');
    expect(hit.headers['x-cache']).toBe('HIT');
    expect(hit.headers['content-encoding']).toBe('gzip');
    expect(hit.body.equals(PRE_GZIPPED)).toBe(true);
    expect(Number(hit.headers['content-length'])).toBe(PRE_GZIPPED.length);
  });

  it('answers a hostile Accept-Encoding', async () => {
    await get('/on/page-hostile');
    const junk = Array.from({ length: 600 }, (_, i) => `c${i};q=0.${i % 10}`).join(',');
    const hit = await get('/on/page-hostile', junk);
    expect(hit.status).toBe(200);
    expect(decoded(hit)).toBe(PAGE);
  });
});

describe('refused compression settings', () => {
  const stored = () => sql(databaseUrl, "SELECT routes, updated_at FROM proxies WHERE key = 'packed'");
  it.each([
    ['a negative size', { is_enabled: true, min_bytes: -1 }],
    ['a size beyond the bound', { is_enabled: true, min_bytes: 1e12 }],
    ['a fractional size', { is_enabled: true, min_bytes: 1.5 }],
    ['a string for the flag', { is_enabled: 'yes' }],
    ['an unknown field', { is_enabled: true, level: 9 }],
    ['a list', [true]],
  ])('refuses %s with a 400 that changes nothing', async (_name, compression) => {
    const before = await stored();
    const response = await rest.put(`${PROXIES}/packed`, {
      token: tenant.key,
      body: proxyWith('packed', { path: '/', origin: { uri: origin.url }, settings: { cache: { compression } } }),
    });
    expectRestError(response, 400);
    expect(await stored()).toEqual(before);
  });
});
