-- Transfers of stock between two warehouses of a tenant: the units are committed at the source
-- when the transfer is created (allocations held by its items), leave it when it ships, and go on
-- hand at the destination as they are received.
CREATE TYPE "transfer_status" AS ENUM ('REQUESTED', 'SHIPPED', 'PARTIALLY_RECEIVED', 'RECEIVED', 'CANCELLED');

CREATE TABLE "transfers" (
    "id" UUID NOT NULL,
    "tenant_id" UUID NOT NULL,
    "from_warehouse_id" UUID NOT NULL,
    "to_warehouse_id" UUID NOT NULL,
    "status" "transfer_status" NOT NULL DEFAULT 'REQUESTED',
    "shipped_at" TIMESTAMPTZ(3),
    "received_at" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "transfers_pkey" PRIMARY KEY ("tenant_id", "id"),
    CONSTRAINT "transfers_warehouses_check" CHECK ("from_warehouse_id" <> "to_warehouse_id")
);
ALTER TABLE "transfers" ADD CONSTRAINT "transfers_tenant_id_fkey"
    FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE CASCADE ON UPDATE CASCADE;

CREATE TABLE "transfer_items" (
    "id" UUID NOT NULL,
    "tenant_id" UUID NOT NULL,
    "transfer_id" UUID NOT NULL,
    "product_id" UUID NOT NULL,
    "quantity" BIGINT NOT NULL,
    "received_quantity" BIGINT NOT NULL DEFAULT 0,
    CONSTRAINT "transfer_items_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "transfer_items_quantity_check" CHECK ("quantity" > 0 AND "received_quantity" BETWEEN 0 AND "quantity")
);
CREATE INDEX "transfer_items_transfer_id_idx" ON "transfer_items"("transfer_id");
ALTER TABLE "transfer_items" ADD CONSTRAINT "transfer_items_tenant_id_fkey"
    FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "transfer_items" ADD CONSTRAINT "transfer_items_tenant_id_transfer_id_fkey"
    FOREIGN KEY ("tenant_id", "transfer_id") REFERENCES "transfers"("tenant_id", "id") ON DELETE CASCADE ON UPDATE CASCADE;

-- A transfer item holds units like an order item or a reservation: exactly one holder per allocation.
ALTER TABLE "stock_allocations" ADD COLUMN "transfer_item_id" UUID;
ALTER TABLE "stock_allocations" DROP CONSTRAINT "stock_allocations_holder_check";
ALTER TABLE "stock_allocations" ADD CONSTRAINT "stock_allocations_holder_check"
    CHECK (num_nonnulls("reservation_id", "order_item_id", "transfer_item_id") = 1);
CREATE INDEX "stock_allocations_transfer_item_id_idx" ON "stock_allocations"("transfer_item_id");
ALTER TABLE "stock_allocations" ADD CONSTRAINT "stock_allocations_transfer_item_id_fkey"
    FOREIGN KEY ("transfer_item_id") REFERENCES "transfer_items"("id") ON DELETE CASCADE ON UPDATE CASCADE;
