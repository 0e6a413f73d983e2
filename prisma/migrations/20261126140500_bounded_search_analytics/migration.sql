-- Storage bounded for anonymous traffic.
--
-- Searches are counted per (index, query, hour) instead of stored one row each: `search_queries`
-- grew by a row per search and index, forever. A search's query id (a signed UUIDv8) now carries
-- its time and query key, so its clicks and events find these counts without a row per search.
-- Each process adds its counts to a row with upserts; fillfactor leaves room on each page so that
-- those updates stay on the page (HOT) and the indexes are not touched.
CREATE TABLE "search_query_stats" (
    "tenant_id" UUID NOT NULL,
    "index_id" UUID NOT NULL,
    "hour" TIMESTAMPTZ(3) NOT NULL,
    "query_key" BIGINT NOT NULL,
    "query" TEXT NOT NULL,
    "searches" INTEGER NOT NULL,
    "no_results" INTEGER NOT NULL,
    "result_count_sum" BIGINT NOT NULL,
    CONSTRAINT "search_query_stats_pkey" PRIMARY KEY ("index_id", "hour", "query_key", "query")
) WITH (fillfactor = 90);
-- Retention deletes by hour, in batches.
CREATE INDEX "search_query_stats_hour_idx" ON "search_query_stats"("hour");
ALTER TABLE "search_query_stats" ADD CONSTRAINT "search_query_stats_tenant_id_fkey"
    FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "search_query_stats" ADD CONSTRAINT "search_query_stats_index_id_fkey"
    FOREIGN KEY ("index_id") REFERENCES "search_indexes"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- The key of a query as the service computes it (queryKeyOf in src/modules/search/analytics/query-ids.ts):
-- the first 40 bits of the SHA-256 of its UTF-8 text.
CREATE FUNCTION pg_temp.query_key(query TEXT) RETURNS BIGINT IMMUTABLE LANGUAGE SQL
    RETURN ('x' || left(encode(sha256(convert_to(query, 'UTF8')), 'hex'), 10))::bit(40)::bigint;

-- The searches stored so far, counted per hour (UTC).
INSERT INTO "search_query_stats"
       ("tenant_id", "index_id", "hour", "query_key", "query", "searches", "no_results", "result_count_sum")
SELECT "tenant_id", "index_id", date_trunc('hour', "created_at", 'UTC'), pg_temp.query_key("query"), "query",
       count(*), count(*) FILTER (WHERE "result_count" = 0), sum("result_count")
  FROM "search_queries"
 GROUP BY "tenant_id", "index_id", date_trunc('hour', "created_at", 'UTC'), "query";

-- Clicks and events name their search's hour and query key. Those of a search that was never stored
-- counted nowhere and are deleted; events whose search was stored after them get its index.
ALTER TABLE "search_clicks" ADD COLUMN "search_hour" TIMESTAMPTZ(3), ADD COLUMN "query_key" BIGINT;
UPDATE "search_clicks" c
   SET "search_hour" = date_trunc('hour', q."created_at", 'UTC'), "query_key" = pg_temp.query_key(q."query")
  FROM "search_queries" q
 WHERE q."id" = c."search_id" AND q."index_id" = c."index_id";
DELETE FROM "search_clicks" WHERE "search_hour" IS NULL;
ALTER TABLE "search_clicks" ALTER COLUMN "search_hour" SET NOT NULL, ALTER COLUMN "query_key" SET NOT NULL;
DROP INDEX "search_clicks_index_id_created_at_idx";
DROP INDEX "search_clicks_search_id_idx";
CREATE INDEX "search_clicks_index_id_search_hour_idx" ON "search_clicks"("index_id", "search_hour");
CREATE INDEX "search_clicks_search_hour_idx" ON "search_clicks"("search_hour");

ALTER TABLE "search_events" ADD COLUMN "search_hour" TIMESTAMPTZ(3), ADD COLUMN "query_key" BIGINT;
UPDATE "search_events" e
   SET "index_id" = q."index_id", "search_hour" = date_trunc('hour', q."created_at", 'UTC'),
       "query_key" = pg_temp.query_key(q."query")
  FROM "search_queries" q
 WHERE q."id" = e."search_id" AND q."tenant_id" = e."tenant_id";
DELETE FROM "search_events" WHERE "search_hour" IS NULL;
ALTER TABLE "search_events" ALTER COLUMN "index_id" SET NOT NULL, ALTER COLUMN "search_hour" SET NOT NULL,
    ALTER COLUMN "query_key" SET NOT NULL;
DROP INDEX "search_events_search_id_idx";
DROP INDEX "search_events_index_id_idx";
CREATE INDEX "search_events_index_id_search_hour_idx" ON "search_events"("index_id", "search_hour");
CREATE INDEX "search_events_search_hour_idx" ON "search_events"("search_hour");

DROP TABLE "search_queries";
DROP FUNCTION pg_temp.query_key(TEXT);

-- A client_credentials grant is written per token request; housekeeping deletes those whose token
-- has expired, in batches, through this index.
CREATE INDEX "oauth_grants_grant_type_created_at_idx" ON "oauth_grants"("grant_type", "created_at");
