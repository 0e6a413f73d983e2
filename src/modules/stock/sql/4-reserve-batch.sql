-- Creates the reservations of `p_requests`, all at one warehouse, in array order, each all or none.
-- `p_requests` is a JSON array whose elements carry their position `n` (from 0) and `id`,
-- `check_id` (only a client-chosen id can be taken), `business_id`, `warehouse_id`, `channel_id`,
-- `customer`, `notes`, `expires_at`, `item_ids`, `skus`, `quantities` (one per item),
-- `actor_type`, `actor_id` and `references` (of its ledger rows). Returns one row per request:
--   ('INVALID')  the business, the warehouse (of that business), the channel or a SKU is not the tenant's;
--   ('TAKEN')    a reservation with this id exists (or comes earlier in the batch);
--   ('EXPIRED')  an expired reservation still holds units of the batch's SKUs: nothing at all was
--                written and no lock taken; the caller releases it on its general path;
--   ('BUNDLE')   a component of a bundle of the request is short (named alone or through the
--                bundle): nothing was written for it; the caller's general path names the component;
--   ('SHORT', n, requested, available)  the SKU of item n (1-based, its first item) is short;
--   ('RESERVED', ..., created_at, product_ids)  done: the reservation, its items, the units moved
--                from AVAILABLE lines (earliest expiry first) to RESERVED lines, the allocations,
--                one ALLOCATION ledger row per item and line moved from (the ledger's trigger
--                queues their broadcasts).
-- An item of a bundle is its components' units (the item's quantity times each component's), held
-- by the reservation; their ledger rows carry the bundle (`{"type": "Bundle", "id": ...}`) after
-- the request's own references. The bundle definitions are read under their shared locks
-- (`bundle_definition_lock`), so a definition changed concurrently applies wholly before or after.
-- Nothing is written for a request that is not RESERVED.
CREATE OR REPLACE FUNCTION "reserve_stock_batch"(p_tenant_id uuid, p_requests jsonb)
RETURNS TABLE (ordinal int, outcome text, item_index int, requested bigint, available bigint, created_at timestamptz, product_ids uuid[])
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
    warehouse uuid := (p_requests -> 0 ->> 'warehouse_id')::uuid;
    created timestamptz := now()::timestamptz(3);
    req record;
    k int;
    need bigint;
    have bigint;
    short_item int;
    found_skus text[];
    found_ids uuid[];
    good_businesses uuid[];
    good_channels uuid[];
    req_products uuid[];
    accepted int[] := '{}';
    accepted_ids uuid[] := '{}';
    -- Per product of `stock_ids`: the units AVAILABLE that the earlier requests left.
    product_left bigint[];
    pi int;
    -- The items of the accepted requests, in order, for `stock_allocate`; item_n: their request.
    item_n int[] := '{}';
    item_products uuid[] := '{}';
    item_quantities bigint[] := '{}';
    item_holders uuid[] := '{}';
    -- The takes `stock_allocate` made: item, line moved to, product, position.
    take_k int[];
    take_lines uuid[];
    take_products uuid[];
    take_positions uuid[];
    mutation_ids uuid[];
    -- Whether any of the batch's SKUs has a safety stock at the warehouse (most have none).
    kept_back boolean;
    -- The components of the batch's bundles: bundle, component, units per bundle (in set order).
    part_bundles uuid[];
    part_ids uuid[];
    part_quantities bigint[];
    -- The products whose lines the batch takes from: its plain products and its bundles' components.
    stock_ids uuid[];
    -- One request's items as units of stock: product, quantity, item (1-based), bundle (or null).
    unit_products uuid[];
    unit_quantities bigint[];
    unit_items int[];
    unit_bundles uuid[];
    item_bundles uuid[] := '{}';
BEGIN
    IF EXISTS (SELECT 1 FROM jsonb_array_elements(p_requests) e WHERE (e ->> 'warehouse_id')::uuid IS DISTINCT FROM warehouse) THEN
        RAISE EXCEPTION 'reserve_stock_batch: the requests of a batch name one warehouse';
    END IF;

    -- The tenant's products, businesses (owning the warehouse) and channels among those named.
    SELECT array_agg(p.sku), array_agg(p.id) INTO found_skus, found_ids
      FROM products p
     WHERE p.tenant_id = p_tenant_id
       AND p.sku IN (SELECT s FROM jsonb_array_elements(p_requests) e CROSS JOIN LATERAL jsonb_array_elements_text(e -> 'skus') AS s);
    found_skus := coalesce(found_skus, '{}');
    found_ids := coalesce(found_ids, '{}');
    good_businesses := ARRAY(
        SELECT w.business_id FROM warehouses w
         WHERE w.tenant_id = p_tenant_id AND w.id = warehouse
           AND EXISTS (SELECT 1 FROM businesses b WHERE b.tenant_id = p_tenant_id AND b.id = w.business_id));
    good_channels := ARRAY(
        SELECT c.id FROM sales_channels c
         WHERE c.tenant_id = p_tenant_id AND c.id IN (SELECT (e ->> 'channel_id')::uuid FROM jsonb_array_elements(p_requests) e));

    -- Which products are bundles, and of what, read under the definitions' locks.
    PERFORM bundle_definition_lock(p_tenant_id, found_ids, false);
    SELECT coalesce(array_agg(c.bundle_id ORDER BY c.bundle_id, c.position), '{}'),
           coalesce(array_agg(c.component_id ORDER BY c.bundle_id, c.position), '{}'),
           coalesce(array_agg(c.quantity ORDER BY c.bundle_id, c.position), '{}')
      INTO part_bundles, part_ids, part_quantities
      FROM bundle_components c WHERE c.tenant_id = p_tenant_id AND c.bundle_id = ANY(found_ids);
    stock_ids := ARRAY(SELECT DISTINCT u.id FROM unnest(found_ids || part_ids) AS u(id)
                        WHERE u.id <> ALL(part_bundles) ORDER BY u.id);

    IF EXISTS (SELECT 1 FROM expired_reservation_holdings(p_tenant_id, stock_ids, array_fill(warehouse, ARRAY[cardinality(stock_ids)]))) THEN
        RETURN QUERY SELECT (e ->> 'n')::int, 'EXPIRED'::text, NULL::int, NULL::bigint, NULL::bigint, NULL::timestamptz, NULL::uuid[]
                       FROM jsonb_array_elements(p_requests) e ORDER BY 1;
        RETURN;
    END IF;

    -- The stock locks, then what is available of each product.
    PERFORM stock_lock(p_tenant_id, stock_ids, array_fill(warehouse, ARRAY[cardinality(stock_ids)]));
    SELECT coalesce(array_agg(coalesce(t.quantity, 0) ORDER BY f.o), '{}') INTO product_left
      FROM unnest(stock_ids) WITH ORDINALITY AS f(id, o)
      LEFT JOIN stock_available_totals(p_tenant_id, stock_ids, warehouse) AS t ON t.product_id = f.id;
    kept_back := EXISTS (SELECT 1 FROM safety_stocks s
                          WHERE s.tenant_id = p_tenant_id AND s.warehouse_id = warehouse AND s.product_id = ANY(stock_ids));

    -- Each request in turn against what the earlier ones left.
    FOR req IN
        SELECT x.* FROM jsonb_to_recordset(p_requests) AS x(
            n int, id uuid, check_id boolean, business_id uuid, channel_id uuid, skus text[], quantities bigint[])
         ORDER BY x.n
    LOOP
        req_products := ARRAY(SELECT found_ids[array_position(found_skus, u.s)] FROM unnest(req.skus) WITH ORDINALITY AS u(s, o) ORDER BY u.o);
        IF array_position(req_products, NULL) IS NOT NULL
           OR (req.business_id = ANY(good_businesses) AND req.channel_id = ANY(good_channels)) IS NOT TRUE THEN
            RETURN QUERY SELECT req.n, 'INVALID'::text, NULL::int, NULL::bigint, NULL::bigint, NULL::timestamptz, NULL::uuid[];
            CONTINUE;
        END IF;
        IF req.check_id AND (req.id = ANY(accepted_ids) OR EXISTS (SELECT 1 FROM reservations r WHERE r.tenant_id = p_tenant_id AND r.id = req.id)) THEN
            RETURN QUERY SELECT req.n, 'TAKEN'::text, NULL::int, NULL::bigint, NULL::bigint, NULL::timestamptz, NULL::uuid[];
            CONTINUE;
        END IF;
        -- The items as units of stock: an item of a bundle is its components' units.
        IF cardinality(part_bundles) = 0 THEN
            unit_products := req_products;
            unit_quantities := req.quantities;
            unit_items := ARRAY(SELECT generate_series(1, cardinality(req_products)));
            unit_bundles := array_fill(NULL::uuid, ARRAY[cardinality(req_products)]);
        ELSE
            SELECT array_agg(coalesce(c.id, u.p) ORDER BY u.o, c.o), array_agg(u.q * coalesce(c.per, 1) ORDER BY u.o, c.o),
                   array_agg(u.o::int ORDER BY u.o, c.o), array_agg(c.b ORDER BY u.o, c.o)
              INTO unit_products, unit_quantities, unit_items, unit_bundles
              FROM unnest(req_products, req.quantities) WITH ORDINALITY AS u(p, q, o)
              LEFT JOIN unnest(part_bundles, part_ids, part_quantities) WITH ORDINALITY AS c(b, id, per, o) ON c.b = u.p;
        END IF;
        -- Every SKU's summed request against what is left of its lines, SKUs in input order.
        short_item := NULL;
        FOR k IN 1 .. cardinality(unit_products) LOOP
            CONTINUE WHEN unit_products[k] = ANY(unit_products[1:k - 1]);
            SELECT sum(u.q)::bigint INTO need FROM unnest(unit_products, unit_quantities) AS u(p, q) WHERE u.p = unit_products[k];
            -- What the earlier requests left, beyond the safety stock the request's channel keeps back.
            have := product_left[array_position(stock_ids, unit_products[k])];
            IF kept_back THEN
                have := greatest(have - stock_safety_stock(p_tenant_id, unit_products[k], warehouse, req.channel_id), 0);
            END IF;
            IF need > have THEN
                short_item := k;
                EXIT;
            END IF;
        END LOOP;
        -- A short product that a bundle of the request takes from: the general path names the bundle's item.
        IF short_item IS NOT NULL AND EXISTS (SELECT 1 FROM unnest(unit_products, unit_bundles) AS u(p, b)
                                               WHERE u.p = unit_products[short_item] AND u.b IS NOT NULL) THEN
            RETURN QUERY SELECT req.n, 'BUNDLE'::text, NULL::int, NULL::bigint, NULL::bigint, NULL::timestamptz, NULL::uuid[];
            CONTINUE;
        ELSIF short_item IS NOT NULL THEN
            RETURN QUERY SELECT req.n, 'SHORT'::text, unit_items[short_item], need, have, NULL::timestamptz, NULL::uuid[];
            CONTINUE;
        END IF;
        FOR k IN 1 .. cardinality(unit_products) LOOP
            pi := array_position(stock_ids, unit_products[k]);
            product_left[pi] := product_left[pi] - unit_quantities[k];
            item_n := item_n || req.n;
            item_products := item_products || unit_products[k];
            item_quantities := item_quantities || unit_quantities[k];
            item_holders := item_holders || req.id;
            item_bundles := item_bundles || unit_bundles[k];
        END LOOP;
        accepted := accepted || req.n;
        accepted_ids := accepted_ids || req.id;
        RETURN QUERY SELECT req.n, 'RESERVED'::text, NULL::int, NULL::bigint, NULL::bigint, created, req_products;
    END LOOP;
    IF cardinality(accepted) = 0 THEN
        RETURN;
    END IF;

    -- The reservations and their items, written by the reservations module (its reservation-rows.sql).
    PERFORM reservations_insert_batch(p_tenant_id, warehouse, p_requests, accepted, created, found_skus, found_ids);

    -- The walk and the move of the lines (each line once for the whole batch), and the allocations.
    SELECT coalesce(array_agg(a.take ORDER BY a.o), '{}'), coalesce(array_agg(a.line_id ORDER BY a.o), '{}'),
           coalesce(array_agg(a.product_id ORDER BY a.o), '{}'), coalesce(array_agg(a.position_id ORDER BY a.o), '{}')
      INTO take_k, take_lines, take_products, take_positions
      FROM stock_allocate(p_tenant_id, 'RESERVED', item_products, array_fill(warehouse, ARRAY[cardinality(item_n)]),
                          item_quantities, item_holders, array_fill(NULL::uuid, ARRAY[cardinality(item_n)]),
                          array_fill(NULL::uuid, ARRAY[cardinality(item_n)]), item_bundles)
           WITH ORDINALITY AS a(take, line_id, product_id, warehouse_id, position_id, quantity, o);

    -- The ledger: only states changed (delta 0), so every row's new_quantity is its SKU's on-hand total.
    mutation_ids := ARRAY(SELECT uuidv7_now() FROM generate_series(1, cardinality(take_k)));
    INSERT INTO stock_mutations (id, tenant_id, source, status, delta, new_quantity, product_id, warehouse_id, position_id,
                                 inventory_item_id, actor_type, actor_id, "references", created_at)
    SELECT mutation_ids[t.o], p_tenant_id, 'ALLOCATION'::stock_mutation_source, 'PROCESSED'::stock_mutation_status, 0::bigint,
           totals.quantity, take_products[t.o], warehouse, take_positions[t.o], take_lines[t.o], x.actor_type, x.actor_id,
           CASE WHEN item_bundles[t.k] IS NULL THEN x."references"
                ELSE x."references" || jsonb_build_array(jsonb_build_object('type', 'Bundle', 'id', item_bundles[t.k]))
           END, clock_timestamp()
      FROM unnest(take_k) WITH ORDINALITY AS t(k, o)
      JOIN jsonb_to_recordset(p_requests) AS x(n int, actor_type text, actor_id text, "references" jsonb) ON x.n = item_n[t.k]
      JOIN (SELECT i.product_id, sum(i.quantity)::bigint AS quantity FROM inventory_items i
             WHERE i.tenant_id = p_tenant_id AND i.product_id = ANY(stock_ids) AND i.warehouse_id = warehouse
             GROUP BY i.product_id) AS totals ON totals.product_id = take_products[t.o]
     ORDER BY t.o;
END
$$;
