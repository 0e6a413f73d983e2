-- A reservation converted into an order (createOrder with reservation_id): its own status, and the
-- order it became (same tenant; orders are never deleted but with their tenant).
ALTER TYPE "reservation_status" ADD VALUE 'CONVERTED';
ALTER TABLE "reservations" ADD COLUMN "order_id" UUID;
