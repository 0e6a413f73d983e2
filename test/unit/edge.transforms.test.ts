import { describe, expect, it } from 'vitest';
import { keyedQuery, keyRuleOf, keySuffix, withVary } from '../../src/modules/edge/cache-key';
import { compressibleHeaders, encodedHeaders, preferredEncoding } from '../../src/modules/edge/compression';
import { asksForTransform, imageRequestOf } from '../../src/modules/edge/images';

describe('cache-key rules', () => {
  it('changes nothing without settings, and is made once per settings object', () => {
    expect(keyRuleOf(null)).toBeNull();
    expect(keyRuleOf({ sort_query: false, headers: [] })).toBeNull();
    const settings = { sort_query: true };
    expect(keyRuleOf(settings)).toBe(keyRuleOf(settings));
    expect(keyedQuery('b=1&a=2', null)).toBe('b=1&a=2');
  });

  it('leaves out ignored names and prefixes, decoded, and keeps the rest byte for byte', () => {
    const rule = keyRuleOf({ ignore_query: ['ref*', 'a b'], ignore_tracking_query: true });
    expect(keyedQuery('x=%20&utm_source=1&referrer=2&a+b=3&a%20b=4&y', rule)).toBe('x=%20&y');
    expect(keyedQuery('gclid=1&fbclid=2&msclkid=3', rule)).toBe('');
    expect(keyedQuery('bad%zz=1&%E0=2', rule)).toBe('bad%zz=1&%E0=2');
  });

  it('keeps only listed names, minus tracking ones, and sorts stably by name', () => {
    const rule = keyRuleOf({ only_query: ['p*', 'utm_x'], ignore_tracking_query: true, sort_query: true });
    expect(keyedQuery('q=1&pz=2&pa=3&pa=1&utm_x=9&&', rule)).toBe('pa=3&pa=1&pz=2');
  });

  it('adds header and cookie values after a line feed each', () => {
    const rule = keyRuleOf({ headers: ['x-country'], cookies: ['currency'] });
    expect(keySuffix({ 'x-country': 'NL', cookie: 'a=1; currency=EUR' }, rule)).toBe(
      '\nh x-country:NL\nc currency=EUR',
    );
    expect(keySuffix({}, rule)).toBe('\nh x-country:\nc currency=');
    expect(rule!.vary).toEqual(['x-country', 'cookie']);
  });

  it('adds names to Vary once, and never to Vary: *', () => {
    expect(withVary({ vary: 'Origin' }, ['cookie'])).toEqual({ vary: 'Origin, cookie' });
    expect(withVary({ vary: 'Cookie' }, ['cookie'])).toEqual({ vary: 'Cookie' });
    expect(withVary({ vary: '*' }, ['cookie'])).toEqual({ vary: '*' });
    expect(withVary({}, [])).toEqual({});
  });
});

describe('compression', () => {
  const both = { br: Buffer.from('b'), gzip: Buffer.from('g') };
  it('prefers brotli at equal q, honours q=0 and falls back to what is stored', () => {
    expect(preferredEncoding('gzip, br', both)).toBe('br');
    expect(preferredEncoding('gzip;q=1, br;q=0.5', both)).toBe('gzip');
    expect(preferredEncoding('br;q=0', both)).toBeNull();
    expect(preferredEncoding('br', { gzip: both.gzip })).toBeNull();
    expect(preferredEncoding('br, gzip', { gzip: both.gzip })).toBe('gzip');
    expect(preferredEncoding(undefined, both)).toBeNull();
    expect(preferredEncoding('gzip', undefined)).toBeNull();
    expect(preferredEncoding('x'.repeat(10_000), both)).toBeNull();
  });

  it('compresses text-like types only, never an encoded or no-transform answer', () => {
    expect(compressibleHeaders({ 'content-type': 'text/html; charset=utf-8' })).toBe(true);
    expect(compressibleHeaders({ 'content-type': 'application/vnd.api+json' })).toBe(true);
    expect(compressibleHeaders({ 'content-type': 'image/png' })).toBe(false);
    expect(compressibleHeaders({ 'content-type': 'text/html', 'content-encoding': 'gzip' })).toBe(false);
    expect(compressibleHeaders({ 'content-type': 'text/html', 'cache-control': 'public, no-transform' })).toBe(false);
  });

  it('makes the ETag of an encoded form weak', () => {
    expect(encodedHeaders({ etag: '"v1"' }, 'br')).toEqual({ etag: 'W/"v1"', 'content-encoding': 'br' });
    expect(encodedHeaders({ etag: 'W/"v1"' }, 'gzip').etag).toBe('W/"v1"');
  });
});

describe('image options', () => {
  it('reads the options and their signed form in a fixed order', () => {
    expect(asksForTransform('a=1&w=2')).toBe(true);
    expect(asksForTransform('width=2')).toBe(false);
    expect(imageRequestOf('q=80&format=webp&w=200&x=1')).toEqual({
      width: 200,
      height: undefined,
      fit: 'cover',
      format: 'webp',
      quality: 80,
      canonical: 'w=200&format=webp&q=80',
    });
  });

  it.each(['w=0', 'w=4097', 'h=-1', 'w=1.5', 'fit=crop', 'format=gif', 'q=0', 'q=abc', 'w=1&w=2'])(
    'refuses %s',
    (query) => expect(() => imageRequestOf(query)).toThrow(/image option/),
  );
});
