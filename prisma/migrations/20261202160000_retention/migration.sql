-- Retention for what grows with traffic: housekeeping deletes, in batches through these indexes,
-- delivered and finally failed webhook deliveries, released reservations (with their items), and
-- the raw clicks and events of searches, whose counts it keeps in the two tables below so that
-- the analytics answer the same after the rows are gone.
CREATE INDEX "stock_broadcasts_status_updated_at_idx" ON "stock_broadcasts"("status", "updated_at");
CREATE INDEX "reservations_released_at_idx" ON "reservations"("released_at");

CREATE TABLE "search_activity_counts" (
    "tenant_id" UUID NOT NULL,
    "index_id" UUID NOT NULL,
    "hour" TIMESTAMPTZ(3) NOT NULL,
    "query_key" BIGINT NOT NULL,
    "clicked" INTEGER NOT NULL,
    "clicks" INTEGER NOT NULL,
    "views" INTEGER NOT NULL,
    "add_to_carts" INTEGER NOT NULL,
    "conversions" INTEGER NOT NULL,
    "revenue" DECIMAL(30,4) NOT NULL,
    CONSTRAINT "search_activity_counts_pkey" PRIMARY KEY ("index_id", "hour", "query_key")
);
CREATE INDEX "search_activity_counts_hour_idx" ON "search_activity_counts"("hour");
ALTER TABLE "search_activity_counts" ADD CONSTRAINT "search_activity_counts_tenant_id_fkey"
    FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "search_activity_counts" ADD CONSTRAINT "search_activity_counts_index_id_fkey"
    FOREIGN KEY ("index_id") REFERENCES "search_indexes"("id") ON DELETE CASCADE ON UPDATE CASCADE;

CREATE TABLE "search_position_clicks" (
    "tenant_id" UUID NOT NULL,
    "index_id" UUID NOT NULL,
    "hour" TIMESTAMPTZ(3) NOT NULL,
    "query_key" BIGINT NOT NULL,
    "position" INTEGER NOT NULL,
    "clicks" INTEGER NOT NULL,
    CONSTRAINT "search_position_clicks_pkey" PRIMARY KEY ("index_id", "hour", "query_key", "position")
);
CREATE INDEX "search_position_clicks_hour_idx" ON "search_position_clicks"("hour");
ALTER TABLE "search_position_clicks" ADD CONSTRAINT "search_position_clicks_tenant_id_fkey"
    FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "search_position_clicks" ADD CONSTRAINT "search_position_clicks_index_id_fkey"
    FOREIGN KEY ("index_id") REFERENCES "search_indexes"("id") ON DELETE CASCADE ON UPDATE CASCADE;
