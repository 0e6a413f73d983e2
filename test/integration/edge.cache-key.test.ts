/**
 * Cache-key rules of a route (`settings.cache.key`): ignored, kept, tracking and sorted query
 * parameters, what the origin receives, request headers and cookies in the key, and the settings
 * the API refuses (leaving the stored proxy as it was), hostile lists and requests included.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { createTenant, type Tenant } from '../helpers/app';
import { sql } from '../helpers/db';
import { expectRestError } from '../helpers/rest';
import { edgeGet, proxyWith, startEdgeApp, startOrigin } from '../helpers/edge';

const { rest, baseUrl, databaseUrl } = await startEdgeApp();
const PROXIES = '/api/storage/edge/proxies';

let served = 0;
const origin = await startOrigin((request, response) => {
  served += 1;
  response.setHeader('content-type', 'text/plain');
  response.end(`${request.url} #${served}`);
});
const originQueries = (path: string) =>
  origin.requests.filter((r) => r.url.split('?')[0] === path).map((r) => r.url.split('?')[1] ?? '');

const route = (path: string, key: unknown) => ({
  path,
  origin: { uri: `${origin.url}${path}` },
  settings: { cache: { age: 300, key } },
});

let tenant: Tenant;
beforeAll(async () => {
  tenant = await createTenant(rest, 'Cache key tenant');
  const created = await rest.post(PROXIES, {
    token: tenant.key,
    body: proxyWith('keyed', [
      route('/tracking', { ignore_tracking_query: true, sort_query: true }),
      route('/only', { only_query: ['page', 'sort*'], origin_query: 'keyed' }),
      route('/ignore', { ignore_query: ['session', 'ref*'] }),
      route('/headers', { headers: ['X-Country'], cookies: ['currency'] }),
      route('/sorted', { sort_query: true }),
      { path: '/plain', origin: { uri: `${origin.url}/plain` }, settings: { cache: { age: 300 } } },
    ]),
  });
  expect(created.status, created.rawBody).toBe(201);
  expect(created.body.data.routes[1].settings.cache.key).toEqual({
    ignore_query: null,
    only_query: ['page', 'sort*'],
    ignore_tracking_query: null,
    sort_query: null,
    headers: null,
    cookies: null,
    origin_query: 'keyed',
  });
  expect(created.body.data.routes[3].settings.cache.key.headers).toEqual(['x-country']);
});

const get = (path: string, headers: Record<string, string> = {}) => edgeGet(`${baseUrl}/edge/keyed${path}`, headers);

describe('query parameters in the key', () => {
  it('leaves tracking parameters out and sorts the rest, while the origin gets the query as sent', async () => {
    const first = await get('/tracking?b=2&a=1&utm_source=mail&utm_medium=x');
    expect(first.headers['x-cache']).toBe('MISS');
    const second = await get('/tracking?a=1&gclid=abc&b=2&fbclid=z&msclkid=q');
    expect(second.headers['x-cache']).toBe('HIT');
    expect(second.text).toBe(first.text);
    expect((await get('/tracking?a=1&b=3')).headers['x-cache']).toBe('MISS');
    expect(originQueries('/tracking')).toEqual(['b=2&a=1&utm_source=mail&utm_medium=x', 'a=1&b=3']);
  });

  it('keeps only the listed parameters and sends the origin the keyed query when asked', async () => {
    expect((await get('/only?junk=1&page=2&sort_by=name')).headers['x-cache']).toBe('MISS');
    expect((await get('/only?page=2&other=x&sort_by=name')).headers['x-cache']).toBe('HIT');
    expect((await get('/only?page=3')).headers['x-cache']).toBe('MISS');
    expect(originQueries('/only')).toEqual(['page=2&sort_by=name', 'page=3']);
  });

  it('ignores listed parameters and prefixes, but keeps their order otherwise', async () => {
    expect((await get('/ignore?x=1&session=a&referrer=b')).headers['x-cache']).toBe('MISS');
    expect((await get('/ignore?x=1&session=c')).headers['x-cache']).toBe('HIT');
    expect((await get('/ignore?x=1&y=2')).headers['x-cache']).toBe('MISS');
    expect((await get('/ignore?y=2&x=1')).headers['x-cache']).toBe('MISS');
  });

  it('keeps every parameter as sent on a route without a key rule', async () => {
    expect((await get('/plain?a=1&utm_source=x')).headers['x-cache']).toBe('MISS');
    expect((await get('/plain?a=1')).headers['x-cache']).toBe('MISS');
    expect((await get('/plain?a=1&utm_source=x')).headers['x-cache']).toBe('HIT');
  });

  it('serves a query of a thousand and more parameters in linear time', async () => {
    const query = Array.from({ length: 1500 }, (_, i) => `p${1500 - i}=${i}`).join('&');
    const started = performance.now();
    expect((await get(`/sorted?${query}`)).status).toBe(200);
    expect((await get(`/sorted?${query}`)).headers['x-cache']).toBe('HIT');
    expect(performance.now() - started).toBeLessThan(2000);
  });
});

describe('headers and cookies in the key', () => {
  it('keeps one entry per header and cookie value and says so in Vary', async () => {
    const nl = await get('/headers/a', { 'x-country': 'NL', cookie: 'currency=EUR; other=1' });
    expect(nl.headers['x-cache']).toBe('MISS');
    expect(nl.headers.vary).toBe('x-country, cookie');
    const again = await get('/headers/a', { 'x-country': 'NL', cookie: 'other=2; currency=EUR' });
    expect(again.headers['x-cache']).toBe('HIT');
    expect(again.headers.vary).toBe('x-country, cookie');
    expect((await get('/headers/a', { 'x-country': 'DE', cookie: 'currency=EUR' })).headers['x-cache']).toBe('MISS');
    expect((await get('/headers/a', { 'x-country': 'NL', cookie: 'currency=USD' })).headers['x-cache']).toBe('MISS');
    expect((await get('/headers/a', { 'x-country': 'NL' })).headers['x-cache']).toBe('MISS');
  });

  it('is purged by path with every header variant', async () => {
    for (const country of ['NL', 'DE', 'FR']) await get('/headers/b', { 'x-country': country });
    const purged = await rest.delete(`${PROXIES}/keyed/cache?path=/headers/b`, { token: tenant.key });
    expect(purged.status).toBe(204);
    for (const country of ['NL', 'DE', 'FR']) {
      expect((await get('/headers/b', { 'x-country': country })).headers['x-cache']).toBe('MISS');
    }
  });

  it('keeps many header values apart', async () => {
    for (let i = 0; i < 50; i++)
      expect((await get('/headers/c', { 'x-country': `C${i}` })).headers['x-cache']).toBe('MISS');
    for (let i = 0; i < 50; i++) {
      const hit = await get('/headers/c', { 'x-country': `C${i}` });
      expect(hit.headers['x-cache']).toBe('HIT');
    }
  });
});

describe('refused key settings', () => {
  const stored = () => sql(databaseUrl, "SELECT routes, updated_at FROM proxies WHERE key = 'keyed'");
  const replaceWith = (key: unknown) =>
    rest.put(`${PROXIES}/keyed`, { token: tenant.key, body: proxyWith('keyed', route('/x', key)) });

  it.each([
    ['both lists', { ignore_query: ['a'], only_query: ['b'] }],
    ['a huge list of parameters', { ignore_query: Array.from({ length: 10_000 }, (_, i) => `p${i}`) }],
    ['an overlong parameter name', { ignore_query: ['p'.repeat(129)] }],
    ['a parameter name with "&"', { ignore_query: ['a&b'] }],
    ['a star inside a name', { only_query: ['a*b'] }],
    ['a very long header name', { headers: ['x'.repeat(100_000)] }],
    ['a header name with a space', { headers: ['x country'] }],
    ['Authorization in the key', { headers: ['Authorization'] }],
    ['too many headers', { headers: Array.from({ length: 21 }, (_, i) => `x-h${i}`) }],
    ['too many cookies', { cookies: Array.from({ length: 21 }, (_, i) => `c${i}`) }],
    ['a cookie name with "="', { cookies: ['a=b'] }],
    ['an unknown origin_query', { origin_query: 'stripped' }],
    ['an unknown field', { ignore: ['a'] }],
    ['a string for a list', { headers: 'x-country' }],
  ])('refuses %s with a 400 that changes nothing', async (_name, key) => {
    const before = await stored();
    const response = await replaceWith(key);
    expectRestError(response, 400);
    expect(await stored()).toEqual(before);
  });
});
