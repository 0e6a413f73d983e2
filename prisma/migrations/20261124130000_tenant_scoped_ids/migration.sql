-- Ids a client may choose (orders, reservations, item preferences, supplies, announcements) are
-- unique per tenant: the primary key is (tenant_id, id), and every reference to one of these rows
-- names its tenant too, so that no row can point at another tenant's row of the same id.

-- Drop the references first, then re-key the parents, then add the references back.
ALTER TABLE "order_items" DROP CONSTRAINT "order_items_order_id_fkey";
ALTER TABLE "reservation_items" DROP CONSTRAINT "reservation_items_reservation_id_fkey";
ALTER TABLE "stock_allocations" DROP CONSTRAINT "stock_allocations_reservation_id_fkey";
ALTER TABLE "announcements" DROP CONSTRAINT "announcements_supply_id_fkey";
ALTER TABLE "announcement_items" DROP CONSTRAINT "announcement_items_announcement_id_fkey";
ALTER TABLE "supply_items" DROP CONSTRAINT "supply_items_supply_id_fkey";

ALTER TABLE "orders" DROP CONSTRAINT "orders_pkey", ADD CONSTRAINT "orders_pkey" PRIMARY KEY ("tenant_id", "id");
ALTER TABLE "reservations" DROP CONSTRAINT "reservations_pkey", ADD CONSTRAINT "reservations_pkey" PRIMARY KEY ("tenant_id", "id");
ALTER TABLE "item_preferences" DROP CONSTRAINT "item_preferences_pkey", ADD CONSTRAINT "item_preferences_pkey" PRIMARY KEY ("tenant_id", "id");
ALTER TABLE "supplies" DROP CONSTRAINT "supplies_pkey", ADD CONSTRAINT "supplies_pkey" PRIMARY KEY ("tenant_id", "id");
ALTER TABLE "announcements" DROP CONSTRAINT "announcements_pkey", ADD CONSTRAINT "announcements_pkey" PRIMARY KEY ("tenant_id", "id");

-- The primary keys now serve what these indexes did.
DROP INDEX "orders_tenant_id_id_idx";
DROP INDEX "reservations_tenant_id_id_idx";
DROP INDEX "item_preferences_tenant_id_id_idx";
DROP INDEX "supplies_tenant_id_id_idx";
DROP INDEX "announcements_tenant_id_id_idx";

ALTER TABLE "order_items" ADD CONSTRAINT "order_items_tenant_id_order_id_fkey"
    FOREIGN KEY ("tenant_id", "order_id") REFERENCES "orders"("tenant_id", "id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "reservation_items" ADD CONSTRAINT "reservation_items_tenant_id_reservation_id_fkey"
    FOREIGN KEY ("tenant_id", "reservation_id") REFERENCES "reservations"("tenant_id", "id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "stock_allocations" ADD CONSTRAINT "stock_allocations_tenant_id_reservation_id_fkey"
    FOREIGN KEY ("tenant_id", "reservation_id") REFERENCES "reservations"("tenant_id", "id") ON DELETE CASCADE ON UPDATE CASCADE;
-- A deleted supply leaves its announcements without one: only supply_id is set to null (PostgreSQL 15+).
ALTER TABLE "announcements" ADD CONSTRAINT "announcements_tenant_id_supply_id_fkey"
    FOREIGN KEY ("tenant_id", "supply_id") REFERENCES "supplies"("tenant_id", "id") ON DELETE SET NULL ("supply_id") ON UPDATE CASCADE;
ALTER TABLE "announcement_items" ADD CONSTRAINT "announcement_items_tenant_id_announcement_id_fkey"
    FOREIGN KEY ("tenant_id", "announcement_id") REFERENCES "announcements"("tenant_id", "id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "supply_items" ADD CONSTRAINT "supply_items_tenant_id_supply_id_fkey"
    FOREIGN KEY ("tenant_id", "supply_id") REFERENCES "supplies"("tenant_id", "id") ON DELETE CASCADE ON UPDATE CASCADE;
