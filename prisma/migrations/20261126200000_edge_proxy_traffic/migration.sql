-- Data-plane traffic of each proxy per hour, for its analytics.
--
-- Each process counts its answers in memory and adds them to these rows in batches (upserts that
-- add), so a cached hit costs a few increments and the processes of a deployment merge their counts.
CREATE TABLE "edge_proxy_traffic" (
    "tenant_id" UUID NOT NULL,
    "proxy_key" TEXT NOT NULL,
    "hour" TIMESTAMPTZ(3) NOT NULL,
    "hits" BIGINT NOT NULL,
    "misses" BIGINT NOT NULL,
    "stale" BIGINT NOT NULL,
    "bytes_served" BIGINT NOT NULL,
    "bytes_from_origin" BIGINT NOT NULL,
    "origin_errors" BIGINT NOT NULL,
    CONSTRAINT "edge_proxy_traffic_pkey" PRIMARY KEY ("proxy_key", "hour")
) WITH (fillfactor = 90);
ALTER TABLE "edge_proxy_traffic" ADD CONSTRAINT "edge_proxy_traffic_tenant_id_fkey"
    FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE CASCADE ON UPDATE CASCADE;
-- A deleted proxy's traffic goes with it: a proxy created later under the same key starts afresh.
ALTER TABLE "edge_proxy_traffic" ADD CONSTRAINT "edge_proxy_traffic_proxy_key_fkey"
    FOREIGN KEY ("proxy_key") REFERENCES "proxies"("key") ON DELETE CASCADE ON UPDATE CASCADE;
