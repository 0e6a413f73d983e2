-- Stock operations: orders and their items, reservations, and the allocations that tie committed
-- and reserved inventory units to the order item or reservation holding them.

CREATE TYPE "order_status" AS ENUM ('OPEN', 'SHIPPED', 'CANCELLED');
CREATE TYPE "order_item_state" AS ENUM ('ALLOCATED', 'BACKORDERED', 'DEALLOCATED', 'SHIPPED', 'RETURNED', 'CANCELLED', 'RESTOCKED', 'MISSING', 'UNAVAILABLE');
CREATE TYPE "reservation_status" AS ENUM ('ACTIVE', 'REMOVED', 'EXPIRED');

CREATE TABLE "orders" (
    "id" UUID NOT NULL,
    "tenant_id" UUID NOT NULL,
    "business_id" UUID NOT NULL,
    "warehouse_id" UUID NOT NULL,
    "channel_id" UUID NOT NULL,
    "status" "order_status" NOT NULL DEFAULT 'OPEN',
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "orders_pkey" PRIMARY KEY ("id")
);
CREATE INDEX "orders_tenant_id_id_idx" ON "orders"("tenant_id", "id");
ALTER TABLE "orders" ADD CONSTRAINT "orders_tenant_id_fkey"
    FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE CASCADE ON UPDATE CASCADE;

CREATE TABLE "order_items" (
    "id" UUID NOT NULL,
    "tenant_id" UUID NOT NULL,
    "order_id" UUID NOT NULL,
    "product_id" UUID NOT NULL,
    "quantity" BIGINT NOT NULL,
    "state" "order_item_state" NOT NULL,
    "shipped_at" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "order_items_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "order_items_quantity_check" CHECK ("quantity" > 0)
);
CREATE INDEX "order_items_order_id_idx" ON "order_items"("order_id");
ALTER TABLE "order_items" ADD CONSTRAINT "order_items_tenant_id_fkey"
    FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "order_items" ADD CONSTRAINT "order_items_order_id_fkey"
    FOREIGN KEY ("order_id") REFERENCES "orders"("id") ON DELETE CASCADE ON UPDATE CASCADE;

CREATE TABLE "reservations" (
    "id" UUID NOT NULL,
    "tenant_id" UUID NOT NULL,
    "business_id" UUID NOT NULL,
    "warehouse_id" UUID NOT NULL,
    "channel_id" UUID NOT NULL,
    "customer" JSONB NOT NULL,
    "notes" TEXT,
    "expires_at" TIMESTAMPTZ(3) NOT NULL,
    "status" "reservation_status" NOT NULL DEFAULT 'ACTIVE',
    "released_at" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "reservations_pkey" PRIMARY KEY ("id")
);
CREATE INDEX "reservations_tenant_id_id_idx" ON "reservations"("tenant_id", "id");
CREATE INDEX "reservations_status_expires_at_idx" ON "reservations"("status", "expires_at");
ALTER TABLE "reservations" ADD CONSTRAINT "reservations_tenant_id_fkey"
    FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE CASCADE ON UPDATE CASCADE;

CREATE TABLE "reservation_items" (
    "id" UUID NOT NULL,
    "tenant_id" UUID NOT NULL,
    "reservation_id" UUID NOT NULL,
    "product_id" UUID NOT NULL,
    "quantity" BIGINT NOT NULL,
    CONSTRAINT "reservation_items_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "reservation_items_quantity_check" CHECK ("quantity" > 0)
);
CREATE INDEX "reservation_items_reservation_id_idx" ON "reservation_items"("reservation_id");
ALTER TABLE "reservation_items" ADD CONSTRAINT "reservation_items_tenant_id_fkey"
    FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "reservation_items" ADD CONSTRAINT "reservation_items_reservation_id_fkey"
    FOREIGN KEY ("reservation_id") REFERENCES "reservations"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- Units of one inventory line (by identity, so a line merged or renamed by a REST write is still
-- found) held by one order item (COMMITTED or UNAVAILABLE) or one reservation (RESERVED). Deleted
-- when released: the ledger keeps the history.
CREATE TABLE "stock_allocations" (
    "id" UUID NOT NULL,
    "tenant_id" UUID NOT NULL,
    "reservation_id" UUID,
    "order_item_id" UUID,
    "product_id" UUID NOT NULL,
    "warehouse_id" UUID NOT NULL,
    "position_id" UUID,
    "batch_number" TEXT,
    "serial_number" TEXT,
    "expires_at" TIMESTAMPTZ(3),
    "state" "inventory_item_state" NOT NULL,
    "quantity" BIGINT NOT NULL,
    CONSTRAINT "stock_allocations_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "stock_allocations_quantity_check" CHECK ("quantity" > 0),
    CONSTRAINT "stock_allocations_holder_check" CHECK (("reservation_id" IS NULL) <> ("order_item_id" IS NULL))
);
CREATE INDEX "stock_allocations_reservation_id_idx" ON "stock_allocations"("reservation_id");
CREATE INDEX "stock_allocations_order_item_id_idx" ON "stock_allocations"("order_item_id");
CREATE INDEX "stock_allocations_tenant_id_product_id_warehouse_id_idx" ON "stock_allocations"("tenant_id", "product_id", "warehouse_id");
ALTER TABLE "stock_allocations" ADD CONSTRAINT "stock_allocations_tenant_id_fkey"
    FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "stock_allocations" ADD CONSTRAINT "stock_allocations_reservation_id_fkey"
    FOREIGN KEY ("reservation_id") REFERENCES "reservations"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "stock_allocations" ADD CONSTRAINT "stock_allocations_order_item_id_fkey"
    FOREIGN KEY ("order_item_id") REFERENCES "order_items"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- Stock policy per SKU, warehouse and business.
CREATE TABLE "item_preferences" (
    "id" UUID NOT NULL,
    "tenant_id" UUID NOT NULL,
    "product_id" UUID NOT NULL,
    "warehouse_id" UUID NOT NULL,
    "business_id" UUID NOT NULL,
    "minimum_quantity" BIGINT NOT NULL,
    "optimal_quantity" BIGINT NOT NULL,
    "maximum_quantity" BIGINT NOT NULL,
    "reorder_point" BIGINT NOT NULL,
    "is_backorder_allowed" BOOLEAN NOT NULL,
    "is_restricted_to_single_position" BOOLEAN NOT NULL,
    "preorder_deadline_at" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "item_preferences_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "item_preferences_levels_check" CHECK (
        0 <= "minimum_quantity" AND "minimum_quantity" <= "optimal_quantity" AND "optimal_quantity" <= "maximum_quantity"
        AND "minimum_quantity" <= "reorder_point" AND "reorder_point" <= "maximum_quantity")
);
CREATE UNIQUE INDEX "item_preferences_tenant_id_product_id_warehouse_id_business_id_key" ON "item_preferences"("tenant_id", "product_id", "warehouse_id", "business_id");
CREATE INDEX "item_preferences_tenant_id_id_idx" ON "item_preferences"("tenant_id", "id");
ALTER TABLE "item_preferences" ADD CONSTRAINT "item_preferences_tenant_id_fkey"
    FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- Incoming goods: announcements (what a supplier says is coming), grouped into supplies whose
-- items are expected stock (`incoming_stock`) until the supply is received.
CREATE TYPE "announcement_status" AS ENUM ('OPEN', 'SUPPLIED');
CREATE TYPE "supply_processing" AS ENUM ('REGISTER', 'MATCH_ORDERS');
CREATE TYPE "supply_status" AS ENUM ('EXPECTED', 'RECEIVED');

CREATE TABLE "supplies" (
    "id" UUID NOT NULL,
    "tenant_id" UUID NOT NULL,
    "warehouse_id" UUID NOT NULL,
    "position_id" UUID,
    "processing" "supply_processing" NOT NULL,
    "status" "supply_status" NOT NULL DEFAULT 'EXPECTED',
    "due_at" TIMESTAMPTZ(3),
    "received_at" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "supplies_pkey" PRIMARY KEY ("id")
);
CREATE INDEX "supplies_tenant_id_id_idx" ON "supplies"("tenant_id", "id");
ALTER TABLE "supplies" ADD CONSTRAINT "supplies_tenant_id_fkey"
    FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE CASCADE ON UPDATE CASCADE;

CREATE TABLE "announcements" (
    "id" UUID NOT NULL,
    "tenant_id" UUID NOT NULL,
    "business_id" UUID NOT NULL,
    "warehouse_id" UUID NOT NULL,
    "reference" TEXT,
    "status" "announcement_status" NOT NULL DEFAULT 'OPEN',
    "supply_id" UUID,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "announcements_pkey" PRIMARY KEY ("id")
);
CREATE INDEX "announcements_tenant_id_id_idx" ON "announcements"("tenant_id", "id");
CREATE INDEX "announcements_supply_id_idx" ON "announcements"("supply_id");
ALTER TABLE "announcements" ADD CONSTRAINT "announcements_tenant_id_fkey"
    FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "announcements" ADD CONSTRAINT "announcements_supply_id_fkey"
    FOREIGN KEY ("supply_id") REFERENCES "supplies"("id") ON DELETE SET NULL ON UPDATE CASCADE;

CREATE TABLE "announcement_items" (
    "id" UUID NOT NULL,
    "tenant_id" UUID NOT NULL,
    "announcement_id" UUID NOT NULL,
    "product_id" UUID NOT NULL,
    "quantity" BIGINT NOT NULL,
    CONSTRAINT "announcement_items_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "announcement_items_quantity_check" CHECK ("quantity" > 0)
);
CREATE INDEX "announcement_items_announcement_id_idx" ON "announcement_items"("announcement_id");
ALTER TABLE "announcement_items" ADD CONSTRAINT "announcement_items_tenant_id_fkey"
    FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "announcement_items" ADD CONSTRAINT "announcement_items_announcement_id_fkey"
    FOREIGN KEY ("announcement_id") REFERENCES "announcements"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- What a supply brings: the items of its announcements, plus overages booked on it.
CREATE TABLE "supply_items" (
    "id" UUID NOT NULL,
    "tenant_id" UUID NOT NULL,
    "supply_id" UUID NOT NULL,
    "product_id" UUID NOT NULL,
    "quantity" BIGINT NOT NULL,
    "is_overage" BOOLEAN NOT NULL,
    "received_at" TIMESTAMPTZ(3),
    CONSTRAINT "supply_items_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "supply_items_quantity_check" CHECK ("quantity" > 0)
);
CREATE INDEX "supply_items_supply_id_idx" ON "supply_items"("supply_id");
ALTER TABLE "supply_items" ADD CONSTRAINT "supply_items_tenant_id_fkey"
    FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "supply_items" ADD CONSTRAINT "supply_items_supply_id_fkey"
    FOREIGN KEY ("supply_id") REFERENCES "supplies"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- Channel broadcasts: a sales channel's webhook, and an outbox of deliveries (one per stock
-- mutation and channel) written in the transaction of the mutation, delivered after commit.
CREATE TYPE "broadcast_status" AS ENUM ('PENDING', 'PROCESSED', 'FAILING');

CREATE TABLE "channel_webhooks" (
    "channel_id" UUID NOT NULL,
    "tenant_id" UUID NOT NULL,
    "url" TEXT NOT NULL,
    "secret" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "channel_webhooks_pkey" PRIMARY KEY ("channel_id")
);
CREATE INDEX "channel_webhooks_tenant_id_idx" ON "channel_webhooks"("tenant_id");
ALTER TABLE "channel_webhooks" ADD CONSTRAINT "channel_webhooks_tenant_id_fkey"
    FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE CASCADE ON UPDATE CASCADE;

CREATE TABLE "stock_broadcasts" (
    "id" UUID NOT NULL,
    "tenant_id" UUID NOT NULL,
    "mutation_id" UUID NOT NULL,
    "channel_id" UUID NOT NULL,
    "status" "broadcast_status" NOT NULL DEFAULT 'PENDING',
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "next_attempt_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "claimed_until" TIMESTAMPTZ(3),
    "last_message" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "stock_broadcasts_pkey" PRIMARY KEY ("id")
);
CREATE INDEX "stock_broadcasts_status_next_attempt_at_idx" ON "stock_broadcasts"("status", "next_attempt_at");
CREATE INDEX "stock_broadcasts_mutation_id_idx" ON "stock_broadcasts"("mutation_id");
ALTER TABLE "stock_broadcasts" ADD CONSTRAINT "stock_broadcasts_tenant_id_fkey"
    FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE CASCADE ON UPDATE CASCADE;
