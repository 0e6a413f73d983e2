-- Shipping methods of a sales channel: shipping to countries, or pickup at the channel's
-- warehouses; a flat rate or one by weight bracket, in the channel's currency (minor units).
CREATE TABLE "shipping_methods" (
    "id" UUID NOT NULL,
    "tenant_id" UUID NOT NULL,
    "channel_id" UUID NOT NULL,
    "title" TEXT NOT NULL,
    "type" TEXT NOT NULL,
    "countries" TEXT[],
    "rate_kind" TEXT NOT NULL,
    "flat_amount" INTEGER NOT NULL DEFAULT 0,
    "free_above" INTEGER,
    "weight_brackets" JSONB NOT NULL DEFAULT '[]',
    "pickup_warehouse_ids" UUID[],
    "active" BOOLEAN NOT NULL DEFAULT true,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "shipping_methods_pkey" PRIMARY KEY ("id"),
    -- Prisma's lists are nullable columns; these are never null (empty: none).
    CONSTRAINT "shipping_methods_countries_check" CHECK ("countries" IS NOT NULL),
    CONSTRAINT "shipping_methods_pickup_warehouse_ids_check" CHECK ("pickup_warehouse_ids" IS NOT NULL),
    CONSTRAINT "shipping_methods_type_check" CHECK ("type" IN ('SHIPPING', 'PICKUP')),
    CONSTRAINT "shipping_methods_rate_kind_check" CHECK ("rate_kind" IN ('FLAT', 'WEIGHT')),
    CONSTRAINT "shipping_methods_flat_amount_check" CHECK ("flat_amount" >= 0),
    CONSTRAINT "shipping_methods_free_above_check" CHECK ("free_above" >= 0),
    CONSTRAINT "shipping_methods_weight_brackets_check" CHECK (jsonb_typeof("weight_brackets") = 'array')
);
CREATE INDEX "shipping_methods_tenant_id_id_idx" ON "shipping_methods"("tenant_id", "id");
CREATE INDEX "shipping_methods_channel_id_idx" ON "shipping_methods"("channel_id");
ALTER TABLE "shipping_methods" ADD CONSTRAINT "shipping_methods_tenant_id_fkey"
    FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "shipping_methods" ADD CONSTRAINT "shipping_methods_channel_id_fkey"
    FOREIGN KEY ("channel_id") REFERENCES "sales_channels"("id") ON DELETE CASCADE ON UPDATE CASCADE;
