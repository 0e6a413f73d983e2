/**
 * Searching over REST: one index (`/api/instant/search/indexes/{alias}`) and through a proxy key
 * (`/api/instant/search/{key}`, public or private, CORS), both response forms, the search settings
 * of a proxy key, tenant isolation, click measurement and analytics.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { createKey, createTenant, startTestApp, type Tenant } from '../helpers/app';
import { sql } from '../helpers/db';
import { expectRestError } from '../helpers/rest';

const { rest, databaseUrl, app } = await startTestApp();

const INDEXES = '/api/instant/indexes';
const SEARCH = '/api/instant/search';
const INSTANT = 'application/vnd.instantsearch+json';

let a: Tenant;
let b: Tenant;

const products = [
  { id: 'p1', name: 'Desk lamp', brand: 'Lumo', price: 25, url: 'https://shop.example.com/p1' },
  { id: 'p2', name: 'Floor lamp', brand: 'Lumo', price: 80, url: 'https://shop.example.com/p2' },
  { id: 'p3', name: 'Office chair', brand: 'Sitwell', price: 150, url: 'https://shop.example.com/p3' },
];
const articles = [
  { id: 'a1', title: 'How to choose a lamp' },
  { id: 'a2', title: 'Chairs for long days' },
];

async function createIndex(tenant: Tenant, index: object, documents: object[]) {
  const created = await rest.post(INDEXES, { token: tenant.key, body: { data: index } });
  expect(created.status, created.rawBody).toBe(201);
  const upserted = await rest.put(`${INDEXES}/${created.body.data.alias}/documents`, {
    token: tenant.key,
    body: { data: documents },
  });
  expect(upserted.status, upserted.rawBody).toBe(204);
}

async function createProxy(tenant: Tenant, key: string, isPrivate = false) {
  const routes = {
    path: '*',
    origin: { uri: 'https://shop.example.com' },
    settings: { auth: { is_required: isPrivate } },
  };
  expect(
    (await rest.post('/api/storage/edge/proxies', { token: tenant.key, body: { data: { key, routes } } })).status,
  ).toBe(201);
}

const settingsFor = (aliases: string[]) => ({
  indexes: aliases.map((alias) => ({
    alias,
    template: { name: 'PRODUCTS', mapping: [{ from: 'name', to: 'title' }] },
    filters: [],
    results_per_page: 2,
  })),
  filters: { show_for: aliases[0], sorting: ['brand'], options_count: 5, max_options_count: 20 },
  is_autocomplete: true,
});

beforeAll(async () => {
  a = await createTenant(rest, 'A');
  b = await createTenant(rest, 'B');
  await createIndex(
    a,
    { name: 'Products', alias: 'products', filters: [{ key: 'brand' }, { key: 'price' }] },
    products,
  );
  await createIndex(a, { name: 'Articles', alias: 'articles' }, articles);
  // Tenant B has an index under the same alias, with other documents.
  await createIndex(b, { name: 'Products', alias: 'products', filters: [{ key: 'brand' }] }, [
    { id: 'b1', name: 'Secret lamp of B', brand: 'Other' },
  ]);
  await createProxy(a, 'shop-a');
  await createProxy(a, 'shop-a-private', true);
  await createProxy(b, 'shop-b');
  for (const key of ['shop-a', 'shop-a-private']) {
    const put = await rest.put(`${SEARCH}/${key}/settings`, {
      token: a.key,
      body: { data: settingsFor(['products', 'articles']) },
    });
    expect(put.status, put.rawBody).toBe(200);
  }
  expect(
    (await rest.put(`${SEARCH}/shop-b/settings`, { token: b.key, body: { data: settingsFor(['products']) } })).status,
  ).toBe(200);
});

describe('search one index', () => {
  it('201 with the envelope: hits, count, facets; page names the request', async () => {
    const response = await rest.post(`${SEARCH}/indexes/products`, {
      token: a.key,
      body: { data: [{ q: 'lamp', facets: ['brand'], __queryID: 'q-1' }] },
    });
    expect(response.status).toBe(201);
    expect(response.headers['content-type']).toMatch(/^application\/json/);
    expect(response.body.page).toEqual({
      first: 'http://127.0.0.1:3000/api/instant/search/indexes/products',
      next: null,
      after: null,
      previous: null,
      before: null,
    });
    const [entry] = response.body.data;
    expect(entry.__queryID).toBe('q-1');
    expect(entry.results).toEqual([
      expect.objectContaining({ id: 'products', count: 2, facets: { brand: { Lumo: 2 } }, facets_stats: {} }),
    ]);
    expect(entry.results[0].hits.map((hit: { id: string }) => hit.id).sort()).toEqual(['p1', 'p2']);
  });

  it(`with Accept ${INSTANT}: the bare array`, async () => {
    const response = await rest.post(`${SEARCH}/indexes/products`, {
      token: a.key,
      headers: { accept: INSTANT },
      body: { data: [{ q: 'chair' }, { q: 'lamp', limit: 1 }] },
    });
    expect(response.status).toBe(201);
    expect(response.headers['content-type']).toMatch(new RegExp(`^${INSTANT.replace(/[.+]/g, '\\$&')}`));
    expect(Array.isArray(response.body)).toBe(true);
    expect(
      response.body.map((entry: { results: { count: number; hits: unknown[] }[] }) => [
        entry.results[0]!.count,
        entry.results[0]!.hits.length,
      ]),
    ).toEqual([
      [1, 1],
      [2, 1],
    ]);
  });

  it("tenant isolation: the same alias of another tenant searches that tenant's documents only", async () => {
    const ofB = await rest.post(`${SEARCH}/indexes/products`, { token: b.key, body: { data: [{ q: 'lamp' }] } });
    expect(ofB.body.data[0].results[0].hits.map((hit: { id: string }) => hit.id)).toEqual(['b1']);
    const ofA = await rest.post(`${SEARCH}/indexes/products`, { token: a.key, body: { data: [{ q: 'secret' }] } });
    expect(ofA.body.data[0].results[0].count).toBe(0);
    expectRestError(await rest.post(`${SEARCH}/indexes/articles`, { token: b.key, body: { data: [{}] } }), 404);
  });

  it('400: unknown filter field, facet that is not one, a range on a text field, a limit over 250, an unknown context key, another index in indices, no body', async () => {
    const bad = async (context: object) =>
      expectRestError(await rest.post(`${SEARCH}/indexes/products`, { token: a.key, body: { data: [context] } }), 400);
    await bad({ filters: [{ key: 'colour', operator: 'in', values: ['red'] }] });
    await bad({ facets: ['name'] });
    await bad({ filters: [{ key: 'brand', operator: 'gte', values: ['5'] }] });
    await bad({ filters: [{ key: 'price', operator: 'lt', values: ['5', '6'] }] });
    await bad({ limit: 251 });
    await bad({ offset: 10_001 });
    await bad({ query: 'lamp' });
    await bad({ indices: ['articles'] });
    expectRestError(await rest.post(`${SEARCH}/indexes/products`, { token: a.key }), 400);
  });

  it('401 without a token, 403 without scope search, 404 for an unknown or inactive index', async () => {
    expectRestError(await rest.post(`${SEARCH}/indexes/products`, { body: { data: [{}] } }), 401);
    const noSearch = await createKey(rest, a.id, ['indexes:read']);
    expectRestError(await rest.post(`${SEARCH}/indexes/products`, { token: noSearch, body: { data: [{}] } }), 403);
    expectRestError(await rest.post(`${SEARCH}/indexes/unknown`, { token: a.key, body: { data: [{}] } }), 404);
    await createIndex(a, { name: 'Off', alias: 'off', is_active: false }, [{ id: 1, name: 'x' }]);
    expectRestError(await rest.post(`${SEARCH}/indexes/off`, { token: a.key, body: { data: [{}] } }), 404);
  });
});

describe('search via a proxy key', () => {
  it('public: no token needed; every index of the settings; count is the total across them; per-index page size from settings', async () => {
    const response = await rest.post(`${SEARCH}/shop-a`, { body: { data: [{ q: 'lamp' }] } });
    expect(response.status, response.rawBody).toBe(201);
    const results = response.body.data[0].results;
    expect(results.map((result: { id: string }) => result.id)).toEqual(['products', 'articles']);
    expect(results.map((result: { count: number }) => result.count)).toEqual([3, 3]);
    expect(results.map((result: { hits: unknown[] }) => result.hits.length)).toEqual([2, 1]);
  });

  it("indices selects among the settings' indexes; one outside them is a 400", async () => {
    const response = await rest.post(`${SEARCH}/shop-a`, { body: { data: [{ q: 'lamp', indices: ['articles'] }] } });
    expect(response.body.data[0].results).toEqual([expect.objectContaining({ id: 'articles', count: 1 })]);
    expectRestError(await rest.post(`${SEARCH}/shop-a`, { body: { data: [{ q: 'lamp', indices: ['off'] }] } }), 400);
  });

  it("tenant isolation: a proxy key only reaches its own tenant's indexes", async () => {
    const ofB = await rest.post(`${SEARCH}/shop-b`, { body: { data: [{ q: 'lamp' }] } });
    expect(ofB.body.data[0].results).toEqual([expect.objectContaining({ id: 'products', count: 1 })]);
    expect(ofB.body.data[0].results[0].hits[0].id).toBe('b1');
  });

  it('a JSON body sent as text/plain (what fetch sends for a string) is read as JSON', async () => {
    const response = await rest.post(`${SEARCH}/shop-a`, {
      rawBody: JSON.stringify({ data: [{ q: 'chair' }] }),
      headers: { 'content-type': 'text/plain;charset=UTF-8', accept: INSTANT },
    });
    expect(response.status, response.rawBody).toBe(201);
    expect(response.body[0].results[0].count).toBe(2);
    expectRestError(
      await rest.post(`${SEARCH}/shop-a`, { rawBody: '{"data":', headers: { 'content-type': 'text/plain' } }),
      400,
    );
  });

  it("private (a route requires auth): 401 without a token, 403 without scope search, 404 for another tenant's token, 201 with one", async () => {
    const body = { data: [{ q: 'lamp' }] };
    expectRestError(await rest.post(`${SEARCH}/shop-a-private`, { body }), 401);
    expectRestError(await rest.post(`${SEARCH}/shop-a-private`, { body, token: 'cpk_invalid' }), 401);
    expectRestError(
      await rest.post(`${SEARCH}/shop-a-private`, { body, token: await createKey(rest, a.id, ['indexes:read']) }),
      403,
    );
    expectRestError(await rest.post(`${SEARCH}/shop-a-private`, { body, token: b.key }), 404);
    expect(
      (await rest.post(`${SEARCH}/shop-a-private`, { body, token: await createKey(rest, a.id, ['search']) })).status,
    ).toBe(201);
    expectRestError(await rest.get(`${SEARCH}/shop-a-private/settings`), 401);
    expect((await rest.get(`${SEARCH}/shop-a-private/settings`, { token: a.key })).status).toBe(200);
  });

  it('a sent but invalid token is a 401 even on a public engine', async () => {
    expectRestError(await rest.post(`${SEARCH}/shop-a`, { body: { data: [{}] }, token: 'cpk_invalid' }), 401);
  });

  it('404 for an unknown key or a proxy without search settings; 403 for a suspended proxy', async () => {
    expectRestError(await rest.post(`${SEARCH}/unknown-key`, { body: { data: [{}] } }), 404);
    await createProxy(a, 'no-search');
    expectRestError(await rest.post(`${SEARCH}/no-search`, { body: { data: [{}] } }), 404);
    expectRestError(await rest.get(`${SEARCH}/no-search/settings`), 404);
    const suspended = {
      key: 'suspended',
      routes: { path: '*', origin: { uri: 'https://x.example.com' } },
      is_suspended: true,
    };
    expect((await rest.post('/api/storage/edge/proxies', { token: a.key, body: { data: suspended } })).status).toBe(
      201,
    );
    await rest.put(`${SEARCH}/suspended/settings`, { token: a.key, body: { data: settingsFor(['products']) } });
    expectRestError(await rest.post(`${SEARCH}/suspended`, { body: { data: [{}] } }), 403);
  });

  it('CORS: answers the preflight of the browser-callable paths and allows any origin on their responses, errors included', async () => {
    for (const [path, methods] of [
      [`${SEARCH}/shop-a`, 'POST'],
      [`${SEARCH}/shop-a/settings`, 'GET, HEAD'],
      [`${SEARCH}/products/click/x`, 'GET, HEAD'],
    ] as const) {
      const preflight = await app.inject({
        method: 'OPTIONS',
        url: path,
        headers: { origin: 'https://shop.example.com', 'access-control-request-method': 'POST' },
      });
      expect(preflight.statusCode).toBe(204);
      expect(preflight.headers).toMatchObject({
        'access-control-allow-origin': '*',
        'access-control-allow-methods': methods,
        'access-control-allow-headers': 'Authorization, Content-Type, Accept',
      });
    }
    const ok = await rest.post(`${SEARCH}/shop-a`, {
      body: { data: [{}] },
      headers: { origin: 'https://shop.example.com' },
    });
    expect(ok.headers['access-control-allow-origin']).toBe('*');
    const error = await rest.post(`${SEARCH}/unknown-key`, { body: { data: [{}] } });
    expect(error.headers['access-control-allow-origin']).toBe('*');
    // Paths that browsers do not call keep answering OPTIONS with 405 and no CORS header.
    const other = await app.inject({ method: 'OPTIONS', url: INDEXES });
    expect(other.statusCode).toBe(405);
    expect(other.headers['access-control-allow-origin']).toBeUndefined();
    expect(
      (await rest.get(`${INDEXES}/products`, { token: a.key })).headers['access-control-allow-origin'],
    ).toBeUndefined();
  });
});

describe('search settings', () => {
  it('GET returns the stored settings with every field spelled out, public without a token', async () => {
    const response = await rest.get(`${SEARCH}/shop-a/settings`);
    expect(response.status).toBe(200);
    expect(response.body).toEqual({
      data: {
        indexes: ['products', 'articles'].map((alias) => ({
          alias,
          template: { name: 'PRODUCTS', mapping: [{ from: 'name', to: 'title' }] },
          filters: [],
          results_per_page: 2,
          sort: [],
          sort_options: [],
        })),
        filters: { show_for: 'products', sorting: ['brand'], options_count: 5, max_options_count: 20 },
        is_autocomplete: true,
      },
      page: null,
      meta: null,
    });
  });

  it('PUT replaces them (200); left-out fields take defaults; filter types come from the index', async () => {
    await createProxy(a, 'settings-put');
    const response = await rest.put(`${SEARCH}/settings-put/settings`, {
      token: a.key,
      body: { data: { indexes: [{ alias: 'products', filters: [{ key: 'price', label: 'Price' }] }] } },
    });
    expect(response.status, response.rawBody).toBe(200);
    const expected = {
      indexes: [
        {
          alias: 'products',
          template: { name: null, mapping: [] },
          filters: [{ key: 'price', label: 'Price', type: 'NUMBER', options_count: null, max_options_count: null }],
          results_per_page: null,
          sort: [],
          sort_options: [],
        },
      ],
      filters: { show_for: null, sorting: [], options_count: null, max_options_count: null },
      is_autocomplete: false,
    };
    expect(response.body.data).toEqual(expected);
    expect((await rest.get(`${SEARCH}/settings-put/settings`)).body.data).toEqual(expected);
  });

  it("refuses unknown aliases, unfilterable filter keys, another tenant's proxy, a missing scope; nothing changes", async () => {
    const stored = () => sql(databaseUrl, 'SELECT * FROM search_settings ORDER BY proxy_key');
    const before = await stored();
    const put = (key: string, data: object, token = a.key) =>
      rest.put(`${SEARCH}/${key}/settings`, { token, body: { data } });
    expectRestError(await put('shop-a', { indexes: [{ alias: 'unknown' }] }), 400);
    expectRestError(await put('shop-a', { indexes: [{ alias: 'products', filters: [{ key: 'name' }] }] }), 400);
    expectRestError(await put('shop-a', { indexes: [{ alias: 'products' }], filters: { show_for: 'articles' } }), 400);
    expectRestError(await put('shop-a', { indexes: [] }), 400);
    expectRestError(await put('shop-b', { indexes: [{ alias: 'products' }] }), 404);
    expectRestError(
      await put('shop-a', { indexes: [{ alias: 'products' }] }, await createKey(rest, a.id, ['search'])),
      403,
    );
    expectRestError(
      await rest.put(`${SEARCH}/shop-a/settings`, { body: { data: { indexes: [{ alias: 'products' }] } } }),
      401,
    );
    expect(await stored()).toEqual(before);
  });

  it('are deleted with their proxy', async () => {
    await createProxy(a, 'short-lived');
    await rest.put(`${SEARCH}/short-lived/settings`, {
      token: a.key,
      body: { data: { indexes: [{ alias: 'products' }] } },
    });
    expect((await rest.delete('/api/storage/edge/proxies/short-lived', { token: a.key })).status).toBe(204);
    expect(await sql(databaseUrl, "SELECT * FROM search_settings WHERE proxy_key = 'short-lived'")).toEqual([]);
  });
});

describe('clicks and analytics', () => {
  let tenant: Tenant;
  beforeAll(async () => {
    tenant = await createTenant(rest, 'Analytics');
    await createIndex(tenant, { name: 'Shop', alias: 'shop' }, products);
    await createIndex(tenant, { name: 'Other', alias: 'other' }, products);
  });
  const searchShop = async (q: string, alias = 'shop') =>
    (
      await rest.post(`${SEARCH}/indexes/${alias}`, {
        token: tenant.key,
        body: { data: [{ q, session_id: 's-1', user_id: 'u-1' }] },
      })
    ).body.data[0].results[0];
  const clicks = () => sql(databaseUrl, 'SELECT * FROM search_clicks ORDER BY created_at');
  const path = (url: string) => url.replace(/^https?:\/\/[^/]+/, '');

  it('every hit with a URL carries a signed click URL; following it records the click and redirects (307)', async () => {
    const result = await searchShop('lamp');
    const [first, second] = result.hits;
    expect(first.click_url).toMatch(/^http:\/\/127\.0\.0\.1:3000\/api\/instant\/search\/shop\/click\/[\w-]+\.[\w-]+$/);
    const response = await rest.get(path(second.click_url));
    expect(response.status).toBe(307);
    expect(response.headers.location).toBe(second.url);
    expect(response.headers['cache-control']).toBe('no-store');
    expect(response.rawBody).toBe('');
    const [click] = await clicks();
    expect(click).toMatchObject({ document_id: second.id, position: 2, tenant_id: tenant.id });
  });

  it('a tampered code or one of another index is a 400, an unknown alias a 404; nothing is recorded', async () => {
    const [hit] = (await searchShop('chair')).hits;
    const url = path(hit.click_url);
    const [payload, signature] = url.split('/').at(-1)!.split('.') as [string, string];
    const before = await clicks();
    const forged = Buffer.from(
      JSON.stringify(
        JSON.parse(Buffer.from(payload, 'base64url').toString()).map((v: unknown) =>
          v === 'https://shop.example.com/p3' ? 'https://evil.example.com' : v,
        ),
      ),
    ).toString('base64url');
    expectRestError(await rest.get(`${SEARCH}/shop/click/${forged}.${signature}`), 400);
    expectRestError(await rest.get(`${SEARCH}/shop/click/${payload}.${signature.slice(0, -2)}AA`), 400);
    expectRestError(await rest.get(`${SEARCH}/shop/click/garbage`), 400);
    expectRestError(await rest.get(url.replace('/shop/', '/other/')), 400);
    expectRestError(await rest.get(url.replace('/shop/', '/no-such-alias/')), 404);
    expect(await clicks()).toEqual(before);
  });

  it('analytics: top queries, queries without results, click-through per query and per position, over a time range', async () => {
    // An index of its own: searches are counted per hour, so the range counted starts at this hour's start.
    await createIndex(tenant, { name: 'Reports', alias: 'reports' }, products);
    const start = new Date().toISOString();
    for (const q of ['Lamp', 'lamp', 'lamp', 'chair', 'unicorn', 'unicorn']) await searchShop(q, 'reports');
    await searchShop('lamp', 'other');
    const lamp = await searchShop('lamp', 'reports');
    await rest.get(path(lamp.hits[0].click_url));
    await rest.get(path(lamp.hits[0].click_url));
    const response = await rest.get(`${INDEXES}/reports/analytics?from=${encodeURIComponent(start)}`, {
      token: tenant.key,
    });
    expect(response.status, response.rawBody).toBe(200);
    const data = response.body.data;
    const hour = 3600_000;
    expect(data.from).toBe(new Date(Math.floor(Date.parse(start) / hour) * hour).toISOString());
    expect(Date.parse(data.to) % hour).toBe(0);
    expect(Date.parse(data.to)).toBeGreaterThan(Date.now());
    expect(data).toMatchObject({ searches: 7, clicks: 2 });
    expect(data.click_through_rate).toBeCloseTo(1 / 7);
    expect(data.no_result_rate).toBeCloseTo(2 / 7);
    // No events were reported (see search.events.test.ts for them).
    const noEvents = { views: 0, add_to_carts: 0, conversions: 0, conversion_rate: 0, revenue: 0 };
    expect(data.top_queries).toEqual([
      { query: 'lamp', searches: 4, clicks: 2, click_through_rate: 0.25, average_result_count: 2, ...noEvents },
      { query: 'unicorn', searches: 2, clicks: 0, click_through_rate: 0, average_result_count: 0, ...noEvents },
      { query: 'chair', searches: 1, clicks: 0, click_through_rate: 0, average_result_count: 1, ...noEvents },
    ]);
    expect(data.no_result_queries).toEqual([{ query: 'unicorn', searches: 2 }]);
    expect(data.click_through_rate_by_position).toEqual([{ position: 1, clicks: 2, click_through_rate: 2 / 7 }]);

    const future = new Date(Date.now() + 3600_000).toISOString();
    const empty = await rest.get(
      `${INDEXES}/reports/analytics?from=${encodeURIComponent(future)}&to=${encodeURIComponent(new Date(Date.now() + 7200_000).toISOString())}`,
      { token: tenant.key },
    );
    expect(empty.body.data).toMatchObject({
      searches: 0,
      clicks: 0,
      click_through_rate: 0,
      top_queries: [],
      no_result_queries: [],
      click_through_rate_by_position: [],
    });
  });

  it('analytics refuses a reversed range or a bad date (400), another tenant (404), a missing scope (403)', async () => {
    const now = new Date().toISOString();
    expectRestError(
      await rest.get(`${INDEXES}/shop/analytics?from=${encodeURIComponent(now)}&to=${encodeURIComponent(now)}`, {
        token: tenant.key,
      }),
      400,
    );
    expectRestError(await rest.get(`${INDEXES}/shop/analytics?from=yesterday`, { token: tenant.key }), 400);
    expectRestError(await rest.get(`${INDEXES}/shop/analytics`, { token: a.key }), 404);
    expectRestError(
      await rest.get(`${INDEXES}/shop/analytics`, { token: await createKey(rest, tenant.id, ['search']) }),
      403,
    );
  });
});
