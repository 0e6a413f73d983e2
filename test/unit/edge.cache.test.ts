import { describe, expect, it } from 'vitest';
import { freshnessSeconds, isNotModified, revalidationSeconds, usesCache } from '../../src/modules/edge/cache-policy';
import { MAX_TAG_BYTES, MAX_TAGS, responseTags, splitTags, tagProblem } from '../../src/modules/edge/cache-tags';
import { isPublicAddress } from '../../src/modules/edge/origin-address';
import { entrySize, ResponseCache, type CachedResponse } from '../../src/modules/edge/response-cache';

const NOW = Date.parse('2024-05-01T12:00:00Z');
const route = (age: number | null, is_as_origin: boolean | null = null) => ({
  age,
  is_as_origin,
  is_public: null,
  stale_while_revalidate: null,
});

describe('freshnessSeconds', () => {
  it('uses the route age unless is_as_origin', () => {
    expect(freshnessSeconds(route(60), 200, { 'cache-control': 'max-age=5' }, NOW)).toBe(60);
    expect(freshnessSeconds(route(null), 200, {}, NOW)).toBe(0);
    expect(usesCache(route(0))).toBe(false);
    expect(usesCache(route(null, true))).toBe(true);
  });

  it('follows s-maxage, max-age (less Age) and Expires with is_as_origin', () => {
    const asOrigin = route(999, true);
    expect(freshnessSeconds(asOrigin, 200, { 'cache-control': 'public, max-age=60, s-maxage=30' }, NOW)).toBe(30);
    expect(freshnessSeconds(asOrigin, 200, { 'cache-control': 'max-age=60', age: '20' }, NOW)).toBe(40);
    expect(
      freshnessSeconds(
        asOrigin,
        200,
        { date: new Date(NOW).toUTCString(), expires: new Date(NOW + 90_000).toUTCString() },
        NOW,
      ),
    ).toBe(90);
    expect(freshnessSeconds(asOrigin, 200, { expires: '0' }, NOW)).toBe(0);
    expect(freshnessSeconds(asOrigin, 200, { 'cache-control': 'no-cache, max-age=60' }, NOW)).toBe(0);
    expect(freshnessSeconds(asOrigin, 200, {}, NOW)).toBe(0);
  });

  it('never stores other statuses, Set-Cookie, Vary: * or Authorization, no-store or private', () => {
    for (const status of [201, 206, 302, 500]) expect(freshnessSeconds(route(60), status, {}, NOW)).toBe(0);
    for (const status of [200, 301, 404]) expect(freshnessSeconds(route(60), status, {}, NOW)).toBe(60);
    expect(freshnessSeconds(route(60), 200, { 'set-cookie': ['a=1'] }, NOW)).toBe(0);
    expect(freshnessSeconds(route(60), 200, { vary: '*' }, NOW)).toBe(0);
    expect(freshnessSeconds(route(60), 200, { vary: 'Accept-Encoding, Authorization' }, NOW)).toBe(0);
    expect(freshnessSeconds(route(60), 200, { 'cache-control': 'no-store' }, NOW)).toBe(0);
    expect(freshnessSeconds(route(60), 200, { 'cache-control': 'private' }, NOW)).toBe(0);
  });
});

describe('isNotModified', () => {
  const validators = { etag: '"v1"', lastModified: 'Mon, 02 Jan 2023 03:04:05 GMT' };
  it('compares entity tags weakly and prefers If-None-Match over If-Modified-Since', () => {
    expect(isNotModified({ 'if-none-match': 'W/"v1"' }, validators)).toBe(true);
    expect(isNotModified({ 'if-none-match': '"v0", "v1"' }, validators)).toBe(true);
    expect(isNotModified({ 'if-none-match': '*' }, validators)).toBe(true);
    expect(
      isNotModified({ 'if-none-match': '"v2"', 'if-modified-since': 'Tue, 03 Jan 2023 00:00:00 GMT' }, validators),
    ).toBe(false);
    expect(isNotModified({ 'if-modified-since': 'Mon, 02 Jan 2023 03:04:05 GMT' }, validators)).toBe(true);
    expect(isNotModified({ 'if-modified-since': 'Sun, 01 Jan 2023 00:00:00 GMT' }, validators)).toBe(false);
    expect(isNotModified({ 'if-modified-since': 'garbage' }, validators)).toBe(false);
    expect(isNotModified({}, validators)).toBe(false);
  });
});

describe('isPublicAddress', () => {
  it('refuses loopback, private, link-local, metadata and mapped addresses', () => {
    for (const address of [
      '127.0.0.1',
      '10.0.0.1',
      '172.16.5.4',
      '192.168.1.1',
      '169.254.169.254',
      '100.64.0.1',
      '0.0.0.0',
      '::1',
      '::',
      'fe80::1',
      'fd00:ec2::254',
      '::ffff:127.0.0.1',
      '::ffff:7f00:1',
      '::ffff:10.0.0.1',
      '64:ff9b::808:808',
      '224.0.0.1',
      'not-an-ip',
    ]) {
      expect(isPublicAddress(address), address).toBe(false);
    }
    for (const address of ['8.8.8.8', '93.184.216.34', '172.32.0.1', '::ffff:8.8.8.8', '2606:4700:4700::1111'])
      expect(isPublicAddress(address), address).toBe(true);
  });
});

describe('revalidationSeconds', () => {
  it("takes the origin's stale-while-revalidate with is_as_origin, the route's setting otherwise", () => {
    const headers = { 'cache-control': 'max-age=60, stale-while-revalidate=30' };
    expect(revalidationSeconds(route(60, true), headers)).toBe(30);
    expect(revalidationSeconds(route(60, true), { 'cache-control': 'max-age=60' })).toBe(0);
    expect(revalidationSeconds(route(60, true), { 'cache-control': 'stale-while-revalidate=soon' })).toBe(0);
    expect(revalidationSeconds(route(60), headers)).toBe(0);
    expect(revalidationSeconds({ ...route(60), stale_while_revalidate: 120 }, headers)).toBe(120);
  });
});

describe('ResponseCache', () => {
  const entry = (bytes: number, staleUntil = NOW + 60_000): CachedResponse => ({
    status: 200,
    headers: {},
    body: Buffer.alloc(bytes),
    storedAt: NOW,
    initialAgeSeconds: 0,
    freshUntil: NOW + 1000,
    revalidateUntil: NOW + 1000,
    staleIfErrorUntil: staleUntil,
    staleUntil,
    visibility: 'public',
    varyOn: {},
    tags: [],
  });

  it('evicts the least recently used entries beyond its bound in bytes', () => {
    const cache = new ResponseCache(10_000);
    cache.set('a', entry(2000));
    cache.set('b', entry(2000));
    cache.set('c', entry(2000));
    expect(cache.get('a', NOW)).toBeDefined(); // now b is the least recently used
    cache.set('d', entry(2000));
    cache.set('e', entry(2000));
    expect(cache.size).toBeLessThanOrEqual(10_000);
    expect(cache.get('b', NOW)).toBeUndefined();
    expect(cache.get('a', NOW)).toBeDefined();
    expect(cache.get('e', NOW)).toBeDefined();
  });

  it('stays within its bound in bytes when filled with three times as much', () => {
    const cache = new ResponseCache(100_000);
    const keys = Array.from({ length: 300 }, (_, i) => `p\n/fill/${i}`);
    let offered = 0;
    for (const key of keys) {
      const filler = entry(500 + (key.length % 7) * 100);
      expect(cache.set(key, filler)).toBe(true);
      offered += entrySize(key, filler);
      expect(cache.size).toBeLessThanOrEqual(100_000);
    }
    expect(offered).toBeGreaterThanOrEqual(3 * 100_000);
    // Most of the bound is in use, by the newest entries; the oldest went first.
    expect(cache.size).toBeGreaterThan(90_000);
    expect(cache.get(keys.at(-1)!, NOW)).toBeDefined();
    expect(cache.get(keys[0]!, NOW)).toBeUndefined();
  });

  it('refuses entries over a quarter of the bound, forgets entries past their stale window, purges by prefix', () => {
    const cache = new ResponseCache(10_000);
    expect(cache.set('big', entry(3000))).toBe(false);
    cache.set('old', entry(10, NOW));
    expect(cache.get('old', NOW)).toBeUndefined();
    cache.set('p\n/a/1', entry(10));
    cache.set('p\n/a/2', entry(10));
    cache.set('p\n/b', entry(10));
    cache.set('q\n/a/1', entry(10));
    expect(cache.deleteByPrefix('p\n/a/')).toBe(2);
    expect(cache.get('p\n/b', NOW)).toBeDefined();
    expect(cache.get('q\n/a/1', NOW)).toBeDefined();
    expect(cache.deleteByPrefix('p\n')).toBe(1);
    cache.delete('q\n/a/1');
    expect(cache.size).toBe(0);
  });

  it('purges by tag within a prefix, and clears', () => {
    const cache = new ResponseCache(10_000);
    cache.set('p\n/a', { ...entry(10), tags: ['red', 'both'] });
    cache.set('p\n/b', { ...entry(10), tags: ['blue', 'both'] });
    cache.set('p\n/c', entry(10));
    cache.set('q\n/a', { ...entry(10), tags: ['red'] });
    expect(cache.deleteByPrefix('p\n', new Set(['red', 'green']))).toBe(1);
    expect(cache.get('q\n/a', NOW)).toBeDefined();
    expect(cache.deleteByPrefix('p\n/c', new Set(['both']))).toBe(0);
    expect(cache.deleteByPrefix('p\n', new Set(['both']))).toBe(1);
    expect(cache.get('p\n/c', NOW)).toBeDefined();
    cache.clear();
    expect(cache.size).toBe(0);
  });
});

describe('cache tags', () => {
  it('reads Cache-Tag and Surrogate-Key, separated by commas or spaces, without duplicates', () => {
    expect(responseTags({ 'cache-tag': 'a, b,c  d', 'surrogate-key': 'd e' })).toEqual(['a', 'b', 'c', 'd', 'e']);
    expect(responseTags({ 'surrogate-key': ['x', 'y z'] as unknown as string })).toEqual(['x', 'y', 'z']);
    expect(responseTags({})).toEqual([]);
  });

  it('drops tags with control characters or over 1 KiB, and those beyond the first 100', () => {
    const long = 'x'.repeat(MAX_TAG_BYTES + 1);
    expect(responseTags({ 'cache-tag': `ok,bad\u0001tag,tab\tbed,${long},${'é'.repeat(513)},fine` })).toEqual([
      'ok',
      'fine',
    ]);
    const many = Array.from({ length: 150 }, (_, i) => `t${i}`);
    expect(responseTags({ 'cache-tag': many.join(' ') })).toEqual(many.slice(0, MAX_TAGS));
  });

  it('says what is wrong with a tag, and splits purge lists alike', () => {
    expect(tagProblem('product-1')).toBeNull();
    expect(tagProblem('')).toBe('is empty');
    expect(tagProblem('a\u007fb')).toBe('contains a control character');
    expect(tagProblem('x'.repeat(1025))).toBe('is longer than 1024 bytes');
    expect(splitTags(' a,,b c ')).toEqual(['a', 'b', 'c']);
    expect(splitTags(' , ')).toEqual([]);
  });
});
