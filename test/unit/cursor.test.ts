import { describe, expect, it } from 'vitest';
import { createCursorCodec } from '../../src/kernel/cursor';
import { AppError } from '../../src/kernel/errors';
import { pageBlock } from '../../src/kernel/rest/page-links';

describe('cursor codec', () => {
  const codec = createCursorCodec('secret');

  it('round-trips a key within its scope', () => {
    expect(codec.decode('proxies:t1', codec.encode('proxies:t1', 'shop'), 'page[after]')).toBe('shop');
    expect(codec.decode('x', codec.encode('x', { id: 1, at: 'b' }), 'after')).toEqual({ id: 1, at: 'b' });
  });

  it.each([
    ['another scope', () => codec.encode('proxies:t2', 'shop')],
    ['another secret', () => createCursorCodec('other').encode('proxies:t1', 'shop')],
    [
      'a tampered payload',
      () => {
        const [, signature] = codec.encode('proxies:t1', 'shop').split('.');
        return `${Buffer.from(JSON.stringify({ s: 'proxies:t1', k: 'zzz' })).toString('base64url')}.${signature}`;
      },
    ],
    ['garbage', () => 'not-a-cursor'],
    ['an extra segment', () => `${codec.encode('proxies:t1', 'shop')}.x`],
  ])('refuses a cursor from %s with a 400 naming the parameter', (_name, make) => {
    try {
      codec.decode('proxies:t1', make(), 'page[after]');
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(AppError);
      expect((error as AppError).status).toBe(400);
      expect((error as AppError).details).toEqual([
        { field: 'page[after]', message: 'not a valid cursor for this list' },
      ]);
    }
  });
});

describe('pageBlock', () => {
  const page = {
    items: [1, 2],
    cursors: ['c1', 'c2'],
    startCursor: 'c1',
    endCursor: 'c2',
    hasNextPage: true,
    hasPreviousPage: true,
  };

  it('links keep other query parameters and swap the cursor', () => {
    expect(pageBlock('https://api.example.com', '/api/x?page%5Bsize%5D=2&page%5Bafter%5D=old&sort=name', page)).toEqual(
      {
        first: 'https://api.example.com/api/x?page%5Bsize%5D=2&sort=name',
        next: 'https://api.example.com/api/x?page%5Bsize%5D=2&sort=name&page%5Bafter%5D=c2',
        after: 'c2',
        previous: 'https://api.example.com/api/x?page%5Bsize%5D=2&sort=name&page%5Bbefore%5D=c1',
        before: 'c1',
      },
    );
  });

  it('has no next or previous link at the ends', () => {
    expect(pageBlock('http://h', '/api/x', { ...page, hasNextPage: false, hasPreviousPage: false })).toEqual({
      first: 'http://h/api/x',
      next: null,
      after: null,
      previous: null,
      before: null,
    });
  });
});
