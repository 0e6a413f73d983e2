/**
 * Storage of search analytics: searches counted per (index, query, hour), followed click URLs and
 * reported events, what the analytics compute from them, and their retention. SQL only.
 */
import { Prisma, type SearchEventType } from '../../../__generated__/prisma/client';
import { z } from 'zod';
import type { Db, DbOrTx } from '../../../kernel/db';
import { int8, parseRows } from '../../../kernel/rows';

/** Searches of one query of an index in one hour, as one process counted them since its last write. */
export interface SearchCount {
  tenantId: string;
  indexId: string;
  /** Start of the hour (UTC). */
  hour: Date;
  queryKey: number;
  /** The query as typed, trimmed and lowercased. */
  query: string;
  searches: number;
  /** Searches that found nothing. */
  noResults: number;
  /** The result counts of the searches, added up (for their average). */
  resultCountSum: number;
}

/**
 * Adds counts to the stored ones in one statement, so that the processes of a deployment merge
 * theirs into one row per (index, hour, query). Rows are written in key order, the same in every
 * process, so that two processes writing the same rows wait for each other instead of deadlocking.
 * Counts of an index deleted meanwhile are dropped.
 */
export const addSearchCounts = (db: Db, counts: SearchCount[]) =>
  db.$executeRaw`
    INSERT INTO search_query_stats AS s
           (tenant_id, index_id, hour, query_key, query, searches, no_results, result_count_sum)
    SELECT r.tenant_id, r.index_id, r.hour, r.query_key, r.query, r.searches, r.no_results, r.result_count_sum
      FROM jsonb_to_recordset(${JSON.stringify(
        counts.map((c) => ({
          tenant_id: c.tenantId,
          index_id: c.indexId,
          hour: c.hour.toISOString(),
          query_key: c.queryKey,
          query: c.query,
          searches: c.searches,
          no_results: c.noResults,
          result_count_sum: c.resultCountSum,
        })),
      )}::jsonb) AS r(tenant_id uuid, index_id uuid, hour timestamptz, query_key bigint, query text, searches int,
        no_results int, result_count_sum bigint)
      JOIN search_indexes i ON i.id = r.index_id
     ORDER BY r.index_id, r.hour, r.query_key, r.query
        ON CONFLICT (index_id, hour, query_key, query) DO UPDATE SET
           searches = s.searches + EXCLUDED.searches,
           no_results = s.no_results + EXCLUDED.no_results,
           result_count_sum = s.result_count_sum + EXCLUDED.result_count_sum`;

/** SQLSTATE classes of a statement refused for a value it holds: data exception, integrity constraint, trigger. */
const ROW_REFUSAL_CLASSES = ['22', '23', 'P0'];

/**
 * Why PostgreSQL refused a statement for a value it holds (`22021: invalid byte sequence ...`), or
 * undefined when the statement failed otherwise: database unreachable or restarting, or a bug.
 */
export function rowRefusal(error: unknown): string | undefined {
  const { meta } = error as {
    meta?: { driverAdapterError?: { cause?: { originalCode?: unknown; message?: unknown } } };
  };
  const cause = meta?.driverAdapterError?.cause;
  const code = cause?.originalCode;
  if (typeof code !== 'string' || !ROW_REFUSAL_CLASSES.some((prefix) => code.startsWith(prefix))) return undefined;
  return `${code}: ${String(cause?.message)}`;
}

/** What ties a click or an event to the counts of its search: its index, hour and query key. */
interface OfSearch {
  tenantId: string;
  indexId: string;
  /** The search's query id. */
  searchId: string;
  searchHour: Date;
  queryKey: number;
}

export interface ClickRecord extends OfSearch {
  id: string;
  documentId: string;
  position: number;
}

export const insertClick = (db: Db, { queryKey, ...click }: ClickRecord) =>
  db.searchClick.create({ data: { ...click, queryKey: BigInt(queryKey) } });

/** One reported search event. */
export interface SearchEventRecord extends OfSearch {
  id: string;
  type: SearchEventType;
  documentId: string;
  position: number | null;
  sessionId: string | null;
  value: number | null;
}

/** Stores events in one statement. */
export const insertEvents = (db: Db, records: SearchEventRecord[]) =>
  db.$executeRaw`
    INSERT INTO search_events (id, tenant_id, index_id, search_id, search_hour, query_key, type, document_id, position,
                               session_id, value)
    SELECT r.id, r.tenant_id, r.index_id, r.search_id, r.search_hour, r.query_key, r.type::search_event_type,
           r.document_id, r.position, r.session_id, r.value
      FROM jsonb_to_recordset(${JSON.stringify(
        records.map((r) => ({
          id: r.id,
          tenant_id: r.tenantId,
          index_id: r.indexId,
          search_id: r.searchId,
          search_hour: r.searchHour.toISOString(),
          query_key: r.queryKey,
          type: r.type,
          document_id: r.documentId,
          position: r.position,
          session_id: r.sessionId,
          value: r.value,
        })),
      )}::jsonb) AS r(id uuid, tenant_id uuid, index_id uuid, search_id uuid, search_hour timestamptz, query_key
        bigint, type text, document_id text, position int, session_id text, value numeric)`;

/** An index and a range of whole hours: the searches made in `[from, to)`. */
export interface AnalyticsRange {
  indexId: string;
  from: Date;
  to: Date;
  limit: number;
}

/*
 * Every figure is about the searches made in the range: their counts, and the followed click URLs
 * and reported events of those searches (found by the hour and query key their query id carries),
 * whether still stored row by row or already counted into `search_activity_counts` and
 * `search_position_clicks` (see `rollUpActivity`). A click or event counts only while its search's
 * counts are stored.
 */

/** The stored followed click URLs (as `CLICK`) and events of the searches made in the range. */
const storedActivity = (range: AnalyticsRange) => Prisma.sql`
  SELECT search_hour, query_key, search_id, 'CLICK'::search_event_type AS type, NULL::numeric AS value, position
    FROM search_clicks
   WHERE index_id = ${range.indexId}::uuid AND search_hour >= ${range.from} AND search_hour < ${range.to}
  UNION ALL
  SELECT search_hour, query_key, search_id, type, value, position
    FROM search_events
   WHERE index_id = ${range.indexId}::uuid AND search_hour >= ${range.from} AND search_hour < ${range.to}`;

/** Whether the counts of the searches of `a.search_hour` and `a.query_key` are stored. */
const searchCounted = (range: AnalyticsRange) => Prisma.sql`
  EXISTS (SELECT 1 FROM search_query_stats s
           WHERE s.index_id = ${range.indexId}::uuid AND s.hour = a.search_hour AND s.query_key = a.query_key)`;

/**
 * The activity of the searches counted in the range, per hour and query key: the stored rows
 * counted, and the counts of the rows already deleted. A search's rows are counted into the counts
 * all at once, so its clicks are never in both (`clicked`, a count of searches, adds up).
 */
const activityOf = (range: AnalyticsRange) => Prisma.sql`
  SELECT a.* FROM (
    SELECT search_hour, query_key,
           count(DISTINCT search_id) FILTER (WHERE type = 'CLICK') AS clicked,
           count(*) FILTER (WHERE type = 'CLICK') AS clicks,
           count(*) FILTER (WHERE type = 'VIEW') AS views,
           count(*) FILTER (WHERE type = 'ADD_TO_CART') AS add_to_carts,
           count(*) FILTER (WHERE type = 'CONVERSION') AS conversions,
           coalesce(sum(value) FILTER (WHERE type = 'CONVERSION'), 0) AS revenue
      FROM (${storedActivity(range)}) r
     GROUP BY search_hour, query_key
    UNION ALL
    SELECT hour, query_key, clicked, clicks, views, add_to_carts, conversions, revenue
      FROM search_activity_counts
     WHERE index_id = ${range.indexId}::uuid AND hour >= ${range.from} AND hour < ${range.to}
  ) a
  WHERE ${searchCounted(range)}`;

const activityCounts = Prisma.sql`
  coalesce(sum(a.clicked), 0)::bigint AS clicked,
  coalesce(sum(a.clicks), 0)::bigint AS clicks,
  coalesce(sum(a.views), 0)::bigint AS views,
  coalesce(sum(a.add_to_carts), 0)::bigint AS add_to_carts,
  coalesce(sum(a.conversions), 0)::bigint AS conversions,
  coalesce(sum(a.revenue), 0)::float8 AS revenue`;

const ActivityCounts = z.object({
  clicked: int8,
  clicks: int8,
  views: int8,
  add_to_carts: int8,
  conversions: int8,
  revenue: z.number(),
});

/** Totals of an index over a range: searches, those without results or with a click, clicks and events. */
export const countSearchesAndEvents = async (db: Db, range: AnalyticsRange) => {
  const [row] = parseRows(
    ActivityCounts.extend({ searches: int8, no_results: int8 }),
    await db.$queryRaw<unknown[]>`
      WITH counted AS (
        SELECT coalesce(sum(searches), 0)::bigint AS searches, coalesce(sum(no_results), 0)::bigint AS no_results
          FROM search_query_stats
         WHERE index_id = ${range.indexId}::uuid AND hour >= ${range.from} AND hour < ${range.to}
      )
      SELECT (SELECT searches FROM counted) AS searches, (SELECT no_results FROM counted) AS no_results,
             ${activityCounts}
        FROM (${activityOf(range)}) a`,
  );
  return {
    searches: row!.searches,
    noResults: row!.no_results,
    clickedSearches: row!.clicked,
    clicks: row!.clicks,
    views: row!.views,
    addToCarts: row!.add_to_carts,
    conversions: row!.conversions,
    revenue: row!.revenue,
  };
};

/** The most frequent queries with how many of their searches were clicked, and their events. */
export const topQueries = async (db: Db, range: AnalyticsRange) =>
  parseRows(
    ActivityCounts.extend({ query: z.string(), searches: int8, average_result_count: z.number() }),
    await db.$queryRaw<unknown[]>`
    WITH counted AS (
      SELECT hour, query_key, query, searches, result_count_sum FROM search_query_stats
       WHERE index_id = ${range.indexId}::uuid AND hour >= ${range.from} AND hour < ${range.to} AND query <> ''
    ), top AS (
      SELECT query, sum(searches)::bigint AS searches,
             (sum(result_count_sum) / sum(searches))::float8 AS average_result_count
        FROM counted GROUP BY query
       ORDER BY sum(searches) DESC, query
       LIMIT ${range.limit}
    ), top_activity AS (
      SELECT t.query, ${activityCounts}
        FROM top t
        JOIN counted c ON c.query = t.query
        JOIN (${activityOf(range)}) a ON a.search_hour = c.hour AND a.query_key = c.query_key
       GROUP BY t.query
    )
    SELECT t.query, t.searches, t.average_result_count,
           coalesce(ta.clicked, 0) AS clicked, coalesce(ta.clicks, 0) AS clicks, coalesce(ta.views, 0) AS views,
           coalesce(ta.add_to_carts, 0) AS add_to_carts, coalesce(ta.conversions, 0) AS conversions,
           coalesce(ta.revenue, 0)::float8 AS revenue
      FROM top t LEFT JOIN top_activity ta ON ta.query = t.query
     ORDER BY t.searches DESC, t.query`,
  );

export const noResultQueries = async (db: Db, range: AnalyticsRange) =>
  parseRows(
    z.object({ query: z.string(), searches: int8 }),
    await db.$queryRaw<unknown[]>`
    SELECT query, sum(no_results)::bigint AS searches FROM search_query_stats
     WHERE index_id = ${range.indexId}::uuid AND hour >= ${range.from} AND hour < ${range.to} AND
       no_results > 0 AND query <> ''
     GROUP BY query
     ORDER BY sum(no_results) DESC, query
     LIMIT ${range.limit}`,
  );

/** Clicks per position: followed click URLs, and `click` events that give a position, stored or counted. */
export const clicksByPosition = async (db: Db, range: AnalyticsRange) =>
  parseRows(
    z.object({ position: z.number(), clicks: int8 }),
    await db.$queryRaw<unknown[]>`
    SELECT a.position, sum(a.clicks)::bigint AS clicks FROM (
      SELECT search_hour, query_key, position, count(*) AS clicks FROM (${storedActivity(range)}) r
       WHERE type = 'CLICK' AND position IS NOT NULL
       GROUP BY search_hour, query_key, position
      UNION ALL
      SELECT hour, query_key, position, clicks FROM search_position_clicks
       WHERE index_id = ${range.indexId}::uuid AND hour >= ${range.from} AND hour < ${range.to}
    ) a
     WHERE ${searchCounted(range)}
     GROUP BY a.position
     ORDER BY a.position
     LIMIT ${range.limit}`,
  );

/*
 * Retention: each statement deletes at most `limit` rows of searches made before `cutoff`, found
 * through the index on their hour, and skips rows another process is deleting at the same moment.
 */

/** Counts of clicks and events of searches made before `cutoff` (whose rows were deleted before). */
export const deleteActivityCountsBefore = (db: Db, cutoff: Date, limit: number) =>
  db.$executeRaw`
    DELETE FROM search_activity_counts WHERE ctid = ANY(ARRAY(
      SELECT ctid FROM search_activity_counts WHERE hour < ${cutoff} LIMIT ${limit} FOR UPDATE SKIP LOCKED))`;

export const deletePositionClicksBefore = (db: Db, cutoff: Date, limit: number) =>
  db.$executeRaw`
    DELETE FROM search_position_clicks WHERE ctid = ANY(ARRAY(
      SELECT ctid FROM search_position_clicks WHERE hour < ${cutoff} LIMIT ${limit} FOR UPDATE SKIP LOCKED))`;

export const deleteSearchCountsBefore = (db: Db, cutoff: Date, limit: number) =>
  db.$executeRaw`
    DELETE FROM search_query_stats WHERE ctid = ANY(ARRAY(
      SELECT ctid FROM search_query_stats WHERE hour < ${cutoff} LIMIT ${limit} FOR UPDATE SKIP LOCKED))`;

export const deleteClicksBefore = (db: Db, cutoff: Date, limit: number) =>
  db.$executeRaw`
    DELETE FROM search_clicks WHERE ctid = ANY(ARRAY(
      SELECT ctid FROM search_clicks WHERE search_hour < ${cutoff} LIMIT ${limit} FOR UPDATE SKIP LOCKED))`;

export const deleteEventsBefore = (db: Db, cutoff: Date, limit: number) =>
  db.$executeRaw`
    DELETE FROM search_events WHERE ctid = ANY(ARRAY(
      SELECT ctid FROM search_events WHERE search_hour < ${cutoff} LIMIT ${limit} FOR UPDATE SKIP LOCKED))`;

/**
 * Counts the stored clicks and events of the searches of one index and hour made before `cutoff`
 * (the oldest such hour, found through the indexes on their hour) into `search_activity_counts`
 * and `search_position_clicks`, and deletes those rows, in one statement: each row is counted
 * exactly once, and a search's rows all at once. The caller holds the rollup lock, so that two
 * processes never split a search's rows between them. Returns the rows deleted (0: none left).
 */
export async function rollUpActivity(db: DbOrTx, cutoff: Date): Promise<number> {
  const [row] = parseRows(
    z.object({ rows: int8 }),
    await db.$queryRaw<unknown[]>`
    WITH oldest AS (
      SELECT index_id, search_hour FROM (
        (SELECT index_id, search_hour FROM search_clicks WHERE search_hour < ${cutoff} ORDER BY search_hour LIMIT 1)
        UNION ALL
        (SELECT index_id, search_hour FROM search_events WHERE search_hour < ${cutoff} ORDER BY search_hour LIMIT 1)
      ) o ORDER BY search_hour LIMIT 1
    ), clicks AS (
      DELETE FROM search_clicks c USING oldest
       WHERE c.index_id = oldest.index_id AND c.search_hour = oldest.search_hour
      RETURNING c.tenant_id, c.index_id, c.search_hour, c.query_key, c.search_id, 'CLICK'::search_event_type AS type,
                NULL::numeric AS value, c.position
    ), events AS (
      DELETE FROM search_events e USING oldest
       WHERE e.index_id = oldest.index_id AND e.search_hour = oldest.search_hour
      RETURNING e.tenant_id, e.index_id, e.search_hour, e.query_key, e.search_id, e.type, e.value, e.position
    ), deleted AS (
      SELECT * FROM clicks UNION ALL SELECT * FROM events
    ), counted AS (
      INSERT INTO search_activity_counts AS s
             (tenant_id, index_id, hour, query_key, clicked, clicks, views, add_to_carts, conversions, revenue)
      SELECT tenant_id, index_id, search_hour, query_key,
             count(DISTINCT search_id) FILTER (WHERE type = 'CLICK'),
             count(*) FILTER (WHERE type = 'CLICK'),
             count(*) FILTER (WHERE type = 'VIEW'),
             count(*) FILTER (WHERE type = 'ADD_TO_CART'),
             count(*) FILTER (WHERE type = 'CONVERSION'),
             coalesce(sum(value) FILTER (WHERE type = 'CONVERSION'), 0)
        FROM deleted GROUP BY tenant_id, index_id, search_hour, query_key
          ON CONFLICT (index_id, hour, query_key) DO UPDATE SET
             clicked = s.clicked + EXCLUDED.clicked, clicks = s.clicks + EXCLUDED.clicks,
             views = s.views + EXCLUDED.views, add_to_carts = s.add_to_carts + EXCLUDED.add_to_carts,
             conversions = s.conversions + EXCLUDED.conversions, revenue = s.revenue + EXCLUDED.revenue
      RETURNING 1
    ), positioned AS (
      INSERT INTO search_position_clicks AS p (tenant_id, index_id, hour, query_key, position, clicks)
      SELECT tenant_id, index_id, search_hour, query_key, position, count(*)
        FROM deleted WHERE type = 'CLICK' AND position IS NOT NULL
       GROUP BY tenant_id, index_id, search_hour, query_key, position
          ON CONFLICT (index_id, hour, query_key, position) DO UPDATE SET clicks = p.clicks + EXCLUDED.clicks
      RETURNING 1
    )
    SELECT (SELECT count(*) FROM deleted) AS rows, (SELECT count(*) FROM counted) + (SELECT count(*) FROM positioned)
        AS written`,
  );
  return row!.rows;
}
