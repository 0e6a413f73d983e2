/**
 * Retention of what grows with traffic: housekeeping deletes webhook deliveries done more than
 * BROADCAST_DELIVERY_RETENTION_DAYS ago, reservations released more than RESERVATION_RETENTION_DAYS
 * ago with their items, and the rows of search clicks and events past SEARCH_EVENTS_RETENTION_DAYS,
 * whose counts it keeps so that the analytics answer the same. Newer rows, rows still pending,
 * and everything the stock levels need stay.
 */
import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { deleteExpired } from '../../src/modules/housekeeping';
import { deleteExpiredSearchAnalytics } from '../../src/modules/search';
import { queryKeyOf } from '../../src/modules/search/analytics/query-ids';
import { createTenant, startTestApp, type Tenant } from '../helpers/app';
import { sql } from '../helpers/db';
import { addStock, createStockWorld, expectStockInvariants, levels, type StockWorld } from './orders.fixtures';
import { graphqlData } from './stock.fixtures';

const t = await startTestApp({
  env: {
    BROADCAST_DELIVERY_RETENTION_DAYS: '30',
    RESERVATION_RETENTION_DAYS: '90',
    SEARCH_ANALYTICS_RETENTION_DAYS: '90',
    SEARCH_EVENTS_RETENTION_DAYS: '7',
  },
});
let world: StockWorld;

beforeAll(async () => {
  world = await createStockWorld(t, 'Retention tenant', 2);
});

describe('webhook deliveries', () => {
  it('delivered and finally failed ones are deleted 30 days after their last attempt; pending and newer ones stay', async () => {
    const row = async (status: string, daysAgo: number) => {
      const id = randomUUID();
      await sql(
        t.databaseUrl,
        `INSERT INTO stock_broadcasts (id, tenant_id, mutation_id, channel_id, status, attempts, updated_at, created_at)
         VALUES ($1, $2, $3, $4, $5::broadcast_status, 1, now() - make_interval(days => $6),
                 now() - make_interval(days => $6))`,
        [id, world.tenant.id, randomUUID(), world.channelId, status, daysAgo],
      );
      return id;
    };
    const deleted = [await row('PROCESSED', 31), await row('FAILING', 45)];
    const kept = [await row('PENDING', 60), await row('PROCESSED', 29), await row('FAILING', 1)];

    const pass = await deleteExpired({ db: t.db, config: t.config });
    expect(pass.webhookDeliveries).toBe(deleted.length);
    const left = await sql<{ id: string }>(
      t.databaseUrl,
      'SELECT id FROM stock_broadcasts WHERE tenant_id = $1 ORDER BY id',
      [world.tenant.id],
    );
    expect(left.map((r) => r.id)).toEqual([...kept].sort());
  });
});

describe('reservations', () => {
  const reserve = async (quantity: number) =>
    (
      await graphqlData(
        t,
        world.tenant.key,
        'mutation($input: CreateReservationInput!) { createReservation(input: $input) { reservation { id } } }',
        {
          input: {
            business_id: world.catalog.businessId,
            warehouse_id: world.warehouseId,
            channel_id: world.channelId,
            customer: { name: 'Ada' },
            items: [{ sku: 'SKU-1', quantity }],
            expires_at: Date.now() + 3_600_000,
          },
        },
      )
    ).createReservation.reservation.id as string;
  const remove = (id: string) =>
    graphqlData(
      t,
      world.tenant.key,
      'mutation($input: RemoveReservationInput!) { removeReservation(input: $input) { reservation { id } } }',
      { input: { id } },
    );
  const releasedDaysAgo = (id: string, days: number, status?: string) =>
    sql(
      t.databaseUrl,
      `UPDATE reservations SET released_at = now() - make_interval(days => $3),
              status = coalesce($4::reservation_status, status)
        WHERE tenant_id = $1 AND id = $2`,
      [world.tenant.id, id, days, status ?? null],
    );

  it('removed, expired and converted ones go with their items 90 days after release; active, newer and holding ones stay', async () => {
    await addStock(t, world, 'SKU-1', 20);
    const removedOld = await reserve(1);
    const expiredOld = await reserve(1);
    const convertedOld = await reserve(1);
    const removedRecent = await reserve(1);
    const active = await reserve(2);
    // A reservation that still holds stock is never deleted, whatever its row says.
    const holding = await reserve(3);
    for (const id of [removedOld, expiredOld, convertedOld, removedRecent]) await remove(id);
    await releasedDaysAgo(removedOld, 91);
    await releasedDaysAgo(expiredOld, 120, 'EXPIRED');
    await releasedDaysAgo(convertedOld, 95, 'CONVERTED');
    await releasedDaysAgo(removedRecent, 89);
    await releasedDaysAgo(holding, 200, 'EXPIRED');

    const before = await levels(t, world, 'SKU-1');
    expect(before.reserved).toBe(5);
    const allocations = await sql(t.databaseUrl, 'SELECT * FROM stock_allocations WHERE tenant_id = $1 ORDER BY id', [
      world.tenant.id,
    ]);
    const pass = await deleteExpired({ db: t.db, config: t.config });
    expect(pass.reservations).toBe(3);

    const left = await sql<{ id: string; items: number }>(
      t.databaseUrl,
      `SELECT r.id, (SELECT count(*)::int FROM reservation_items i WHERE i.reservation_id = r.id) AS items
         FROM reservations r WHERE r.tenant_id = $1 ORDER BY r.id`,
      [world.tenant.id],
    );
    expect(left).toEqual([removedRecent, active, holding].sort().map((id) => ({ id, items: 1 })));
    const orphanItems = await sql(
      t.databaseUrl,
      `SELECT i.id FROM reservation_items i WHERE i.tenant_id = $1
          AND NOT EXISTS (SELECT 1 FROM reservations r WHERE r.id = i.reservation_id)`,
      [world.tenant.id],
    );
    expect(orphanItems).toEqual([]);
    // The stock is as it was: levels, allocations, and a ledger that explains it.
    expect(await levels(t, world, 'SKU-1')).toEqual(before);
    expect(
      await sql(t.databaseUrl, 'SELECT * FROM stock_allocations WHERE tenant_id = $1 ORDER BY id', [world.tenant.id]),
    ).toEqual(allocations);
    await expectStockInvariants(t, world.tenant.id);
  });
});

describe('search clicks and events', () => {
  let shop: Tenant;
  let indexId: string;
  const HOUR_MS = 3_600_000;
  const hourAgo = (days: number) => new Date(Math.floor((Date.now() - days * 24 * HOUR_MS) / HOUR_MS) * HOUR_MS);

  beforeAll(async () => {
    shop = await createTenant(t.rest, 'Retention shop');
    const created = await t.rest.post('/api/instant/indexes', {
      token: shop.key,
      body: { data: { name: 'lamps', alias: 'lamps' } },
    });
    expect(created.status, created.rawBody).toBe(201);
    indexId = created.body.data.id;
  });

  /** Searches of `query` in the hour `days` ago, with clicks and events of its searches. */
  async function searchesWithActivity(days: number, query: string, searches: number) {
    const hour = hourAgo(days);
    const queryKey = queryKeyOf(query);
    await sql(
      t.databaseUrl,
      `INSERT INTO search_query_stats (tenant_id, index_id, hour, query_key, query, searches, no_results, result_count_sum)
       VALUES ($1, $2, $3, $4, $5, $6, 1, $6 * 3)`,
      [shop.id, indexId, hour, queryKey, query, searches],
    );
    for (let i = 0; i < searches; i++) {
      const searchId = randomUUID();
      // Some searches clicked twice (a search counts once in the click-through), at varied positions.
      const clicks = i % 3;
      for (let c = 0; c < clicks; c++) {
        await sql(
          t.databaseUrl,
          `INSERT INTO search_clicks (id, tenant_id, index_id, search_id, search_hour, query_key, document_id, position)
           VALUES (gen_random_uuid(), $1, $2, $3, $4, $5, 'p1', $6)`,
          [shop.id, indexId, searchId, hour, queryKey, 1 + ((i + c) % 4)],
        );
      }
      const events: [string, number | null, number | null][] = [
        ['VIEW', null, null],
        ...(i % 2 ? ([['CLICK', 2, null]] as [string, number, null][]) : []),
        ...(i % 4 === 0 ? ([['CLICK', null, null]] as [string, null, null][]) : []),
        ...(i % 5 === 0 ? ([['ADD_TO_CART', null, null]] as [string, null, null][]) : []),
        ...(i % 7 === 0 ? ([['CONVERSION', null, 12.3456 + i]] as [string, null, number][]) : []),
      ];
      for (const [type, position, value] of events) {
        await sql(
          t.databaseUrl,
          `INSERT INTO search_events (id, tenant_id, index_id, search_id, search_hour, query_key, type, document_id,
                                      position, value)
           VALUES (gen_random_uuid(), $1, $2, $3, $4, $5, $6::search_event_type, 'p1', $7, $8)`,
          [shop.id, indexId, searchId, hour, queryKey, type, position, value],
        );
      }
    }
  }

  const analytics = async (fromDays: number) => {
    const from = new Date(Date.now() - fromDays * 24 * HOUR_MS).toISOString();
    const response = await t.rest.get(`/api/instant/indexes/lamps/analytics?from=${encodeURIComponent(from)}`, {
      token: shop.key,
    });
    expect(response.status, response.rawBody).toBe(200);
    return response.body.data;
  };

  const rawRows = async () =>
    (
      await sql<{ what: string; n: number }>(
        t.databaseUrl,
        `SELECT 'clicks ' || (search_hour < now() - interval '7 days') AS what, count(*)::int AS n
           FROM search_clicks WHERE index_id = $1 GROUP BY 1
         UNION ALL
         SELECT 'events ' || (search_hour < now() - interval '7 days'), count(*)::int
           FROM search_events WHERE index_id = $1 GROUP BY 1
         ORDER BY 1`,
        [indexId],
      )
    ).map((row) => `${row.what}: ${row.n}`);

  it('past SEARCH_EVENTS_RETENTION_DAYS are counted and deleted, and the analytics answer the same figures', async () => {
    await searchesWithActivity(20, 'desk lamp', 30);
    await searchesWithActivity(20, 'floor lamp', 11);
    await searchesWithActivity(10, 'desk lamp', 13);
    await searchesWithActivity(3, 'desk lamp', 9);
    const before = await analytics(30);
    const beforeCountedHoursOnly = await analytics(12);
    expect(before.searches).toBe(63);
    expect(before.clicks).toBeGreaterThan(0);
    expect(before.conversions).toBeGreaterThan(0);
    expect(before.click_through_rate_by_position.length).toBeGreaterThan(1);
    const rowsBefore = await rawRows();
    expect(rowsBefore.some((row) => row.startsWith('events true'))).toBe(true);

    // Two processes' passes at once: one rollup at a time, each row counted once.
    const retention = { analyticsDays: 90, eventsDays: 7 };
    const passes = await Promise.all([
      deleteExpiredSearchAnalytics(t.db, retention),
      deleteExpiredSearchAnalytics(t.db, retention),
    ]);
    const rolledUp = passes.reduce((sum, pass) => sum + pass.searchActivityRolledUp, 0);
    const oldRows = rowsBefore
      .filter((row) => row.includes(' true: '))
      .reduce((sum, row) => sum + Number(row.split(': ')[1]), 0);
    expect(rolledUp).toBe(oldRows);

    // Only the rows of the searches 3 days ago are left; their counts hold the rest.
    expect(await rawRows()).toEqual(rowsBefore.filter((row) => row.includes(' false: ')));
    const [counts] = await sql<{ hours: number }>(
      t.databaseUrl,
      'SELECT count(DISTINCT hour)::int AS hours FROM search_activity_counts WHERE index_id = $1',
      [indexId],
    );
    expect(counts!.hours).toBe(2);
    expect(await analytics(30)).toEqual(before);
    expect(await analytics(12)).toEqual(beforeCountedHoursOnly);

    // Once the searches' counts are past SEARCH_ANALYTICS_RETENTION_DAYS, their activity counts go with them.
    const pass = await deleteExpiredSearchAnalytics(t.db, { analyticsDays: 15, eventsDays: 7 });
    expect(pass.searchCounts).toBe(2);
    expect(pass.searchActivityCounts).toBe(2);
    expect(pass.searchPositionClicks).toBeGreaterThan(0);
    const after = await analytics(30);
    expect(after.searches).toBe(22);
  });
});
