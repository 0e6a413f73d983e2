-- Selling: discount codes and automatic promotions, and the uses that count against their limits.
--
-- A discount without a code is an automatic promotion. Codes are unique per tenant whatever their
-- case: `code_lower` is generated from `code` and carries the unique index.
CREATE TABLE "discounts" (
    "id" UUID NOT NULL,
    "tenant_id" UUID NOT NULL,
    "channel_id" UUID,
    "code" TEXT,
    "code_lower" TEXT GENERATED ALWAYS AS (lower("code")) STORED,
    "title" TEXT NOT NULL,
    "kind" TEXT NOT NULL,
    "percent_basis_points" INTEGER,
    "amount" INTEGER,
    "currency" TEXT,
    "target" TEXT NOT NULL,
    "product_ids" UUID[] DEFAULT '{}',
    "category_ids" TEXT[] DEFAULT '{}',
    "minimum_subtotal" INTEGER,
    "starts_at" TIMESTAMPTZ(3),
    "ends_at" TIMESTAMPTZ(3),
    "usage_limit" INTEGER,
    "usage_limit_per_buyer" INTEGER,
    "combinable" BOOLEAN NOT NULL DEFAULT false,
    "active" BOOLEAN NOT NULL DEFAULT true,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "discounts_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "discounts_kind_check" CHECK (
        ("kind" = 'PERCENT' AND "percent_basis_points" BETWEEN 1 AND 10000 AND "amount" IS NULL AND "currency" IS NULL)
        OR ("kind" = 'FIXED' AND "percent_basis_points" IS NULL AND "amount" >= 1 AND "currency" ~ '^[A-Z]{3}$')),
    -- Lists are never null (Prisma's list columns are nullable in the schema).
    CONSTRAINT "discounts_lists_check" CHECK ("product_ids" IS NOT NULL AND "category_ids" IS NOT NULL),
    CONSTRAINT "discounts_target_check" CHECK (
        ("target" = 'ORDER' AND cardinality("product_ids") = 0 AND cardinality("category_ids") = 0)
        OR ("target" = 'ITEMS' AND cardinality("product_ids") + cardinality("category_ids") > 0)),
    CONSTRAINT "discounts_minimum_subtotal_check" CHECK ("minimum_subtotal" >= 0),
    CONSTRAINT "discounts_window_check" CHECK ("starts_at" < "ends_at"),
    CONSTRAINT "discounts_usage_limit_check" CHECK ("usage_limit" >= 1),
    CONSTRAINT "discounts_usage_limit_per_buyer_check" CHECK ("usage_limit_per_buyer" >= 1)
);
-- Automatic promotions (no code) do not meet in this index: NULLs are distinct.
CREATE UNIQUE INDEX "discounts_tenant_id_code_lower_key" ON "discounts"("tenant_id", "code_lower");
CREATE INDEX "discounts_tenant_id_id_idx" ON "discounts"("tenant_id", "id");
CREATE INDEX "discounts_channel_id_idx" ON "discounts"("channel_id");
ALTER TABLE "discounts" ADD CONSTRAINT "discounts_tenant_id_fkey"
    FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "discounts" ADD CONSTRAINT "discounts_channel_id_fkey"
    FOREIGN KEY ("channel_id") REFERENCES "sales_channels"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- One use of a discount by a completed order. The buyer's e-mail is lower case.
CREATE TABLE "discount_usages" (
    "id" UUID NOT NULL,
    "tenant_id" UUID NOT NULL,
    "discount_id" UUID NOT NULL,
    "buyer_email" TEXT,
    "order_id" UUID NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "discount_usages_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "discount_usages_buyer_email_check" CHECK ("buyer_email" = lower("buyer_email"))
);
CREATE INDEX "discount_usages_discount_id_buyer_email_idx" ON "discount_usages"("discount_id", "buyer_email");
CREATE INDEX "discount_usages_tenant_id_idx" ON "discount_usages"("tenant_id");
ALTER TABLE "discount_usages" ADD CONSTRAINT "discount_usages_tenant_id_fkey"
    FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "discount_usages" ADD CONSTRAINT "discount_usages_discount_id_fkey"
    FOREIGN KEY ("discount_id") REFERENCES "discounts"("id") ON DELETE CASCADE ON UPDATE CASCADE;
