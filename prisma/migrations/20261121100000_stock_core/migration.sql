-- The catalog stock hangs on (businesses, warehouses, positions, sales channels), inventory lines,
-- the stock ledger, incoming (announced) stock and stored responses of idempotent writes.
-- Needs PostgreSQL 15 or later (UNIQUE NULLS NOT DISTINCT).

CREATE TYPE "inventory_item_state" AS ENUM ('AVAILABLE', 'COMMITTED', 'RESERVED', 'UNAVAILABLE');
CREATE TYPE "inventory_item_reason" AS ENUM ('NONE', 'BROKEN');
CREATE TYPE "stock_mutation_source" AS ENUM ('REGISTER', 'ALLOCATION', 'RESTOCK', 'CORRECTION', 'EXTERNAL', 'UNKNOWN');
CREATE TYPE "stock_mutation_status" AS ENUM ('PENDING', 'PROCESSED', 'FAILING');

CREATE TABLE "businesses" (
    "id" UUID NOT NULL,
    "tenant_id" UUID NOT NULL,
    "name" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "businesses_pkey" PRIMARY KEY ("id")
);
CREATE INDEX "businesses_tenant_id_id_idx" ON "businesses"("tenant_id", "id");
ALTER TABLE "businesses" ADD CONSTRAINT "businesses_tenant_id_fkey"
    FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE CASCADE ON UPDATE CASCADE;

CREATE TABLE "warehouses" (
    "id" UUID NOT NULL,
    "tenant_id" UUID NOT NULL,
    "business_id" UUID NOT NULL,
    "name" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "warehouses_pkey" PRIMARY KEY ("id")
);
CREATE INDEX "warehouses_tenant_id_id_idx" ON "warehouses"("tenant_id", "id");
CREATE INDEX "warehouses_business_id_idx" ON "warehouses"("business_id");
ALTER TABLE "warehouses" ADD CONSTRAINT "warehouses_tenant_id_fkey"
    FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "warehouses" ADD CONSTRAINT "warehouses_business_id_fkey"
    FOREIGN KEY ("business_id") REFERENCES "businesses"("id") ON DELETE NO ACTION ON UPDATE CASCADE;

CREATE TABLE "positions" (
    "id" UUID NOT NULL,
    "tenant_id" UUID NOT NULL,
    "warehouse_id" UUID NOT NULL,
    "code" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "positions_pkey" PRIMARY KEY ("id")
);
CREATE UNIQUE INDEX "positions_warehouse_id_code_key" ON "positions"("warehouse_id", "code");
CREATE INDEX "positions_tenant_id_id_idx" ON "positions"("tenant_id", "id");
ALTER TABLE "positions" ADD CONSTRAINT "positions_tenant_id_fkey"
    FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "positions" ADD CONSTRAINT "positions_warehouse_id_fkey"
    FOREIGN KEY ("warehouse_id") REFERENCES "warehouses"("id") ON DELETE CASCADE ON UPDATE CASCADE;

CREATE TABLE "sales_channels" (
    "id" UUID NOT NULL,
    "tenant_id" UUID NOT NULL,
    "name" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "sales_channels_pkey" PRIMARY KEY ("id")
);
CREATE INDEX "sales_channels_tenant_id_id_idx" ON "sales_channels"("tenant_id", "id");
ALTER TABLE "sales_channels" ADD CONSTRAINT "sales_channels_tenant_id_fkey"
    FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE CASCADE ON UPDATE CASCADE;

CREATE TABLE "inventory_items" (
    "id" UUID NOT NULL,
    "tenant_id" UUID NOT NULL,
    "product_id" UUID NOT NULL,
    "warehouse_id" UUID NOT NULL,
    "position_id" UUID,
    "batch_number" TEXT,
    "serial_number" TEXT,
    "expires_at" TIMESTAMPTZ(3),
    "state" "inventory_item_state" NOT NULL DEFAULT 'AVAILABLE',
    "reason" "inventory_item_reason" NOT NULL DEFAULT 'NONE',
    "quantity" BIGINT NOT NULL,
    "cost_amount" BIGINT,
    "cost_currency" TEXT,
    "gtin" TEXT[],
    "rfid" TEXT,
    "weight_amount" DOUBLE PRECISION,
    "weight_unit" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "inventory_items_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "inventory_items_quantity_check" CHECK ("quantity" >= 0),
    CONSTRAINT "inventory_items_cost_amount_check" CHECK ("cost_amount" >= 0),
    -- Only an UNAVAILABLE line has a reason.
    CONSTRAINT "inventory_items_reason_check" CHECK ("state" = 'UNAVAILABLE' OR "reason" = 'NONE')
);
-- The identity of a line. NULLS NOT DISTINCT: a line without position, batch, serial number or
-- expiry is one line too, so concurrent `INSERT ... ON CONFLICT` writers merge into it.
CREATE UNIQUE INDEX "inventory_items_identity_key" ON "inventory_items"(
    "tenant_id", "product_id", "warehouse_id", "position_id", "batch_number", "serial_number", "expires_at", "state", "reason"
) NULLS NOT DISTINCT;
CREATE INDEX "inventory_items_tenant_id_id_idx" ON "inventory_items"("tenant_id", "id");
CREATE INDEX "inventory_items_warehouse_id_position_id_idx" ON "inventory_items"("warehouse_id", "position_id");
CREATE INDEX "inventory_items_product_id_warehouse_id_idx" ON "inventory_items"("product_id", "warehouse_id");
CREATE INDEX "inventory_items_position_id_idx" ON "inventory_items"("position_id");
ALTER TABLE "inventory_items" ADD CONSTRAINT "inventory_items_tenant_id_fkey"
    FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "inventory_items" ADD CONSTRAINT "inventory_items_product_id_fkey"
    FOREIGN KEY ("product_id") REFERENCES "products"("id") ON DELETE NO ACTION ON UPDATE CASCADE;
ALTER TABLE "inventory_items" ADD CONSTRAINT "inventory_items_warehouse_id_fkey"
    FOREIGN KEY ("warehouse_id") REFERENCES "warehouses"("id") ON DELETE NO ACTION ON UPDATE CASCADE;
ALTER TABLE "inventory_items" ADD CONSTRAINT "inventory_items_position_id_fkey"
    FOREIGN KEY ("position_id") REFERENCES "positions"("id") ON DELETE NO ACTION ON UPDATE CASCADE;

CREATE TABLE "stock_mutations" (
    "id" UUID NOT NULL,
    "tenant_id" UUID NOT NULL,
    "source" "stock_mutation_source" NOT NULL,
    "status" "stock_mutation_status" NOT NULL DEFAULT 'PROCESSED',
    "delta" BIGINT NOT NULL,
    "new_quantity" BIGINT NOT NULL,
    "product_id" UUID NOT NULL,
    "warehouse_id" UUID NOT NULL,
    "position_id" UUID,
    "inventory_item_id" UUID,
    "actor_type" TEXT NOT NULL,
    "actor_id" TEXT NOT NULL,
    "references" JSONB NOT NULL DEFAULT '[]',
    "messages" JSONB NOT NULL DEFAULT '[]',
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "sequence" BIGSERIAL NOT NULL,
    CONSTRAINT "stock_mutations_pkey" PRIMARY KEY ("id")
);
CREATE INDEX "stock_mutations_tenant_id_created_at_sequence_idx" ON "stock_mutations"("tenant_id", "created_at", "sequence");
CREATE INDEX "stock_mutations_tenant_id_new_quantity_sequence_idx" ON "stock_mutations"("tenant_id", "new_quantity", "sequence");
CREATE INDEX "stock_mutations_product_id_warehouse_id_idx" ON "stock_mutations"("product_id", "warehouse_id");
CREATE INDEX "stock_mutations_warehouse_id_idx" ON "stock_mutations"("warehouse_id");
CREATE INDEX "stock_mutations_position_id_idx" ON "stock_mutations"("position_id");
ALTER TABLE "stock_mutations" ADD CONSTRAINT "stock_mutations_tenant_id_fkey"
    FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "stock_mutations" ADD CONSTRAINT "stock_mutations_product_id_fkey"
    FOREIGN KEY ("product_id") REFERENCES "products"("id") ON DELETE NO ACTION ON UPDATE CASCADE;
ALTER TABLE "stock_mutations" ADD CONSTRAINT "stock_mutations_warehouse_id_fkey"
    FOREIGN KEY ("warehouse_id") REFERENCES "warehouses"("id") ON DELETE NO ACTION ON UPDATE CASCADE;
ALTER TABLE "stock_mutations" ADD CONSTRAINT "stock_mutations_position_id_fkey"
    FOREIGN KEY ("position_id") REFERENCES "positions"("id") ON DELETE NO ACTION ON UPDATE CASCADE;

-- The ledger is append-only: the facts of a mutation never change and rows are never deleted,
-- except with their tenant. Status and messages may change (a broadcast lands or fails).
CREATE FUNCTION "stock_mutations_append_only"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'DELETE' THEN
        IF EXISTS (SELECT 1 FROM "tenants" WHERE "id" = OLD."tenant_id") THEN
            RAISE EXCEPTION 'stock_mutations is append-only: rows cannot be deleted' USING ERRCODE = 'restrict_violation';
        END IF;
        RETURN OLD;
    END IF;
    IF (NEW."id", NEW."tenant_id", NEW."source", NEW."delta", NEW."new_quantity", NEW."product_id", NEW."warehouse_id",
        NEW."position_id", NEW."inventory_item_id", NEW."actor_type", NEW."actor_id", NEW."references", NEW."created_at", NEW."sequence")
       IS DISTINCT FROM
       (OLD."id", OLD."tenant_id", OLD."source", OLD."delta", OLD."new_quantity", OLD."product_id", OLD."warehouse_id",
        OLD."position_id", OLD."inventory_item_id", OLD."actor_type", OLD."actor_id", OLD."references", OLD."created_at", OLD."sequence") THEN
        RAISE EXCEPTION 'stock_mutations is append-only: only status and messages may change' USING ERRCODE = 'restrict_violation';
    END IF;
    RETURN NEW;
END
$$;
CREATE TRIGGER "stock_mutations_append_only" BEFORE UPDATE OR DELETE ON "stock_mutations"
    FOR EACH ROW EXECUTE FUNCTION "stock_mutations_append_only"();

CREATE TABLE "incoming_stock" (
    "id" UUID NOT NULL,
    "tenant_id" UUID NOT NULL,
    "product_id" UUID NOT NULL,
    "warehouse_id" UUID NOT NULL,
    "position_id" UUID,
    "quantity" BIGINT NOT NULL,
    "references" JSONB NOT NULL DEFAULT '[]',
    "expected_at" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "incoming_stock_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "incoming_stock_quantity_check" CHECK ("quantity" > 0)
);
CREATE INDEX "incoming_stock_tenant_id_product_id_warehouse_id_idx" ON "incoming_stock"("tenant_id", "product_id", "warehouse_id");
CREATE INDEX "incoming_stock_warehouse_id_idx" ON "incoming_stock"("warehouse_id");
CREATE INDEX "incoming_stock_position_id_idx" ON "incoming_stock"("position_id");
ALTER TABLE "incoming_stock" ADD CONSTRAINT "incoming_stock_tenant_id_fkey"
    FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "incoming_stock" ADD CONSTRAINT "incoming_stock_product_id_fkey"
    FOREIGN KEY ("product_id") REFERENCES "products"("id") ON DELETE NO ACTION ON UPDATE CASCADE;
ALTER TABLE "incoming_stock" ADD CONSTRAINT "incoming_stock_warehouse_id_fkey"
    FOREIGN KEY ("warehouse_id") REFERENCES "warehouses"("id") ON DELETE NO ACTION ON UPDATE CASCADE;
ALTER TABLE "incoming_stock" ADD CONSTRAINT "incoming_stock_position_id_fkey"
    FOREIGN KEY ("position_id") REFERENCES "positions"("id") ON DELETE NO ACTION ON UPDATE CASCADE;

CREATE TABLE "idempotency_keys" (
    "tenant_id" UUID NOT NULL,
    "key" TEXT NOT NULL,
    "request_hash" TEXT NOT NULL,
    "response" JSONB,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "idempotency_keys_pkey" PRIMARY KEY ("tenant_id", "key")
);
CREATE INDEX "idempotency_keys_created_at_idx" ON "idempotency_keys"("created_at");
ALTER TABLE "idempotency_keys" ADD CONSTRAINT "idempotency_keys_tenant_id_fkey"
    FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE CASCADE ON UPDATE CASCADE;
