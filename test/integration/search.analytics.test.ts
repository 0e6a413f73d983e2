/**
 * Storage of search analytics stays bounded: searches are counted per (index, query, hour), so
 * repeating a query adds no row however many contexts and indexes a request has; the processes of a
 * deployment merge their counts into the same rows; housekeeping deletes what is older than
 * SEARCH_ANALYTICS_RETENTION_DAYS in batches and keeps the rest; and the migration that introduced
 * the counts carries the searches, clicks and events stored before it over with the same figures.
 */
import { cpSync, mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { beforeAll, describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import { buildApp } from '../../src/app';
import { DELETE_BATCH_SIZE } from '../../src/kernel/batched-delete';
import { createDb } from '../../src/kernel/db';
import { applyMigrations, MIGRATIONS_DIR } from '../../src/kernel/migrations';
import { deleteExpired } from '../../src/modules/housekeeping';
import { deleteExpiredSearchAnalytics } from '../../src/modules/search';
import { queryKeyOf } from '../../src/modules/search/analytics/query-ids';
import { SearchLog, type SearchRecord } from '../../src/modules/search/analytics/search-log';
import { createKey, createTenant, startTestApp, TEST_MASTER_KEY, type Tenant } from '../helpers/app';
import { sql } from '../helpers/db';
import { createRestClient } from '../helpers/rest';

const RETENTION_DAYS = 30;
const t = await startTestApp({ env: { SEARCH_ANALYTICS_RETENTION_DAYS: String(RETENTION_DAYS) } });

/** A second process of the same deployment, with its own search log. */
const otherDb = createDb(t.databaseUrl, { poolSize: 2 });
const other = await buildApp({ config: t.config, db: otherDb, masterKey: TEST_MASTER_KEY, backgroundWorkers: false });
await other.app.ready();
const otherRest = createRestClient(other.app);

const INDEXES = '/api/instant/indexes';
const SEARCH = '/api/instant/search';
const products = [
  { id: 'p1', name: 'Desk lamp', price: 25 },
  { id: 'p2', name: 'Floor lamp', price: 80 },
  { id: 'p3', name: 'Office chair', price: 150 },
];

let shop: Tenant;
const indexIds = new Map<string, string>();

beforeAll(async () => {
  shop = await createTenant(t.rest, 'Shop');
  for (const alias of ['lamps', 'chairs', 'merged', 'expiring']) {
    const created = await t.rest.post(INDEXES, { token: shop.key, body: { data: { name: alias, alias } } });
    expect(created.status, created.rawBody).toBe(201);
    const upserted = await t.rest.put(`${INDEXES}/${alias}/documents`, { token: shop.key, body: { data: products } });
    expect(upserted.status, upserted.rawBody).toBe(204);
    indexIds.set(alias, created.body.data.id);
  }
  const routes = { path: '*', origin: { uri: 'https://shop.example.com' }, settings: { auth: { is_required: false } } };
  const proxy = await t.rest.post('/api/storage/edge/proxies', {
    token: shop.key,
    body: { data: { key: 'shop', routes } },
  });
  expect(proxy.status, proxy.rawBody).toBe(201);
  const settings = await t.rest.put(`${SEARCH}/shop/settings`, {
    token: shop.key,
    body: { data: { indexes: [{ alias: 'lamps' }, { alias: 'chairs' }] } },
  });
  expect(settings.status, settings.rawBody).toBe(200);
  return async () => {
    await other.app.close();
    await otherDb.$disconnect();
  };
});

/** Rows of the counts of an index: one per hour and query, with how many searches each counts. */
const countRows = (alias: string) =>
  sql<{ hour: Date; query: string; searches: number; no_results: number }>(
    t.databaseUrl,
    `SELECT hour, query, searches, no_results FROM search_query_stats WHERE index_id = $1 ORDER BY hour, query`,
    [indexIds.get(alias)],
  );

describe('searches are counted, not stored one by one', () => {
  it('repeating a query adds no row, whatever the contexts and indexes of the requests', async () => {
    // Ten contexts over the key's two indexes: twenty searches a request, as an anonymous caller may send.
    const body = { data: Array.from({ length: 10 }, (_, i) => ({ q: i % 2 ? 'Lamp ' : 'lamp', limit: 1 })) };
    for (let i = 0; i < 5; i++) {
      const response = await t.rest.post(`${SEARCH}/shop`, { body });
      expect(response.status, response.rawBody).toBe(201);
    }
    await t.services.search.log.flush();
    for (const alias of ['lamps', 'chairs']) {
      const rows = await countRows(alias);
      // One row per hour; a second one only when the requests straddled the turn of an hour.
      expect(rows.length).toBeLessThanOrEqual(2);
      expect(new Set(rows.map((row) => row.hour.getTime())).size).toBe(rows.length);
      expect(rows.every((row) => row.query === 'lamp')).toBe(true);
      expect(rows.reduce((sum, row) => sum + row.searches, 0)).toBe(50);
    }
    // A new query is a row of its own.
    await t.rest.post(`${SEARCH}/shop`, { body: { data: [{ q: 'unicorn' }] } });
    await t.services.search.log.flush();
    expect((await countRows('lamps')).filter((row) => row.query === 'unicorn')).toEqual([
      expect.objectContaining({ searches: 1, no_results: 1 }),
    ]);
  });

  it('two processes add their counts to the same rows, written at once in any order', async () => {
    const indexId = indexIds.get('merged')!;
    const searchedAt = Math.floor(Date.now() / 1000);
    const queries = Array.from({ length: 40 }, (_, i) => `query ${i}`);
    const record = (query: string, resultCount: number): SearchRecord => ({
      tenantId: shop.id,
      indexId,
      searchedAt,
      queryKey: queryKeyOf(query),
      query,
      resultCount,
    });
    const fail = (error: unknown) => {
      throw error;
    };
    const logs = [t.services.search.log, other.services.search.log, new SearchLog(t.db, fail)];
    // Each log writes the same rows in a different order of recording, three rounds at once.
    for (let round = 0; round < 3; round++) {
      logs.forEach((log, i) => {
        const ordered = i % 2 ? [...queries].reverse() : queries;
        log.record(ordered.map((query) => record(query, i)));
      });
      await Promise.all(logs.map((log) => log.flush()));
    }
    const rows = await countRows('merged');
    expect(rows).toHaveLength(queries.length);
    for (const row of rows) expect(row).toMatchObject({ searches: 9, no_results: 3 });
    const [sum] = await sql<{ result_count_sum: string }>(
      t.databaseUrl,
      `SELECT result_count_sum::text FROM search_query_stats WHERE index_id = $1 AND query = 'query 0'`,
      [indexId],
    );
    expect(sum!.result_count_sum).toBe(String(3 * (0 + 1 + 2)));
  });

  it('a search answered by either process counts once in the analytics of both', async () => {
    const start = new Date().toISOString();
    await otherRest.post(`${SEARCH}/indexes/chairs`, { token: shop.key, body: { data: [{ q: 'office chair' }] } });
    await t.rest.post(`${SEARCH}/indexes/chairs`, { token: shop.key, body: { data: [{ q: 'Office Chair' }] } });
    await other.services.search.log.flush();
    for (const rest of [t.rest, otherRest]) {
      const response = await rest.get(`${INDEXES}/chairs/analytics?from=${encodeURIComponent(start)}`, {
        token: shop.key,
      });
      expect(response.status, response.rawBody).toBe(200);
      expect(response.body.data.top_queries).toContainEqual(
        expect.objectContaining({ query: 'office chair', searches: 2, average_result_count: 1 }),
      );
    }
  });
});

describe('retention', () => {
  /** Counts, clicks and events of `alias` for a search `daysAgo` days ago; `events` of them. */
  async function insertAnalytics(alias: string, daysAgo: number, events: number) {
    const params = [shop.id, indexIds.get(alias), daysAgo, `searched ${daysAgo} days ago`, events];
    const hour = `date_trunc('hour', now() - make_interval(days => $3), 'UTC')`;
    const key = `('x' || left(encode(sha256(convert_to($4, 'UTF8')), 'hex'), 10))::bit(40)::bigint`;
    await sql(
      t.databaseUrl,
      `INSERT INTO search_query_stats (tenant_id, index_id, hour, query_key, query, searches, no_results, result_count_sum)
       VALUES ($1, $2, ${hour}, ${key}, $4, $5::int, 0, $5::int)`,
      params,
    );
    await sql(
      t.databaseUrl,
      `INSERT INTO search_events (id, tenant_id, index_id, search_id, search_hour, query_key, type, document_id)
       SELECT gen_random_uuid(), $1, $2, gen_random_uuid(), ${hour}, ${key}, 'VIEW', 'p1' FROM generate_series(1, $5::int)`,
      params,
    );
    await sql(
      t.databaseUrl,
      `INSERT INTO search_clicks (id, tenant_id, index_id, search_id, search_hour, query_key, document_id, position)
       SELECT gen_random_uuid(), $1, $2, gen_random_uuid(), ${hour}, ${key}, 'p1', 1 FROM generate_series(1, $5::int)`,
      params,
    );
  }

  const remaining = async () =>
    (
      await sql<{ what: string; rows: number }>(
        t.databaseUrl,
        `SELECT 'counts ' || query AS what, searches AS rows FROM search_query_stats WHERE index_id = $1
         UNION ALL
         SELECT 'events ' || (now() - search_hour > interval '${RETENTION_DAYS} days'), count(*)::int
           FROM search_events WHERE index_id = $1 GROUP BY 1
         UNION ALL
         SELECT 'clicks ' || (now() - search_hour > interval '${RETENTION_DAYS} days'), count(*)::int
           FROM search_clicks WHERE index_id = $1 GROUP BY 1
         ORDER BY 1`,
        [indexIds.get('expiring')],
      )
    ).map((row) => `${row.what}: ${row.rows}`);

  it(`housekeeping deletes, in batches, what is older than SEARCH_ANALYTICS_RETENTION_DAYS and keeps the rest`, async () => {
    const expired = 2 * DELETE_BATCH_SIZE + 7;
    await insertAnalytics('expiring', RETENTION_DAYS + 1, expired);
    await insertAnalytics('expiring', RETENTION_DAYS - 1, 5);
    expect(await remaining()).toEqual([
      `clicks false: 5`,
      `clicks true: ${expired}`,
      `counts searched ${RETENTION_DAYS - 1} days ago: 5`,
      `counts searched ${RETENTION_DAYS + 1} days ago: ${expired}`,
      `events false: 5`,
      `events true: ${expired}`,
    ]);

    // Two processes' passes at once delete each row once.
    const passes = await Promise.all([
      deleteExpired({ db: t.db, config: t.config }),
      deleteExpired({ db: otherDb, config: t.config }),
    ]);
    const total = (key: 'searchCounts' | 'searchEvents' | 'searchClicks') =>
      passes.reduce((sum, pass) => sum + pass[key], 0);
    // Other tests' analytics are recent: only these rows were past the retention.
    expect([total('searchCounts'), total('searchEvents'), total('searchClicks')]).toEqual([1, expired, expired]);
    expect(await remaining()).toEqual([
      `clicks false: 5`,
      `counts searched ${RETENTION_DAYS - 1} days ago: 5`,
      `events false: 5`,
    ]);
    // The searches of this hour are kept too.
    expect((await countRows('lamps')).length).toBeGreaterThan(0);
  });

  it('a pass stops between batches when its process is stopping', async () => {
    await insertAnalytics('expiring', RETENTION_DAYS + 2, DELETE_BATCH_SIZE + 1);
    const retention = { analyticsDays: RETENTION_DAYS, eventsDays: RETENTION_DAYS };
    const pass = await deleteExpiredSearchAnalytics(t.db, retention, { stopping: () => true });
    const none = { searchActivityRolledUp: 0, searchActivityCounts: 0, searchPositionClicks: 0 };
    expect(pass).toEqual({
      searchClicks: DELETE_BATCH_SIZE,
      searchEvents: DELETE_BATCH_SIZE,
      searchCounts: 1,
      ...none,
    });
    expect(await deleteExpiredSearchAnalytics(t.db, retention)).toEqual({
      searchClicks: 1,
      searchEvents: 1,
      searchCounts: 0,
      ...none,
    });
  });
});

describe('the migration to counts per hour', () => {
  it('carries the searches, clicks and events stored before it over, with the same analytics', async () => {
    const adminUrl = inject('adminDatabaseUrl');
    const name = `counts_${Math.random().toString(36).slice(2, 10)}`;
    const admin = new pg.Client({ connectionString: adminUrl });
    await admin.connect();
    await admin.query(`CREATE DATABASE ${name}`);
    await admin.end();
    const url = adminUrl.replace(/\/[^/]+$/, `/${name}`);

    // The database as it was before: every migration up to the one that introduced the counts.
    const before = mkdtempSync(join(tmpdir(), 'migrations-'));
    for (const migration of readdirSync(MIGRATIONS_DIR).filter((entry) => entry < '20261126140500')) {
      cpSync(join(MIGRATIONS_DIR, migration), join(before, migration), { recursive: true });
    }
    await applyMigrations(url, before);
    const tenant = '0195f7a0-0000-7000-8000-000000000001';
    const index = '0195f7a0-0000-7000-8000-0000000000a1';
    const searchId = (n: number) => `0195f7a0-0000-7000-8000-0000000000b${n}`;
    await sql(url, `INSERT INTO tenants (id, name) VALUES ($1, 'Before')`, [tenant]);
    await sql(
      url,
      `INSERT INTO search_indexes (id, tenant_id, alias, name, source_type, fields, filters, synonyms, seen_field_types)
       VALUES ($1, $2, 'before', 'Before', 'manual', '[]', '[]', '[]', '{}')`,
      [index, tenant],
    );
    // Four searches in two hours of yesterday, one without results.
    await sql(
      url,
      `INSERT INTO search_queries (id, tenant_id, index_id, query, result_count, created_at) VALUES
         ($3, $1, $2, 'lamp', 3, date_trunc('hour', now(), 'UTC') - interval '1 day' + interval '10 minutes'),
         ($4, $1, $2, 'lamp', 0, date_trunc('hour', now(), 'UTC') - interval '1 day' + interval '50 minutes'),
         ($5, $1, $2, 'lamp', 5, date_trunc('hour', now(), 'UTC') - interval '23 hours'),
         ($6, $1, $2, 'chair', 1, date_trunc('hour', now(), 'UTC') - interval '23 hours')`,
      [tenant, index, searchId(1), searchId(2), searchId(3), searchId(4)],
    );
    // A followed click of the first search; events of the first and third, and one of a search never stored.
    await sql(
      url,
      `INSERT INTO search_clicks (id, tenant_id, index_id, search_id, document_id, position)
       VALUES (gen_random_uuid(), $1, $2, $3, 'p1', 1)`,
      [tenant, index, searchId(1)],
    );
    await sql(
      url,
      `INSERT INTO search_events (id, tenant_id, index_id, search_id, type, document_id, position, value) VALUES
         (gen_random_uuid(), $1, $2, $3, 'CLICK', 'p1', 1, NULL),
         (gen_random_uuid(), $1, NULL, $4, 'CONVERSION', 'p2', NULL, 12.5),
         (gen_random_uuid(), $1, NULL, $5, 'CONVERSION', 'p2', NULL, 1000)`,
      [tenant, index, searchId(1), searchId(3), '0195f7a0-0000-7000-8000-0000000000ff'],
    );

    expect((await applyMigrations(url)).applied).toContain('20261126140500_bounded_search_analytics');
    expect(await sql(url, `SELECT count(*)::int AS n FROM search_events`)).toEqual([{ n: 2 }]);
    const app = await startTestApp({ databaseUrl: url });
    const key = await createKey(app.rest, tenant, ['*']);
    const response = await app.rest.get(`${INDEXES}/before/analytics`, { token: key });
    expect(response.status, response.rawBody).toBe(200);
    expect(response.body.data).toMatchObject({
      searches: 4,
      clicks: 2,
      click_through_rate: 1 / 4,
      no_result_rate: 1 / 4,
      conversions: 1,
      revenue: 12.5,
      top_queries: [
        expect.objectContaining({ query: 'lamp', searches: 3, clicks: 2, conversions: 1, average_result_count: 8 / 3 }),
        expect.objectContaining({ query: 'chair', searches: 1, clicks: 0, average_result_count: 1 }),
      ],
      no_result_queries: [{ query: 'lamp', searches: 1 }],
      click_through_rate_by_position: [{ position: 1, clicks: 2, click_through_rate: 2 / 4 }],
    });
  });
});
