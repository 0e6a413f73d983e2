-- Units of a product kept back at a warehouse: no allocation takes them. A row without a channel
-- holds for every sales channel (and transfers); a row with one holds for that channel instead.
CREATE TABLE "safety_stocks" (
    "id" UUID NOT NULL,
    "tenant_id" UUID NOT NULL,
    "product_id" UUID NOT NULL,
    "warehouse_id" UUID NOT NULL,
    "channel_id" UUID,
    "quantity" BIGINT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "safety_stocks_pkey" PRIMARY KEY ("tenant_id", "id"),
    CONSTRAINT "safety_stocks_quantity_check" CHECK ("quantity" >= 0)
);
-- One row per product, warehouse and channel, the row without a channel included.
CREATE UNIQUE INDEX "safety_stocks_tenant_id_product_id_warehouse_id_channel_id_key"
    ON "safety_stocks"("tenant_id", "product_id", "warehouse_id", "channel_id") NULLS NOT DISTINCT;
ALTER TABLE "safety_stocks" ADD CONSTRAINT "safety_stocks_tenant_id_fkey"
    FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- A change of safety stock is a ledger row (delta 0) carrying the new safety stock, and the sales
-- channel it holds for when it is one channel's.
ALTER TABLE "stock_mutations" ADD COLUMN "safety_stock" BIGINT;
ALTER TABLE "stock_mutations" ADD COLUMN "safety_channel_id" UUID;
