-- Reservations past their expiry that the sweeper has not released yet.

-- What reservations past their expiry, not yet released by the sweeper, still hold of the
-- (product, warehouse) pairs `p_product_ids[n]`, `p_warehouse_ids[n]`: one row per allocation.
-- Such reservations are few, so each is read through its own allocations (the subquery is fenced
-- so that only the reservation index can serve it), never through the pairs' allocations, which
-- grow with every active reservation and open order of the SKU.
CREATE OR REPLACE FUNCTION "expired_reservation_holdings"(p_tenant_id uuid, p_product_ids uuid[], p_warehouse_ids uuid[])
RETURNS TABLE (reservation_id uuid, product_id uuid, warehouse_id uuid, quantity bigint)
LANGUAGE plpgsql STABLE ROWS 1 AS $$
#variable_conflict use_column
DECLARE
    expired_id uuid;
BEGIN
    FOR expired_id IN
        SELECT r.id FROM reservations r WHERE r.status = 'ACTIVE' AND r.expires_at <= now() AND r.tenant_id = p_tenant_id
    LOOP
        RETURN QUERY
            SELECT h.reservation_id, h.product_id, h.warehouse_id, h.quantity
              FROM (SELECT a.reservation_id, a.product_id, a.warehouse_id, a.quantity
                      FROM stock_allocations a WHERE a.tenant_id = p_tenant_id AND a.reservation_id = expired_id OFFSET 0) AS h
             WHERE (h.product_id, h.warehouse_id) IN (SELECT u.p, u.w FROM unnest(p_product_ids, p_warehouse_ids) AS u(p, w));
    END LOOP;
END
$$;
