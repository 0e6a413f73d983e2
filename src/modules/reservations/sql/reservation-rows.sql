-- The reservations' rows as the stock module's writes change them, through the reservations module,
-- their one writer: the batched path creates the reservations it accepted, with their items
-- (../../stock/sql/4-reserve-batch.sql), and an allocating write ends the expired reservations whose
-- units it releases, as the removal of a reservation ends it (`endActiveReservations`).

-- Ends the reservations among `p_ids` that are still ACTIVE; returns the ids it ended.
CREATE OR REPLACE FUNCTION "reservations_end_active"(p_tenant_id uuid, p_ids uuid[], p_status reservation_status)
RETURNS SETOF uuid
LANGUAGE sql VOLATILE AS $$
    UPDATE reservations SET status = p_status, released_at = now()
     WHERE tenant_id = p_tenant_id AND id = ANY(p_ids) AND status = 'ACTIVE'
    RETURNING id;
$$;

-- Inserts the requests of `p_requests` whose position `n` is in `p_accepted` (in that order) as
-- reservations at `p_warehouse_id` created at `p_created`, with their items, the product of each
-- item's SKU found at the same place of `p_skus` and `p_product_ids`.
CREATE OR REPLACE FUNCTION "reservations_insert_batch"(p_tenant_id uuid, p_warehouse_id uuid, p_requests jsonb,
                                                       p_accepted int[], p_created timestamptz, p_skus text[],
                                                       p_product_ids uuid[])
RETURNS void
LANGUAGE sql VOLATILE AS $$
    INSERT INTO reservations (id, tenant_id, business_id, warehouse_id, channel_id, customer, notes, expires_at, created_at)
    SELECT x.id, p_tenant_id, x.business_id, p_warehouse_id, x.channel_id, x.customer, x.notes, x.expires_at, p_created
      FROM jsonb_to_recordset(p_requests) AS x(n int, id uuid, business_id uuid, channel_id uuid, customer jsonb, notes text, expires_at timestamptz)
     WHERE x.n = ANY(p_accepted)
     ORDER BY x.n;
    INSERT INTO reservation_items (id, tenant_id, reservation_id, product_id, quantity)
    SELECT u.item_id, p_tenant_id, x.id, p_product_ids[array_position(p_skus, u.sku)], u.q
      FROM jsonb_to_recordset(p_requests) AS x(n int, id uuid, item_ids uuid[], skus text[], quantities bigint[])
     CROSS JOIN LATERAL unnest(x.item_ids, x.skus, x.quantities) WITH ORDINALITY AS u(item_id, sku, q, o)
     WHERE x.n = ANY(p_accepted)
     ORDER BY x.n, u.o;
$$;
