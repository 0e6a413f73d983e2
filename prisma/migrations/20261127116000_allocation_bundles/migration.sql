-- The bundle an allocation's units are held for (an item of a bundle holds its components' units),
-- recorded when they are allocated instead of guessed from the holder's items when they move.
ALTER TABLE "stock_allocations" ADD COLUMN "bundle_id" UUID;

-- Allocations made before: an order item's product when it is a bundle of the allocation's
-- product; for a reservation, its one item of a bundle of that product when it has no item of the
-- product itself (what was read for them until now).
UPDATE stock_allocations a
   SET bundle_id = (
       SELECT c.bundle_id FROM bundle_components c
        WHERE c.tenant_id = a.tenant_id AND c.component_id = a.product_id
          AND (c.bundle_id = (SELECT oi.product_id FROM order_items oi WHERE oi.id = a.order_item_id)
               OR (c.bundle_id IN (SELECT ri.product_id FROM reservation_items ri WHERE ri.reservation_id = a.reservation_id)
                   AND NOT EXISTS (SELECT 1 FROM reservation_items ri
                                    WHERE ri.reservation_id = a.reservation_id AND ri.product_id = a.product_id)))
        ORDER BY c.bundle_id LIMIT 1)
 WHERE EXISTS (SELECT 1 FROM bundle_components c WHERE c.tenant_id = a.tenant_id AND c.component_id = a.product_id);

-- The allocation walk takes the bundle of each take from now on (the routines migration after this
-- one creates it with its new parameter).
DROP FUNCTION IF EXISTS "stock_allocate"(uuid, inventory_item_state, uuid[], uuid[], bigint[], uuid[], uuid[], uuid[]);
