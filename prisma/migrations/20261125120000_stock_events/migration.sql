-- Low-stock and out-of-stock events for the sales channels' webhooks. The ledger's trigger
-- (src/modules/broadcasts/sql/stock-events.sql) keeps each SKU's level at each warehouse in
-- `stock_alert_states` and records an event when the level falls (NONE -> LOW -> OUT); a
-- delivery of `stock_broadcasts` now carries either a ledger row or such an event.
CREATE TYPE "stock_alert_level" AS ENUM ('NONE', 'LOW', 'OUT');
CREATE TYPE "stock_event_type" AS ENUM ('STOCK_LOW', 'STOCK_OUT');

CREATE TABLE "stock_alert_states" (
    "tenant_id" UUID NOT NULL,
    "product_id" UUID NOT NULL,
    "warehouse_id" UUID NOT NULL,
    "level" "stock_alert_level" NOT NULL,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "stock_alert_states_pkey" PRIMARY KEY ("tenant_id", "product_id", "warehouse_id")
);
ALTER TABLE "stock_alert_states" ADD CONSTRAINT "stock_alert_states_tenant_id_fkey"
    FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE CASCADE ON UPDATE CASCADE;

CREATE TABLE "stock_events" (
    "id" UUID NOT NULL,
    "tenant_id" UUID NOT NULL,
    "type" "stock_event_type" NOT NULL,
    "status" "stock_mutation_status" NOT NULL DEFAULT 'PROCESSED',
    "product_id" UUID NOT NULL,
    "warehouse_id" UUID NOT NULL,
    "available" BIGINT NOT NULL,
    "reorder_point" BIGINT,
    "mutation_id" UUID NOT NULL,
    "messages" JSONB NOT NULL DEFAULT '[]',
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "sequence" BIGSERIAL NOT NULL,
    CONSTRAINT "stock_events_pkey" PRIMARY KEY ("id")
);
CREATE INDEX "stock_events_tenant_id_sequence_idx" ON "stock_events"("tenant_id", "sequence");
CREATE INDEX "stock_events_mutation_id_idx" ON "stock_events"("mutation_id");
ALTER TABLE "stock_events" ADD CONSTRAINT "stock_events_tenant_id_fkey"
    FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE CASCADE ON UPDATE CASCADE;

ALTER TABLE "stock_broadcasts" ALTER COLUMN "mutation_id" DROP NOT NULL;
ALTER TABLE "stock_broadcasts" ADD COLUMN "event_id" UUID;
ALTER TABLE "stock_broadcasts" ADD CONSTRAINT "stock_broadcasts_one_subject"
    CHECK (num_nonnulls("mutation_id", "event_id") = 1);
CREATE INDEX "stock_broadcasts_event_id_idx" ON "stock_broadcasts"("event_id");

-- The levels of today's stock, so that the first change after this migration is compared with
-- them and not taken for a fall: OUT at nothing available, LOW at or below the reorder point.
INSERT INTO stock_alert_states (tenant_id, product_id, warehouse_id, level)
SELECT s.tenant_id, s.product_id, s.warehouse_id,
       CASE WHEN s.available <= 0 THEN 'OUT'
            WHEN f.reorder_point IS NOT NULL AND s.available <= f.reorder_point THEN 'LOW'
            ELSE 'NONE' END::stock_alert_level
  FROM (SELECT i.tenant_id, i.product_id, i.warehouse_id,
               coalesce(sum(i.quantity) FILTER (WHERE i.state = 'AVAILABLE'), 0) AS available
          FROM inventory_items i GROUP BY i.tenant_id, i.product_id, i.warehouse_id) AS s
  LEFT JOIN (SELECT tenant_id, product_id, warehouse_id, max(reorder_point) AS reorder_point
               FROM item_preferences GROUP BY tenant_id, product_id, warehouse_id) AS f
    ON f.tenant_id = s.tenant_id AND f.product_id = s.product_id AND f.warehouse_id = s.warehouse_id;
