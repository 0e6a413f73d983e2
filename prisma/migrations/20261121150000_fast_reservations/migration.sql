-- A reservation in one statement: the common case of `createReservation` (no expired reservation
-- holds stock of its SKUs) runs server-side, so the SKUs' stock locks are held for the work itself
-- and not for a round trip per row.

-- A UUIDv7 (RFC 9562) from the wall clock, like the application's ids.
CREATE FUNCTION "uuidv7_now"() RETURNS uuid LANGUAGE sql VOLATILE AS $$
    SELECT encode(
        set_bit(set_bit(
            overlay(uuid_send(gen_random_uuid())
                    PLACING substring(int8send(floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint) FROM 3)
                    FROM 1 FOR 6),
            52, 1), 53, 1),
        'hex')::uuid
$$;

-- Creates reservation `p_id` holding `p_quantities[n]` units of `p_product_ids[n]` at warehouse
-- `p_warehouse_id` (items `p_item_ids`, in input order), all or none. `p_lock_keys` are the stock
-- lock keys of the (product, warehouse) pairs, in ascending order. Returns one row:
--   ('TAKEN', ...)    a reservation with this id exists; nothing was written;
--   ('EXPIRED', ...)  an expired reservation still holds units of these SKUs: nothing was written
--                     and no lock taken, the caller releases them on its general path;
--   ('SHORT', n, requested, available)  the SKU of item n (1-based, its first item) is short:
--                     nothing was written;
--   ('RESERVED', NULL, NULL, NULL, created_at)  done: reservation, items, RESERVED lines,
--                     allocations, one ALLOCATION mutation per line moved from, and their broadcasts.
CREATE FUNCTION "reserve_stock"(
    p_tenant_id uuid, p_id uuid, p_business_id uuid, p_warehouse_id uuid, p_channel_id uuid,
    p_customer jsonb, p_notes text, p_expires_at timestamptz,
    p_item_ids uuid[], p_product_ids uuid[], p_quantities bigint[], p_lock_keys bigint[],
    p_actor_type text, p_actor_id text, p_references jsonb, p_check_id boolean)
RETURNS TABLE (outcome text, item_index int, requested bigint, available bigint, created_at timestamptz)
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
    n int;
    k int;
    missing bigint;
    take bigint;
    left_over bigint;
    total bigint;
    target_id uuid;
    src record;
    mutation_ids uuid[] := '{}';
    line_ids uuid[] := '{}';
    pair_products uuid[] := '{}';
    position_ids uuid[] := '{}';
    created timestamptz;
BEGIN
    IF p_check_id AND EXISTS (SELECT 1 FROM reservations r WHERE r.id = p_id) THEN
        RETURN QUERY SELECT 'TAKEN'::text, NULL::int, NULL::bigint, NULL::bigint, NULL::timestamptz;
        RETURN;
    END IF;
    -- Expired reservations are few (the sweeper releases them): found by the status index, not by the SKUs' allocations.
    IF EXISTS (
        WITH expired AS MATERIALIZED (
            SELECT r.id FROM reservations r WHERE r.status = 'ACTIVE' AND r.expires_at <= now() AND r.tenant_id = p_tenant_id)
        SELECT 1 FROM stock_allocations a
         WHERE a.reservation_id IN (SELECT e.id FROM expired e)
           AND a.tenant_id = p_tenant_id AND a.warehouse_id = p_warehouse_id AND a.product_id = ANY(p_product_ids)) THEN
        RETURN QUERY SELECT 'EXPIRED'::text, NULL::int, NULL::bigint, NULL::bigint, NULL::timestamptz;
        RETURN;
    END IF;

    -- Rows nobody else can see yet go in before the stock locks: the locked part stays short.
    INSERT INTO reservations (id, tenant_id, business_id, warehouse_id, channel_id, customer, notes, expires_at)
    VALUES (p_id, p_tenant_id, p_business_id, p_warehouse_id, p_channel_id, p_customer, p_notes, p_expires_at)
    RETURNING reservations.created_at INTO created;
    INSERT INTO reservation_items (id, tenant_id, reservation_id, product_id, quantity)
    SELECT v.id, p_tenant_id, p_id, v.product_id, v.quantity
      FROM unnest(p_item_ids, p_product_ids, p_quantities) AS v(id, product_id, quantity);

    -- The stock locks, in ascending key order (a volatile function in the target list runs after ORDER BY).
    PERFORM count(*) FROM (
        SELECT pg_advisory_xact_lock(t.k) FROM unnest(p_lock_keys) WITH ORDINALITY AS t(k, o) ORDER BY t.o) AS locks;

    -- Every SKU's summed request against its AVAILABLE lines (locked), SKUs in input order.
    FOR n IN 1 .. array_length(p_product_ids, 1) LOOP
        CONTINUE WHEN p_product_ids[n] = ANY(p_product_ids[1:n - 1]);
        SELECT coalesce(sum(l.quantity), 0)::bigint INTO total FROM (
            SELECT i.quantity FROM inventory_items i
             WHERE i.tenant_id = p_tenant_id AND i.product_id = p_product_ids[n] AND i.warehouse_id = p_warehouse_id
               AND i.state = 'AVAILABLE' AND i.quantity > 0
             ORDER BY i.expires_at ASC NULLS LAST, i.position_id ASC NULLS LAST, i.id
               FOR UPDATE) AS l;
        SELECT sum(q)::bigint INTO missing FROM unnest(p_product_ids, p_quantities) AS u(p, q) WHERE u.p = p_product_ids[n];
        IF missing > total THEN
            DELETE FROM reservations r WHERE r.id = p_id;
            RETURN QUERY SELECT 'SHORT'::text, n, missing, total, NULL::timestamptz;
            RETURN;
        END IF;
    END LOOP;

    -- Each item takes its units from the lines that expire first.
    FOR n IN 1 .. array_length(p_product_ids, 1) LOOP
        missing := p_quantities[n];
        FOR src IN
            SELECT i.id, i.position_id, i.batch_number, i.serial_number, i.expires_at, i.quantity, i.cost_amount, i.cost_currency,
                   i.gtin, i.rfid, i.weight_amount, i.weight_unit
              FROM inventory_items i
             WHERE i.tenant_id = p_tenant_id AND i.product_id = p_product_ids[n] AND i.warehouse_id = p_warehouse_id
               AND i.state = 'AVAILABLE' AND i.quantity > 0
             ORDER BY i.expires_at ASC NULLS LAST, i.position_id ASC NULLS LAST, i.id
        LOOP
            EXIT WHEN missing = 0;
            take := least(src.quantity, missing);
            missing := missing - take;
            UPDATE inventory_items SET quantity = quantity - take, updated_at = now()
             WHERE id = src.id AND quantity >= take
            RETURNING quantity INTO left_over;
            IF NOT FOUND THEN
                RAISE EXCEPTION 'inventory line % changed while locked', src.id;
            END IF;
            IF left_over = 0 THEN
                DELETE FROM inventory_items WHERE id = src.id;
            END IF;
            INSERT INTO inventory_items AS i (id, tenant_id, product_id, warehouse_id, position_id, batch_number, serial_number,
                                              expires_at, state, reason, quantity, cost_amount, cost_currency, gtin, rfid,
                                              weight_amount, weight_unit)
            VALUES (uuidv7_now(), p_tenant_id, p_product_ids[n], p_warehouse_id, src.position_id, src.batch_number,
                    src.serial_number, src.expires_at, 'RESERVED', 'NONE', take, src.cost_amount, src.cost_currency,
                    src.gtin, src.rfid, src.weight_amount, src.weight_unit)
            ON CONFLICT (tenant_id, product_id, warehouse_id, position_id, batch_number, serial_number, expires_at, state, reason)
            DO UPDATE SET quantity = i.quantity + EXCLUDED.quantity,
                          cost_amount = coalesce(EXCLUDED.cost_amount, i.cost_amount),
                          cost_currency = CASE WHEN EXCLUDED.cost_amount IS NULL THEN i.cost_currency ELSE EXCLUDED.cost_currency END,
                          gtin = coalesce(EXCLUDED.gtin, i.gtin),
                          rfid = coalesce(EXCLUDED.rfid, i.rfid),
                          weight_amount = coalesce(EXCLUDED.weight_amount, i.weight_amount),
                          weight_unit = CASE WHEN EXCLUDED.weight_amount IS NULL THEN i.weight_unit ELSE EXCLUDED.weight_unit END,
                          updated_at = now()
            RETURNING i.id INTO target_id;
            INSERT INTO stock_allocations (id, tenant_id, reservation_id, order_item_id, product_id, warehouse_id, position_id,
                                           batch_number, serial_number, expires_at, state, quantity)
            VALUES (uuidv7_now(), p_tenant_id, p_id, NULL, p_product_ids[n], p_warehouse_id, src.position_id,
                    src.batch_number, src.serial_number, src.expires_at, 'RESERVED', take);
            mutation_ids := mutation_ids || uuidv7_now();
            line_ids := line_ids || target_id;
            pair_products := pair_products || p_product_ids[n];
            position_ids := position_ids || src.position_id;
        END LOOP;
        IF missing <> 0 THEN
            RAISE EXCEPTION 'inventory of product % changed while locked', p_product_ids[n];
        END IF;
    END LOOP;

    -- The ledger: only states changed (delta 0), so every row's new_quantity is its SKU's on-hand total.
    INSERT INTO stock_mutations (id, tenant_id, source, status, delta, new_quantity, product_id, warehouse_id, position_id,
                                 inventory_item_id, actor_type, actor_id, "references", created_at)
    SELECT v.id, p_tenant_id, 'ALLOCATION'::stock_mutation_source, 'PROCESSED'::stock_mutation_status, 0::bigint,
           (SELECT coalesce(sum(i.quantity), 0)::bigint FROM inventory_items i
             WHERE i.tenant_id = p_tenant_id AND i.product_id = v.product_id AND i.warehouse_id = p_warehouse_id),
           v.product_id, p_warehouse_id, v.position_id, v.item_id, p_actor_type, p_actor_id, p_references, clock_timestamp()
      FROM unnest(mutation_ids, pair_products, position_ids, line_ids) WITH ORDINALITY AS v(id, product_id, position_id, item_id, o)
     ORDER BY v.o;
    WITH queued AS (
        INSERT INTO stock_broadcasts (id, tenant_id, mutation_id, channel_id)
        SELECT gen_random_uuid(), p_tenant_id, m.id, w.channel_id
          FROM unnest(mutation_ids) AS m(id)
         CROSS JOIN channel_webhooks w JOIN sales_channels c ON c.id = w.channel_id
         WHERE w.tenant_id = p_tenant_id
        RETURNING mutation_id)
    UPDATE stock_mutations SET status = 'PENDING' WHERE id IN (SELECT mutation_id FROM queued);

    RETURN QUERY SELECT 'RESERVED'::text, NULL::int, NULL::bigint, NULL::bigint, created;
END
$$;
