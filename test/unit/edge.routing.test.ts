import { describe, expect, it } from 'vitest';
import {
  matchRoute,
  normalizePath,
  originUrl,
  withoutQueryParameters,
  type EdgeRoute,
} from '../../src/modules/edge/routing';

const route = (path: string, uri = `https://origin.example${path === '*' ? '' : path}`): EdgeRoute => ({
  path,
  origin: { uri, is_bucket: null },
  settings: {
    cache: { age: null, is_as_origin: null, is_public: null, stale_while_revalidate: null },
    auth: { is_required: null, scope: null },
  },
});

describe('matchRoute', () => {
  const routes = [route('/images'), route('/images/large/'), route('*'), route('/api')];

  it('picks the longest prefix that matches on a segment boundary', () => {
    expect(matchRoute(routes, '/images/large/a.jpg')).toMatchObject({
      route: { path: '/images/large/' },
      rest: '/a.jpg',
      isWildcard: false,
    });
    expect(matchRoute(routes, '/images/a.jpg')).toMatchObject({ route: { path: '/images' }, rest: '/a.jpg' });
    expect(matchRoute(routes, '/images')).toMatchObject({ route: { path: '/images' }, rest: '' });
    expect(matchRoute(routes, '/images/large')).toMatchObject({ route: { path: '/images/large/' }, rest: '' });
  });

  it('falls back to the wildcard route, with the whole path', () => {
    expect(matchRoute(routes, '/imagesx')).toMatchObject({ route: { path: '*' }, rest: '/imagesx', isWildcard: true });
    expect(matchRoute([route('/a')], '/b')).toBeNull();
  });

  it('lets "/" match every path, below any longer prefix', () => {
    expect(matchRoute([route('/'), route('/a')], '/a/b')).toMatchObject({ route: { path: '/a' }, rest: '/b' });
    expect(matchRoute([route('/'), route('/a')], '/c')).toMatchObject({ route: { path: '/' }, rest: '/c' });
  });
});

describe('originUrl', () => {
  it('appends the rest of the path and the query to the origin URI', () => {
    expect(originUrl('https://cdn.example/img/', '/a.jpg', 'w=1').href).toBe('https://cdn.example/img/a.jpg?w=1');
    expect(originUrl('https://cdn.example', '', '').href).toBe('https://cdn.example/');
    expect(originUrl('http://o.example:8080/base?x=1#frag', '/p', 'y=2').href).toBe(
      'http://o.example:8080/base/p?x=1&y=2',
    );
  });
});

describe('normalizePath', () => {
  it('resolves dot segments, encoded ones too, and never reads "//host" as a host', () => {
    expect(normalizePath('/a/../b')).toBe('/b');
    expect(normalizePath('/a/%2e%2e/b')).toBe('/b');
    expect(normalizePath('/../../etc')).toBe('/etc');
    expect(normalizePath('//evil.example/x')).toBe('//evil.example/x');
    expect(normalizePath('')).toBe('/');
    expect(normalizePath('relative')).toBeNull();
    expect(normalizePath('/a/b.c/..')).toBe('/a/');
    expect(normalizePath('/a/.')).toBe('/a/');
    expect(normalizePath('/a/..b/.c/c..')).toBe('/a/..b/.c/c..');
    expect(normalizePath('/a b/é')).toBe('/a%20b/%C3%A9');
    expect(normalizePath('/plain/path-1_x~.html')).toBe('/plain/path-1_x~.html');
  });
});

describe('withoutQueryParameters', () => {
  it('removes the named parameters and keeps the rest byte for byte', () => {
    expect(withoutQueryParameters('a=%20&expires=1&b=2&signature=ff', ['expires', 'signature'])).toBe('a=%20&b=2');
    expect(withoutQueryParameters('sig%6eature=1&x', ['signature'])).toBe('x');
    expect(withoutQueryParameters('', ['x'])).toBe('');
  });
});
