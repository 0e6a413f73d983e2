-- Selling: what a product costs and what tax it carries.
--
-- The catalog's tables gain the settings prices and tax need: a product's tax class and optional
-- weight, a sales channel's currency and whether its prices include tax. The catalog writes them.
ALTER TABLE "products" ADD COLUMN "tax_class" TEXT NOT NULL DEFAULT 'standard';
ALTER TABLE "products" ADD COLUMN "weight_grams" INTEGER;
ALTER TABLE "products" ADD CONSTRAINT "products_tax_class_check" CHECK ("tax_class" IN ('standard', 'reduced', 'zero'));
ALTER TABLE "products" ADD CONSTRAINT "products_weight_grams_check" CHECK ("weight_grams" >= 0);
ALTER TABLE "sales_channels" ADD COLUMN "currency" TEXT NOT NULL DEFAULT 'EUR';
ALTER TABLE "sales_channels" ADD COLUMN "tax_inclusive" BOOLEAN NOT NULL DEFAULT false;
ALTER TABLE "sales_channels" ADD CONSTRAINT "sales_channels_currency_check" CHECK ("currency" ~ '^[A-Z]{3}$');

-- A price of a product in a currency, in the currency's minor units. A row without a channel is the
-- product's price in that currency; a row with one overrides it for that channel (its currency is
-- the channel's when written).
CREATE TABLE "prices" (
    "id" UUID NOT NULL,
    "tenant_id" UUID NOT NULL,
    "product_id" UUID NOT NULL,
    "channel_id" UUID,
    "currency" TEXT NOT NULL,
    "amount" INTEGER NOT NULL,
    "compare_at" INTEGER,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "prices_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "prices_currency_check" CHECK ("currency" ~ '^[A-Z]{3}$'),
    CONSTRAINT "prices_amount_check" CHECK ("amount" >= 0),
    CONSTRAINT "prices_compare_at_check" CHECK ("compare_at" >= 0)
);
-- One price per product, currency and channel, the row without a channel included.
CREATE UNIQUE INDEX "prices_tenant_id_product_id_currency_channel_id_key"
    ON "prices"("tenant_id", "product_id", "currency", "channel_id") NULLS NOT DISTINCT;
CREATE INDEX "prices_tenant_id_id_idx" ON "prices"("tenant_id", "id");
CREATE INDEX "prices_channel_id_idx" ON "prices"("channel_id");
ALTER TABLE "prices" ADD CONSTRAINT "prices_tenant_id_fkey"
    FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "prices" ADD CONSTRAINT "prices_product_id_fkey"
    FOREIGN KEY ("product_id") REFERENCES "products"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "prices" ADD CONSTRAINT "prices_channel_id_fkey"
    FOREIGN KEY ("channel_id") REFERENCES "sales_channels"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- A tax zone: a country, or one region of it, and its rates per tax class.
CREATE TABLE "tax_zones" (
    "id" UUID NOT NULL,
    "tenant_id" UUID NOT NULL,
    "name" TEXT NOT NULL,
    "country" TEXT NOT NULL,
    "region" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "tax_zones_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "tax_zones_country_check" CHECK ("country" ~ '^[A-Z]{2}$')
);
-- One zone per country and region, the zone of the whole country (no region) included.
CREATE UNIQUE INDEX "tax_zones_tenant_id_country_region_key"
    ON "tax_zones"("tenant_id", "country", "region") NULLS NOT DISTINCT;
ALTER TABLE "tax_zones" ADD CONSTRAINT "tax_zones_tenant_id_fkey"
    FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- The rate of one tax class in a zone, in basis points (2000 = 20 %).
CREATE TABLE "tax_rates" (
    "zone_id" UUID NOT NULL,
    "tax_class" TEXT NOT NULL,
    "tenant_id" UUID NOT NULL,
    "name" TEXT NOT NULL,
    "rate_basis_points" INTEGER NOT NULL,

    CONSTRAINT "tax_rates_pkey" PRIMARY KEY ("zone_id", "tax_class"),
    CONSTRAINT "tax_rates_tax_class_check" CHECK ("tax_class" IN ('standard', 'reduced', 'zero')),
    CONSTRAINT "tax_rates_rate_basis_points_check" CHECK ("rate_basis_points" BETWEEN 0 AND 100000)
);
CREATE INDEX "tax_rates_tenant_id_idx" ON "tax_rates"("tenant_id");
ALTER TABLE "tax_rates" ADD CONSTRAINT "tax_rates_zone_id_fkey"
    FOREIGN KEY ("zone_id") REFERENCES "tax_zones"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "tax_rates" ADD CONSTRAINT "tax_rates_tenant_id_fkey"
    FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE CASCADE ON UPDATE CASCADE;
