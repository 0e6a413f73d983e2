/**
 * Listing edge proxies: cursor pagination with `page[size]`, `page[after]` and `page[before]`, the
 * `page` block of the envelope, and the 400s for bad sizes and forged or foreign cursors.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { createTenant, startTestApp, type Tenant } from '../helpers/app';
import { sql } from '../helpers/db';
import { type RestResponse, expectRestError } from '../helpers/rest';

const { rest, databaseUrl, services } = await startTestApp();

const PROXIES = '/api/storage/edge/proxies';
const BAD_REQUEST = 'Bad request: invalid filter, pagination or request body';

/**
 * Keys created in a shuffled order. Lowercase letters and digits only, so the expected order is the
 * same under the C collation and linguistic ones (which ignore hyphens at first level).
 */
const SMALL_SET = ['mango', 'apple', '9lives', 'kiwi', 'banana', 'cherry', 'apricot', 'zucchini'];
const SORTED_SMALL_SET = [...SMALL_SET].sort();

interface PageBlock {
  first: string;
  next: string | null;
  after: string | null;
  previous: string | null;
  before: string | null;
}

const keysOf = (response: RestResponse) => (response.body.data as { key: string }[]).map((proxy) => proxy.key);

/** A page link as the request target of the in-process client, after checking it points at this list. */
function requestTarget(link: string): string {
  expect(link.startsWith(`${services.baseUrl}${PROXIES}`), link).toBe(true);
  const url = new URL(link);
  return `${url.pathname}${url.search}`;
}

const queryOf = (link: string) => Object.fromEntries(new URL(link).searchParams);

const createProxy = async (token: string, key: string) => {
  const response = await rest.post(PROXIES, {
    token,
    body: { data: { key, routes: { path: '/', origin: { uri: `https://${key}.example.com` } } } },
  });
  expect(response.status, response.rawBody).toBe(201);
};

const list = (token: string, query = '') => rest.get(`${PROXIES}${query}`, { token });

let small: Tenant;
let large: Tenant;
let other: Tenant;

beforeAll(async () => {
  [small, large, other] = await Promise.all([
    createTenant(rest, 'Small list'),
    createTenant(rest, 'Large list'),
    createTenant(rest, 'Other tenant'),
  ]);
  for (const key of SMALL_SET) await createProxy(small.key, key);
  for (let index = 27; index >= 1; index--) await createProxy(large.key, `large-${String(index).padStart(2, '0')}`);
  await createProxy(other.key, 'other-only');
});

describe('list', () => {
  it('an empty list has data [] and a page block with only `first`', async () => {
    const empty = await createTenant(rest, 'Empty');
    const response = await list(empty.key);

    expect(response.status).toBe(200);
    expect(response.body).toEqual({
      data: [],
      page: { first: `${services.baseUrl}${PROXIES}`, next: null, after: null, previous: null, before: null },
      meta: null,
    });
  });

  it("orders by key, holds only the caller's proxies, and each item is the full proxy", async () => {
    const response = await list(small.key, '?page[size]=100');

    expect(response.status).toBe(200);
    expect(keysOf(response)).toEqual(SORTED_SMALL_SET);
    const stored = await sql<{ key: string }>(
      databaseUrl,
      'SELECT key FROM proxies WHERE tenant_id = $1 ORDER BY key',
      [small.id],
    );
    expect(keysOf(response)).toEqual(stored.map((row) => row.key));
    for (const proxy of response.body.data) {
      expect(proxy.tenant_id).toBe(small.id);
      expect(proxy.routes).toEqual({
        path: '/',
        origin: { uri: `https://${proxy.key}.example.com`, is_bucket: null },
        settings: {
          cache: {
            age: null,
            is_as_origin: null,
            is_public: null,
            stale_while_revalidate: null,
            key: null,
            compression: null,
          },
          auth: { is_required: null, scope: null },
          image: null,
        },
      });
    }
    expect(response.body.page).toEqual({
      first: `${services.baseUrl}${PROXIES}?page%5Bsize%5D=100`,
      next: null,
      after: null,
      previous: null,
      before: null,
    });
  });

  it('the default page size is 25, and `next` leads to the rest', async () => {
    const first = await list(large.key);

    expect(first.status).toBe(200);
    const expected = Array.from({ length: 27 }, (_, index) => `large-${String(index + 1).padStart(2, '0')}`);
    expect(keysOf(first)).toEqual(expected.slice(0, 25));
    expect(first.body.page.previous).toBeNull();
    expect(first.body.page.before).toBeNull();
    expect(first.body.page.first).toBe(`${services.baseUrl}${PROXIES}`);
    expect(queryOf(first.body.page.next)).toEqual({ 'page[after]': first.body.page.after });

    const second = await rest.get(requestTarget(first.body.page.next), { token: large.key });
    expect(second.status).toBe(200);
    expect(keysOf(second)).toEqual(expected.slice(25));
    expect(second.body.page.next).toBeNull();
    expect(second.body.page.after).toBeNull();
  });

  it('page[size] sets the page size, from 1 to 100', async () => {
    expect(keysOf(await list(small.key, '?page[size]=1'))).toEqual(SORTED_SMALL_SET.slice(0, 1));
    expect(keysOf(await list(small.key, '?page[size]=5'))).toEqual(SORTED_SMALL_SET.slice(0, 5));
    expect(keysOf(await list(large.key, '?page[size]=100'))).toHaveLength(27);
  });

  it('walks forward with `next` through every page, with the full page block on the first, middle and last page', async () => {
    const first = await list(small.key, '?page[size]=3');
    const firstLink = `${services.baseUrl}${PROXIES}?page%5Bsize%5D=3`;

    expect(keysOf(first)).toEqual(SORTED_SMALL_SET.slice(0, 3));
    const firstPage: PageBlock = first.body.page;
    expect(firstPage).toEqual({
      first: firstLink,
      next: expect.any(String),
      after: expect.any(String),
      previous: null,
      before: null,
    });
    expect(queryOf(firstPage.next!)).toEqual({ 'page[size]': '3', 'page[after]': firstPage.after });

    const middle = await rest.get(requestTarget(firstPage.next!), { token: small.key });
    expect(middle.status).toBe(200);
    expect(keysOf(middle)).toEqual(SORTED_SMALL_SET.slice(3, 6));
    const middlePage: PageBlock = middle.body.page;
    expect(middlePage).toEqual({
      first: firstLink,
      next: expect.any(String),
      after: expect.any(String),
      previous: expect.any(String),
      before: expect.any(String),
    });
    expect(queryOf(middlePage.next!)).toEqual({ 'page[size]': '3', 'page[after]': middlePage.after });
    expect(queryOf(middlePage.previous!)).toEqual({ 'page[size]': '3', 'page[before]': middlePage.before });
    expect(middlePage.after).not.toBe(firstPage.after);

    const last = await rest.get(requestTarget(middlePage.next!), { token: small.key });
    expect(keysOf(last)).toEqual(SORTED_SMALL_SET.slice(6));
    const lastPage: PageBlock = last.body.page;
    expect(lastPage).toEqual({
      first: firstLink,
      next: null,
      after: null,
      previous: expect.any(String),
      before: expect.any(String),
    });
    expect(queryOf(lastPage.previous!)).toEqual({ 'page[size]': '3', 'page[before]': lastPage.before });

    // The `first` link of any page is the first page again.
    expect(keysOf(await rest.get(requestTarget(lastPage.first), { token: small.key }))).toEqual(keysOf(first));
  });

  it('the `after` cursor works as page[after] by hand, and page after page covers every proxy exactly once', async () => {
    const seen: string[] = [];
    let after: string | null = null;
    let pages = 0;
    do {
      const query: string = `?page[size]=2${after ? `&page[after]=${encodeURIComponent(after)}` : ''}`;
      const response = await list(small.key, query);
      expect(response.status).toBe(200);
      seen.push(...keysOf(response));
      after = response.body.page.after;
      pages += 1;
    } while (after && pages < 10);

    expect(seen).toEqual(SORTED_SMALL_SET);
    expect(pages).toBe(4);
  });

  it('walks backwards with `previous` / page[before] from the last page to the first', async () => {
    let response = await list(small.key, '?page[size]=3');
    while (response.body.page.next)
      response = await rest.get(requestTarget(response.body.page.next), { token: small.key });
    expect(keysOf(response)).toEqual(SORTED_SMALL_SET.slice(6));

    const middle = await rest.get(requestTarget(response.body.page.previous), { token: small.key });
    expect(middle.status).toBe(200);
    expect(keysOf(middle)).toEqual(SORTED_SMALL_SET.slice(3, 6));
    expect(middle.body.page).toEqual({
      first: `${services.baseUrl}${PROXIES}?page%5Bsize%5D=3`,
      next: expect.any(String),
      after: expect.any(String),
      previous: expect.any(String),
      before: expect.any(String),
    });
    // Forward again from a page reached backwards lands on the page we came from.
    expect(keysOf(await rest.get(requestTarget(middle.body.page.next), { token: small.key }))).toEqual(
      SORTED_SMALL_SET.slice(6),
    );

    const first = await list(small.key, `?page[size]=3&page[before]=${encodeURIComponent(middle.body.page.before)}`);
    expect(keysOf(first)).toEqual(SORTED_SMALL_SET.slice(0, 3));
    expect(first.body.page.previous).toBeNull();
    expect(first.body.page.before).toBeNull();
    expect(first.body.page.next).not.toBeNull();
  });

  it('a cursor stays usable after the proxy it points at is deleted', async () => {
    const tenant = await createTenant(rest, 'Deleting');
    for (const key of ['del-a', 'del-b', 'del-c', 'del-d']) await createProxy(tenant.key, key);
    const first = await list(tenant.key, '?page[size]=2');
    expect(keysOf(first)).toEqual(['del-a', 'del-b']);

    expect((await rest.delete(`${PROXIES}/del-b`, { token: tenant.key })).status).toBe(204);

    const next = await rest.get(requestTarget(first.body.page.next), { token: tenant.key });
    expect(next.status).toBe(200);
    expect(keysOf(next)).toEqual(['del-c', 'del-d']);
    expect(next.body.page.next).toBeNull();
  });
});

describe('bad pagination is a 400 that names the parameter', () => {
  it.each(['0', '-1', 'abc', '1.5', '101', ''])('page[size]=%j', async (size) => {
    const response = await list(small.key, `?page[size]=${size}`);

    expectRestError(response, 400, { message: BAD_REQUEST });
    expect(response.body.error.details).toEqual(
      expect.arrayContaining([expect.objectContaining({ field: 'query.page[size]' })]),
    );
  });

  it('an unknown query parameter is a 400', async () => {
    const response = await list(small.key, '?page[number]=2');
    expectRestError(response, 400, { message: BAD_REQUEST });
    expect(response.body.error.details).toEqual([expect.objectContaining({ field: 'query.page[number]' })]);
  });

  describe('forged and foreign cursors', () => {
    let validAfter: string;
    let validBefore: string;

    beforeAll(async () => {
      const first = await list(small.key, '?page[size]=3');
      validAfter = first.body.page.after;
      const second = await list(small.key, `?page[size]=3&page[after]=${encodeURIComponent(validAfter)}`);
      validBefore = second.body.page.before;
      expect(validAfter).toEqual(expect.any(String));
      expect(validBefore).toEqual(expect.any(String));
    });

    const expectCursorRejected = async (token: string, parameter: 'page[after]' | 'page[before]', cursor: string) => {
      const response = await list(token, `?${parameter}=${encodeURIComponent(cursor)}`);
      expectRestError(response, 400, { message: BAD_REQUEST });
      expect(response.body.error.details).toEqual([expect.objectContaining({ field: parameter })]);
    };

    it.each(['page[after]', 'page[before]'] as const)('a random string as %s', async (parameter) => {
      await expectCursorRejected(small.key, parameter, 'not-a-cursor');
      await expectCursorRejected(small.key, parameter, 'YWJj.ZGVm');
      await expectCursorRejected(small.key, parameter, `${validAfter}.extra`);
    });

    it('a cursor whose signature was tampered with', async () => {
      const [payload, signature] = validAfter.split('.') as [string, string];
      // The first character: the last one of a base64url string may only carry padding bits.
      const tampered = `${payload}.${signature[0] === 'A' ? 'B' : 'A'}${signature.slice(1)}`;
      await expectCursorRejected(small.key, 'page[after]', tampered);
      await expectCursorRejected(small.key, 'page[before]', tampered);
    });

    it('a cursor whose payload was rewritten under the old signature', async () => {
      const [, signature] = validAfter.split('.') as [string, string];
      const payload = Buffer.from(JSON.stringify({ s: `proxies:${small.id}`, k: 'a' })).toString('base64url');
      await expectCursorRejected(small.key, 'page[after]', `${payload}.${signature}`);
    });

    it('a valid cursor of one tenant used by another tenant', async () => {
      await expectCursorRejected(other.key, 'page[after]', validAfter);
      await expectCursorRejected(other.key, 'page[before]', validBefore);
      // The cursor still works for the tenant it was made for.
      expect(keysOf(await list(small.key, `?page[size]=3&page[after]=${encodeURIComponent(validAfter)}`))).toEqual(
        SORTED_SMALL_SET.slice(3, 6),
      );
    });

    it('page[after] combined with page[before]', async () => {
      const response = await list(
        small.key,
        `?page[after]=${encodeURIComponent(validAfter)}&page[before]=${encodeURIComponent(validBefore)}`,
      );
      expectRestError(response, 400, { message: BAD_REQUEST });
      expect(response.body.error.message).toContain('page[after]');
      expect(response.body.error.message).toContain('page[before]');
    });
  });
});
