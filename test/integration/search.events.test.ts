/**
 * Search events (`POST /api/instant/search/{key}/events`): views, clicks, add-to-carts and
 * conversions a front end reports about the hits of its searches; the conversion rates and revenue
 * the analytics compute from them; validation, all or none, with nothing stored on a refusal; the
 * key's access rule; events whose search is not counted yet; query ids that name no search of the
 * key (refused) or a search past the retention (dropped); and the limit per client address.
 */
import { createHmac } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app';
import { uuidv7 } from '../../src/kernel/ids';
import { createDb } from '../../src/kernel/db';
import { createQueryIdCodec, queryKeyOf } from '../../src/modules/search/analytics/query-ids';
import { createTenant, startTestApp, TEST_MASTER_KEY, type Tenant } from '../helpers/app';
import { sql } from '../helpers/db';
import { createRestClient, expectRestError } from '../helpers/rest';

const EVENTS_PER_MINUTE = 40;
const { rest, databaseUrl, config } = await startTestApp({
  env: { SEARCH_EVENTS_PER_MINUTE: String(EVENTS_PER_MINUTE) },
});

/** A second process of the same deployment: its searches wait in its own log until their batch is written. */
const otherDb = createDb(databaseUrl, { poolSize: 2 });
const other = await buildApp({ config, db: otherDb, masterKey: TEST_MASTER_KEY, backgroundWorkers: false });
await other.app.ready();
const otherRest = createRestClient(other.app);

const INDEXES = '/api/instant/indexes';
const SEARCH = '/api/instant/search';
const EVENTS = `${SEARCH}/shop/events`;

const products = [
  { id: 'p1', name: 'Desk lamp', brand: 'Lumo', price: 25, url: 'https://shop.example.com/p1' },
  { id: 'p2', name: 'Floor lamp', brand: 'Lumo', price: 80, url: 'https://shop.example.com/p2' },
  { id: 'p3', name: 'Office chair', brand: 'Sitwell', price: 150, url: 'https://shop.example.com/p3' },
];

let shop: Tenant;
let otherTenant: Tenant;

/** Each group of tests sends from an address of its own, so that only the rate-limit test reaches the limit. */
const from = (remoteAddress: string) => ({
  post: (
    url: string,
    body: unknown,
    options: { token?: string; rawBody?: string; headers?: Record<string, string> } = {},
  ) => rest.post(url, { body, remoteAddress, ...options }),
});

async function createIndex(tenant: Tenant, alias: string) {
  const created = await rest.post(INDEXES, { token: tenant.key, body: { data: { name: alias, alias } } });
  expect(created.status, created.rawBody).toBe(201);
  const upserted = await rest.put(`${INDEXES}/${alias}/documents`, { token: tenant.key, body: { data: products } });
  expect(upserted.status, upserted.rawBody).toBe(204);
}

async function createProxy(
  tenant: Tenant,
  key: string,
  { isPrivate = false, aliases = ['products'] as string[] | null },
) {
  const routes = {
    path: '*',
    origin: { uri: 'https://shop.example.com' },
    settings: { auth: { is_required: isPrivate } },
  };
  const created = await rest.post('/api/storage/edge/proxies', { token: tenant.key, body: { data: { key, routes } } });
  expect(created.status, created.rawBody).toBe(201);
  if (!aliases) return;
  const settings = { indexes: aliases.map((alias) => ({ alias })) };
  const put = await rest.put(`${SEARCH}/${key}/settings`, { token: tenant.key, body: { data: settings } });
  expect(put.status, put.rawBody).toBe(200);
}

/** Searches through a proxy key; the query id and hits of its only result. */
async function search(q: string, client = rest, key = 'shop') {
  const response = await client.post(`${SEARCH}/${key}`, { body: { data: [{ q }] } });
  expect(response.status, response.rawBody).toBe(201);
  const [result] = response.body.data[0].results;
  return result as { query_id: string; hits: { id: string; __position: number; click_url: string }[] };
}

const storedEvents = () =>
  sql(
    databaseUrl,
    `SELECT search_id::text, index_id::text, type::text, document_id, position, session_id, value::text
       FROM search_events ORDER BY id`,
  );

/** An index of the shop with a proxy key of its own: its analytics count only what a test did with it. */
async function createShop(alias: string) {
  await createIndex(shop, alias);
  await createProxy(shop, `${alias}-shop`, { aliases: [alias] });
  const [index] = await sql<{ id: string }>(
    databaseUrl,
    `SELECT id::text FROM search_indexes WHERE alias = $1 AND tenant_id = $2`,
    [alias, shop.id],
  );
  return { key: `${alias}-shop`, indexId: index!.id };
}

async function analytics(since: string, client = rest, alias = 'products', tenant = shop) {
  const response = await client.get(`${INDEXES}/${alias}/analytics?from=${encodeURIComponent(since)}`, {
    token: tenant.key,
  });
  expect(response.status, response.rawBody).toBe(200);
  return response.body.data;
}

beforeAll(async () => {
  shop = await createTenant(rest, 'Shop');
  otherTenant = await createTenant(rest, 'Other shop');
  await createIndex(shop, 'products');
  await createIndex(shop, 'articles');
  await createIndex(otherTenant, 'products');
  await createProxy(shop, 'shop', {});
  await createProxy(shop, 'private-shop', { isPrivate: true });
  await createProxy(shop, 'bare-shop', { aliases: null });
  await createProxy(otherTenant, 'other-shop', {});
  return async () => {
    await other.app.close();
    await otherDb.$disconnect();
  };
});

describe('reporting events', () => {
  const client = from('10.0.0.1');

  it('stores a batch in one go and shows it in the analytics: rates and revenue per query and in total', async () => {
    const { key, indexId } = await createShop('batch');
    const start = new Date().toISOString();
    const lamp1 = await search('lamp', rest, key);
    const lamp2 = await search('Lamp', rest, key);
    await search('lamp', rest, key);
    const chair = await search('chair', rest, key);
    expect(lamp1.query_id).not.toBe(lamp2.query_id);
    const p1 = lamp1.hits.find((hit) => hit.id === 'p1')!;

    const batch = [
      { type: 'view', query_id: lamp1.query_id, document_id: 'p1', position: p1.__position, session_id: 's-1' },
      { type: 'view', query_id: lamp1.query_id, document_id: 'p2', position: 2, session_id: 's-1' },
      { type: 'click', query_id: lamp1.query_id, document_id: 'p1', position: p1.__position },
      { type: 'add_to_cart', query_id: lamp1.query_id, document_id: 'p1' },
      { type: 'conversion', query_id: lamp1.query_id, document_id: 'p1', value: 19.99 },
      { type: 'view', query_id: lamp2.query_id, document_id: 'p2', position: 1 },
      { type: 'conversion', query_id: lamp2.query_id, document_id: 'p2', value: 40.015, session_id: null },
      { type: 'view', query_id: chair.query_id, document_id: 'p3', position: 1 },
    ];
    const response = await client.post(`${SEARCH}/${key}/events`, { data: batch });
    expect(response.status, response.rawBody).toBe(204);
    // A click through the hit's click URL counts as a click too.
    const followed = await rest.get(lamp2.hits[0]!.click_url.replace(/^https?:\/\/[^/]+/, ''));
    expect(followed.status).toBe(307);

    const rows = await storedEvents();
    expect(rows).toHaveLength(batch.length);
    // Every event is stored with the index its signed query id names, whether or not its search is counted yet.
    expect(rows).toContainEqual({
      search_id: lamp1.query_id,
      index_id: indexId,
      type: 'VIEW',
      document_id: 'p1',
      position: p1.__position,
      session_id: 's-1',
      value: null,
    });
    const values = rows.filter((row) => row.type === 'CONVERSION').map((row) => row.value);
    expect(values.sort()).toEqual(['19.9900', '40.0150']);

    const data = await analytics(start, rest, 'batch');
    expect(data).toMatchObject({ searches: 4, clicks: 2, views: 4, add_to_carts: 1, conversions: 2 });
    expect(data.click_through_rate).toBeCloseTo(2 / 4);
    expect(data.conversion_rate).toBeCloseTo(2 / 4);
    expect(data.revenue).toBeCloseTo(60.005, 10);
    expect(data.click_through_rate_by_position).toEqual([{ position: 1, clicks: 2, click_through_rate: 2 / 4 }]);
    const [lamp, chairRow] = data.top_queries;
    expect(lamp).toMatchObject({ query: 'lamp', searches: 3, clicks: 2, views: 3, add_to_carts: 1, conversions: 2 });
    expect(lamp.click_through_rate).toBeCloseTo(2 / 3);
    expect(lamp.conversion_rate).toBeCloseTo(2 / 3);
    expect(lamp.revenue).toBeCloseTo(60.005, 10);
    expect(chairRow).toEqual({
      query: 'chair',
      searches: 1,
      clicks: 0,
      click_through_rate: 0,
      average_result_count: 1,
      views: 1,
      add_to_carts: 0,
      conversions: 0,
      conversion_rate: 0,
      revenue: 0,
    });
  });

  it('accepts an event whose search is not counted yet, and counts it once the search is', async () => {
    const { key, indexId } = await createShop('desk');
    const start = new Date().toISOString();
    // The other process answers the search and counts it in its own batch; this one receives the event.
    const pending = await search('desk', otherRest, key);
    const response = await client.post(`${SEARCH}/${key}/events`, {
      data: [{ type: 'conversion', query_id: pending.query_id, document_id: 'p1', value: 25 }],
    });
    expect(response.status, response.rawBody).toBe(204);
    expect(
      await sql(databaseUrl, `SELECT index_id::text FROM search_events WHERE search_id = $1`, [pending.query_id]),
    ).toEqual([{ index_id: indexId }]);
    // Analytics through the other process write its log first: the search is counted, the event joins it.
    const data = await analytics(start, otherRest, 'desk');
    expect(data).toMatchObject({ searches: 1, conversions: 1, revenue: 25, conversion_rate: 1 });
    expect(data.top_queries).toEqual([expect.objectContaining({ query: 'desk', conversions: 1, revenue: 25 })]);
  });

  it('deleting the index deletes its events', async () => {
    const { key, indexId } = await createShop('gone');
    const result = await search('lamp', rest, key);
    const response = await client.post(`${SEARCH}/${key}/events`, {
      data: [{ type: 'view', query_id: result.query_id, document_id: 'p1' }],
    });
    expect(response.status, response.rawBody).toBe(204);
    const stored = () =>
      sql(databaseUrl, `SELECT index_id::text FROM search_events WHERE search_id = '${result.query_id}'`);
    expect(await stored()).toEqual([{ index_id: indexId }]);
    expect((await rest.delete(`${INDEXES}/gone`, { token: shop.key })).status).toBe(204);
    expect(await stored()).toEqual([]);
  });

  it('400 for a query id that names no search of the key, naming each; nothing of the batch is stored', async () => {
    const { key } = await createShop('strict');
    const start = new Date().toISOString();
    const ours = await search('lamp', rest, key);
    const theirs = await search('lamp', rest, 'other-shop');
    // One hex digit of the signature changed.
    const edited = ours.query_id.replace(/.$/, (digit) => (digit === '0' ? '1' : '0'));
    const before = await storedEvents();
    const response = await client.post(`${SEARCH}/${key}/events`, {
      data: [
        { type: 'conversion', query_id: ours.query_id, document_id: 'p1', value: 10 },
        { type: 'conversion', query_id: uuidv7(), document_id: 'p1', value: 1000 },
        { type: 'conversion', query_id: theirs.query_id, document_id: 'p1', value: 1000 },
        { type: 'conversion', query_id: edited, document_id: 'p1', value: 1000 },
      ],
    });
    expect(response.status, response.rawBody).toBe(400);
    expect(response.body.error.details).toEqual(
      [1, 2, 3].map((i) => ({
        field: `body.data[${i}].query_id`,
        message: `is not the query_id of a search through ${key}`,
      })),
    );
    expect(await storedEvents()).toEqual(before);
    expect(await analytics(start, rest, 'strict')).toMatchObject({ searches: 1, conversions: 0, revenue: 0 });
    expect(await analytics(start, rest, 'products', otherTenant)).toMatchObject({
      searches: 1,
      conversions: 0,
      revenue: 0,
    });
  });

  it('accepts, without storing them, events of a search past the analytics retention', async () => {
    const { key, indexId } = await createShop('retained');
    const fresh = await search('lamp', rest, key);
    // Signed as the app signs (the secret derives from the master key): a real search, 91 days ago.
    const codec = createQueryIdCodec(createHmac('sha256', TEST_MASTER_KEY).update('search-query-ids').digest());
    const searchedAt = Math.floor(Date.now() / 1000) - (config.searchAnalyticsRetentionDays + 1) * 86_400;
    const old = codec.issue(indexId, { searchedAt, queryKey: queryKeyOf('lamp') });
    const before = (await storedEvents()).length;
    const response = await client.post(`${SEARCH}/${key}/events`, {
      data: [
        { type: 'view', query_id: old, document_id: 'p1' },
        { type: 'view', query_id: fresh.query_id, document_id: 'p1' },
      ],
    });
    expect(response.status, response.rawBody).toBe(204);
    const rows = await storedEvents();
    expect(rows).toHaveLength(before + 1);
    expect(rows.map((row) => row.search_id)).not.toContain(old);
  });

  it('takes a JSON body sent as text/plain (navigator.sendBeacon) and answers browsers (CORS)', async () => {
    const result = await search('chair');
    const before = (await storedEvents()).length;
    const response = await client.post(EVENTS, undefined, {
      rawBody: JSON.stringify({ data: [{ type: 'view', query_id: result.query_id, document_id: 'p3' }] }),
      headers: { 'content-type': 'text/plain;charset=UTF-8', origin: 'https://shop.example.com' },
    });
    expect(response.status, response.rawBody).toBe(204);
    expect(response.headers['access-control-allow-origin']).toBe('*');
    expect(await storedEvents()).toHaveLength(before + 1);
  });
});

describe('refusals change nothing', () => {
  const client = from('10.0.0.2');
  let queryId: string;
  let articleQueryId: string;
  const event = (fields: object = {}) => ({ type: 'view', query_id: queryId, document_id: 'p1', ...fields });

  beforeAll(async () => {
    queryId = (await search('lamp')).query_id;
    const articles = await rest.post(`${SEARCH}/indexes/articles`, {
      token: shop.key,
      body: { data: [{ q: 'lamp' }] },
    });
    articleQueryId = articles.body.data[0].results[0].query_id;
  });

  const refusals: [string, () => unknown, string][] = [
    ['an unknown type', () => ({ data: [event({ type: 'purchase' })] }), 'body.data[0].type'],
    ['a missing query_id', () => ({ data: [{ type: 'view', document_id: 'p1' }] }), 'body.data[0].query_id'],
    ['a query_id that is not a UUID', () => ({ data: [event({ query_id: 'q-1' })] }), 'body.data[0].query_id'],
    [
      'a missing document_id',
      () => ({ data: [{ type: 'view', query_id: '0192d7a0-0000-7000-8000-000000000000' }] }),
      'body.data[0].document_id',
    ],
    ['a position below 1', () => ({ data: [event({ position: 0 })] }), 'body.data[0].position'],
    ['a position that is not an integer', () => ({ data: [event({ position: 1.5 })] }), 'body.data[0].position'],
    ['a negative value', () => ({ data: [event({ type: 'conversion', value: -1 })] }), 'body.data[0].value'],
    [
      'a value that is not a number',
      () => ({ data: [event({ type: 'conversion', value: '12.50' })] }),
      'body.data[0].value',
    ],
    ['a value on a view', () => ({ data: [event({ value: 5 })] }), 'body.data[0].value'],
    ['an unknown key', () => ({ data: [event({ price: 5 })] }), 'body.data[0].price'],
    ['no events', () => ({ data: [] }), 'body.data'],
    ['101 events', () => ({ data: Array.from({ length: 101 }, () => event()) }), 'body.data'],
    [
      'one bad event among good ones',
      () => ({ data: [event(), event(), event({ position: -3 })] }),
      'body.data[2].position',
    ],
  ];

  it.each(refusals)('400 for %s, naming the field', async (_, body, field) => {
    const before = await storedEvents();
    expectRestError(await client.post(EVENTS, body()), 400, field);
    expect(await storedEvents()).toEqual(before);
  });

  it('400 for the search of an index the key does not search, naming its query_id; the batch is not stored', async () => {
    const before = await storedEvents();
    const response = await client.post(EVENTS, {
      data: [event(), event({ query_id: articleQueryId }), event({ query_id: articleQueryId.toUpperCase() })],
    });
    expectRestError(response, 400, 'body.data[1].query_id');
    expectRestError(response, 400, 'body.data[2].query_id');
    expect(await storedEvents()).toEqual(before);
  });

  it('404 for an unknown key or one without search settings, 401 for a private one without a token', async () => {
    const before = await storedEvents();
    for (const key of ['no-such-shop', 'bare-shop']) {
      const response = await client.post(`${SEARCH}/${key}/events`, { data: [event()] });
      expect(response.status, response.rawBody).toBe(404);
      expect(response.body.error.code).toBe(404);
    }
    expect((await client.post(`${SEARCH}/private-shop/events`, { data: [event()] })).status).toBe(401);
    expect(await storedEvents()).toEqual(before);
    const withToken = await client.post(`${SEARCH}/private-shop/events`, { data: [event()] }, { token: shop.key });
    expect(withToken.status, withToken.rawBody).toBe(204);
    expect(await storedEvents()).toHaveLength(before.length + 1);
  });

  it('413 for a body over 1 MiB', async () => {
    const before = await storedEvents();
    const rawBody = JSON.stringify({ data: [event({ document_id: 'x'.repeat(1024 * 1024) })] });
    const response = await client.post(EVENTS, undefined, {
      rawBody,
      headers: { 'content-type': 'application/json' },
    });
    expect(response.status).toBe(413);
    expect(response.body.error.code).toBe(413);
    expect(await storedEvents()).toEqual(before);
  });
});

describe('the limit per client address', () => {
  it(`${EVENTS_PER_MINUTE} requests a minute per address, malformed ones too, then 429 with Retry-After, storing nothing`, async () => {
    const queryId = (await search('lamp')).query_id;
    const body = { data: [{ type: 'view', query_id: queryId, document_id: 'p1' }] };
    const client = from('10.0.0.3');
    const malformed = await client.post(EVENTS, { data: [] });
    expect(malformed.status, malformed.rawBody).toBe(400);
    expect(malformed.headers['ratelimit-remaining']).toBe(String(EVENTS_PER_MINUTE - 1));
    for (let i = 1; i < EVENTS_PER_MINUTE; i++) {
      const response = await client.post(EVENTS, body);
      expect(response.status, response.rawBody).toBe(204);
      expect(response.headers['ratelimit-limit']).toBe(String(EVENTS_PER_MINUTE));
      expect(response.headers['ratelimit-remaining']).toBe(String(EVENTS_PER_MINUTE - i - 1));
    }
    const before = await storedEvents();
    const refused = await client.post(EVENTS, body);
    expect(refused.status, refused.rawBody).toBe(429);
    expect(refused.body.error.message).toMatch(/^Too many requests: .*40 requests per minute/);
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    expect(await storedEvents()).toEqual(before);
    // Another address has its own count.
    expect((await from('10.0.0.4').post(EVENTS, body)).status).toBe(204);
  });
});
