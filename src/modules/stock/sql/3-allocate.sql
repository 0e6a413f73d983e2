-- The allocation walk: which AVAILABLE lines the units of a request come from, and their move. The
-- batched reservations and every other allocating write (orders, channel plans, transfers) call it,
-- so the walk exists once.

-- Moves the units of the takes (`p_quantities[k]` units of `p_product_ids[k]` at `p_warehouse_ids[k]`,
-- held by `p_reservation_ids[k]`, `p_order_item_ids[k]` or `p_transfer_item_ids[k]`, for an item of
-- the bundle `p_bundle_ids[k]` when not null), in array order,
-- from the AVAILABLE lines of the product at the warehouse into lines of state `p_state`: each take from the lines that expire first
-- (`stock_available_lines`), each line moved once for all the takes, the units keeping the line's
-- identity and attributes; one allocation per take and line taken from. The caller holds the stock
-- locks of the pairs and has checked that the lines hold enough. Returns one row per take and line
-- taken from, in walk order: the take (1-based), the line the units went to, and the units.
CREATE OR REPLACE FUNCTION "stock_allocate"(
    p_tenant_id uuid, p_state inventory_item_state, p_product_ids uuid[], p_warehouse_ids uuid[], p_quantities bigint[],
    p_reservation_ids uuid[], p_order_item_ids uuid[], p_transfer_item_ids uuid[], p_bundle_ids uuid[])
RETURNS TABLE (take int, line_id uuid, product_id uuid, warehouse_id uuid, position_id uuid, quantity bigint)
LANGUAGE plpgsql VOLATILE AS $$
#variable_conflict use_column
DECLARE
    -- The (product, warehouse) pairs of the takes, as `product:warehouse`.
    pairs text[] := ARRAY(SELECT DISTINCT u.p || ':' || u.w FROM unnest(p_product_ids, p_warehouse_ids) AS u(p, w));
    w uuid;
    line_ids uuid[] := '{}';
    line_products uuid[] := '{}';
    line_warehouses uuid[] := '{}';
    line_positions uuid[] := '{}';
    line_batches text[] := '{}';
    line_serials text[] := '{}';
    line_expiries timestamptz[] := '{}';
    line_left bigint[] := '{}';
    line_targets uuid[];
    pair_next int[];
    pi int;
    k int;
    j int;
    missing bigint;
    took bigint;
    left_over bigint;
    target_id uuid;
    src record;
    take_k int[] := '{}';
    take_j int[] := '{}';
    take_q bigint[] := '{}';
BEGIN
    -- Each warehouse's AVAILABLE lines of the products, locked, in allocation order.
    FOR w IN SELECT DISTINCT u FROM unnest(p_warehouse_ids) AS u ORDER BY 1 LOOP
        SELECT line_ids || coalesce(array_agg(l.id ORDER BY l.allocation_order), '{}'),
               line_products || coalesce(array_agg(l.product_id ORDER BY l.allocation_order), '{}'),
               line_warehouses || coalesce(array_agg(w ORDER BY l.allocation_order), '{}'),
               line_positions || coalesce(array_agg(l.position_id ORDER BY l.allocation_order), '{}'),
               line_batches || coalesce(array_agg(l.batch_number ORDER BY l.allocation_order), '{}'),
               line_serials || coalesce(array_agg(l.serial_number ORDER BY l.allocation_order), '{}'),
               line_expiries || coalesce(array_agg(l.expires_at ORDER BY l.allocation_order), '{}'),
               line_left || coalesce(array_agg(l.quantity ORDER BY l.allocation_order), '{}')
          INTO line_ids, line_products, line_warehouses, line_positions, line_batches, line_serials, line_expiries,
               line_left
          FROM stock_available_lines(p_tenant_id,
                                     ARRAY(SELECT DISTINCT u.p FROM unnest(p_product_ids, p_warehouse_ids) AS u(p, x)
                                            WHERE u.x = w), w) AS l;
    END LOOP;
    -- A pair's lines are contiguous and used up in order: its next line to take from.
    pair_next := array_fill(0, ARRAY[greatest(cardinality(pairs), 1)]);
    FOR j IN REVERSE cardinality(line_ids) .. 1 LOOP
        pair_next[array_position(pairs, line_products[j] || ':' || line_warehouses[j])] := j;
    END LOOP;

    FOR k IN 1 .. coalesce(cardinality(p_product_ids), 0) LOOP
        pi := array_position(pairs, p_product_ids[k] || ':' || p_warehouse_ids[k]);
        missing := p_quantities[k];
        j := pair_next[pi];
        WHILE missing > 0 LOOP
            IF j = 0 OR j > cardinality(line_ids) OR line_products[j] IS DISTINCT FROM p_product_ids[k]
               OR line_warehouses[j] IS DISTINCT FROM p_warehouse_ids[k] THEN
                RAISE EXCEPTION 'stock_allocate: product % is short at warehouse %', p_product_ids[k], p_warehouse_ids[k];
            END IF;
            took := least(line_left[j], missing);
            line_left[j] := line_left[j] - took;
            missing := missing - took;
            take_k := take_k || k;
            take_j := take_j || j;
            take_q := take_q || took;
            IF line_left[j] = 0 THEN
                j := j + 1;
            END IF;
        END LOOP;
        pair_next[pi] := j;
    END LOOP;

    line_targets := array_fill(NULL::uuid, ARRAY[greatest(cardinality(line_ids), 1)]);
    FOR src IN
        SELECT t.j, sum(t.q)::bigint AS q FROM unnest(take_j, take_q) AS t(j, q) GROUP BY t.j ORDER BY t.j
    LOOP
        UPDATE inventory_items SET quantity = quantity - src.q, updated_at = now()
         WHERE id = line_ids[src.j] AND quantity >= src.q
        RETURNING quantity INTO left_over;
        IF NOT FOUND THEN
            RAISE EXCEPTION 'inventory line % changed while locked', line_ids[src.j];
        END IF;
        SELECT stock_add_to_line(p_tenant_id, uuidv7_now(), s.product_id, s.warehouse_id, s.position_id, s.batch_number,
                                 s.serial_number, s.expires_at, p_state, 'NONE', src.q, s.cost_amount,
                                 s.cost_currency, s.gtin, s.rfid, s.weight_amount, s.weight_unit)
          INTO target_id
          FROM inventory_items s WHERE s.id = line_ids[src.j];
        line_targets[src.j] := target_id;
        IF left_over = 0 THEN
            DELETE FROM inventory_items WHERE id = line_ids[src.j];
        END IF;
    END LOOP;

    INSERT INTO stock_allocations (id, tenant_id, reservation_id, order_item_id, transfer_item_id, product_id,
                                   warehouse_id, position_id, batch_number, serial_number, expires_at, state, quantity,
                                   bundle_id)
    SELECT uuidv7_now(), p_tenant_id, p_reservation_ids[t.k], p_order_item_ids[t.k], p_transfer_item_ids[t.k],
           line_products[t.j], line_warehouses[t.j], line_positions[t.j], line_batches[t.j], line_serials[t.j],
           line_expiries[t.j], p_state, t.q, p_bundle_ids[t.k]
      FROM unnest(take_k, take_j, take_q) WITH ORDINALITY AS t(k, j, q, o)
     ORDER BY t.o;

    RETURN QUERY
        SELECT t.k, line_targets[t.j], line_products[t.j], line_warehouses[t.j], line_positions[t.j], t.q
          FROM unnest(take_k, take_j, take_q) WITH ORDINALITY AS t(k, j, q, o)
         ORDER BY t.o;
END
$$;

-- Units AVAILABLE now per product of `p_product_ids` at the warehouse (0 for one without lines):
-- under the stock locks of the pairs, what `stock_allocate` can take.
CREATE OR REPLACE FUNCTION "stock_available_totals"(p_tenant_id uuid, p_product_ids uuid[], p_warehouse_id uuid)
RETURNS TABLE (product_id uuid, quantity bigint)
LANGUAGE sql STABLE AS $$
    SELECT p.id, coalesce((SELECT sum(i.quantity) FROM inventory_items i
                            WHERE i.tenant_id = p_tenant_id AND i.product_id = p.id AND i.warehouse_id = p_warehouse_id
                              AND i.state = 'AVAILABLE'), 0)::bigint
      FROM (SELECT DISTINCT u AS id FROM unnest(p_product_ids) AS u) AS p
$$;
