-- Low-stock and out-of-stock events. The level of a product's stock at a warehouse is OUT when
-- nothing is available, LOW when what is available is at or below the reorder point of its item
-- preference, NONE otherwise. Every ledger row written re-reads the level of its pair, under the
-- pair's stock lock (every writer holds it when it writes the ledger), and a fall of the level
-- (NONE -> LOW, NONE -> OUT, LOW -> OUT) records one event, delivered to the sales channels that
-- sell from the warehouse. A rise only lowers the stored level, so the next fall fires again.
--
-- A bundle has no lines: its level at a warehouse is that of what its components there make (the
-- fewest bundles, floor(available / quantity per bundle) over its components), against the reorder
-- point of the bundle's own item preference there (none: only OUT). A ledger row of a component
-- makes the level of every bundle containing it at the row's warehouse be read again when the
-- transaction commits, so a component falling low raises the events of the bundles it brings to or
-- below their reorder point, named by the component's row.

-- What is available of a product (not a bundle) at a warehouse, as the `inventory` query shows it:
-- the AVAILABLE lines plus what reservations past their expiry still hold.
CREATE OR REPLACE FUNCTION "stock_alert_available"(p_tenant_id uuid, p_product_id uuid, p_warehouse_id uuid)
RETURNS bigint
LANGUAGE plpgsql STABLE AS $$
BEGIN
    RETURN (SELECT coalesce(sum(i.quantity), 0)::bigint
              FROM inventory_items i
             WHERE i.tenant_id = p_tenant_id AND i.product_id = p_product_id AND i.warehouse_id = p_warehouse_id
               AND i.state = 'AVAILABLE')
         + coalesce((SELECT sum(h.quantity)::bigint
                       FROM expired_reservation_holdings(p_tenant_id, ARRAY[p_product_id], ARRAY[p_warehouse_id]) AS h), 0);
END
$$;

-- The level now and the stored level of the pairs (`p_product_ids[n]`, `p_warehouse_ids[n]`),
-- each once. Available is what the `inventory` query shows: the AVAILABLE lines plus what
-- reservations past their expiry still hold (as allocations' `sellableNow` counts it). A pair
-- never seen before has no stored level (null). Levels are returned as text (NONE, LOW, OUT): the
-- signature names only built-in types, so that this file applies before the tables' migration.
CREATE OR REPLACE FUNCTION "stock_alert_levels"(p_tenant_id uuid, p_product_ids uuid[], p_warehouse_ids uuid[])
RETURNS TABLE (product_id uuid, warehouse_id uuid, available bigint, reorder_point bigint, level text, stored text)
LANGUAGE plpgsql STABLE AS $$
#variable_conflict use_column
DECLARE
    pair record;
BEGIN
    -- A loop of simple lookups: on the write path of every change (usually one pair), these cost
    -- less than planning one statement over all pairs.
    FOR pair IN SELECT DISTINCT u.p, u.w FROM unnest(p_product_ids, p_warehouse_ids) AS u(p, w) LOOP
        product_id := pair.p;
        warehouse_id := pair.w;
        -- A bundle: the fewest bundles its components make (null for a plain product).
        SELECT min(stock_alert_available(p_tenant_id, c.component_id, pair.w) / c.quantity) INTO available
          FROM bundle_components c WHERE c.tenant_id = p_tenant_id AND c.bundle_id = pair.p;
        IF available IS NULL THEN
            available := stock_alert_available(p_tenant_id, pair.p, pair.w);
        END IF;
        SELECT max(f.reorder_point) INTO reorder_point
          FROM item_preferences f
         WHERE f.tenant_id = p_tenant_id AND f.product_id = pair.p AND f.warehouse_id = pair.w;
        level := CASE WHEN available <= 0 THEN 'OUT' WHEN available <= reorder_point THEN 'LOW' ELSE 'NONE' END;
        stored := (SELECT s.level::text FROM stock_alert_states s
                    WHERE s.tenant_id = p_tenant_id AND s.product_id = pair.p AND s.warehouse_id = pair.w);
        RETURN NEXT;
    END LOOP;
END
$$;

-- Stores the level of the pairs as it is now, without an event: for a pair whose reorder point
-- changed (an item preference created, changed or removed), so that only a change of stock counts
-- as a fall. The caller holds the pairs' stock locks.
CREATE OR REPLACE FUNCTION "stock_alert_rebase"(p_tenant_id uuid, p_product_ids uuid[], p_warehouse_ids uuid[])
RETURNS void
LANGUAGE plpgsql VOLATILE AS $$
BEGIN
    INSERT INTO stock_alert_states AS s (tenant_id, product_id, warehouse_id, level)
    SELECT p_tenant_id, l.product_id, l.warehouse_id, l.level::stock_alert_level
      FROM stock_alert_levels(p_tenant_id, p_product_ids, p_warehouse_ids) AS l
     WHERE l.level IS DISTINCT FROM l.stored
    ON CONFLICT (tenant_id, product_id, warehouse_id) DO UPDATE SET level = EXCLUDED.level, updated_at = now();
END
$$;

-- Stores the level of the pairs (`p_product_ids[n]`, `p_warehouse_ids[n]`) when it changed; a fall
-- records a stock event naming `p_mutation_ids[n]` and queues one delivery per channel webhook whose
-- channel sells from the warehouse (a channel without a warehouse list sells from all). A pair seen
-- for the first time only stores its level. Most writes change no level: they cost one read of the
-- levels, and the statement that stores and queues runs only for the pairs that changed. Plans are
-- generic: re-planning these statements on every write would cost more than running them.
CREATE OR REPLACE FUNCTION "record_stock_alerts"(p_tenant_id uuid, p_product_ids uuid[], p_warehouse_ids uuid[],
                                                 p_mutation_ids uuid[])
RETURNS void
LANGUAGE plpgsql SET plan_cache_mode = force_generic_plan AS $$
DECLARE
    changed_products uuid[];
    changed_warehouses uuid[];
BEGIN
    SELECT array_agg(l.product_id), array_agg(l.warehouse_id) INTO changed_products, changed_warehouses
      FROM stock_alert_levels(p_tenant_id, p_product_ids, p_warehouse_ids) AS l
     WHERE l.level IS DISTINCT FROM l.stored;
    IF changed_products IS NULL THEN
        RETURN;
    END IF;
    WITH changed AS MATERIALIZED (
        SELECT l.* FROM stock_alert_levels(p_tenant_id, changed_products, changed_warehouses) AS l
         WHERE l.level IS DISTINCT FROM l.stored),
    saved AS (
        INSERT INTO stock_alert_states AS s (tenant_id, product_id, warehouse_id, level)
        SELECT p_tenant_id, c.product_id, c.warehouse_id, c.level::stock_alert_level FROM changed c
        ON CONFLICT (tenant_id, product_id, warehouse_id)
        DO UPDATE SET level = EXCLUDED.level, updated_at = now()),
    fallen AS MATERIALIZED (
        SELECT uuidv7_now() AS id, c.*,
               (SELECT u.m FROM unnest(p_product_ids, p_warehouse_ids, p_mutation_ids) AS u(p, w, m)
                 WHERE u.p = c.product_id AND u.w = c.warehouse_id LIMIT 1) AS mutation_id,
               ARRAY(SELECT hook.channel_id FROM channel_webhooks hook
                      WHERE hook.tenant_id = p_tenant_id
                        AND (NOT EXISTS (SELECT 1 FROM channel_warehouses cw WHERE cw.channel_id = hook.channel_id)
                             OR EXISTS (SELECT 1 FROM channel_warehouses cw
                                         WHERE cw.channel_id = hook.channel_id
                                           AND cw.warehouse_id = c.warehouse_id))
                      ORDER BY hook.channel_id) AS channel_ids
          FROM changed c
         WHERE c.stored IS NOT NULL AND c.level::stock_alert_level > c.stored::stock_alert_level),
    recorded AS (
        INSERT INTO stock_events (id, tenant_id, type, status, product_id, warehouse_id, available, reorder_point,
                                  mutation_id, created_at)
        SELECT f.id, p_tenant_id,
               (CASE f.level WHEN 'OUT' THEN 'STOCK_OUT' ELSE 'STOCK_LOW' END)::stock_event_type,
               (CASE WHEN cardinality(f.channel_ids) > 0 THEN 'PENDING'
                     ELSE 'PROCESSED' END)::stock_mutation_status,
               f.product_id, f.warehouse_id, f.available, f.reorder_point, f.mutation_id, clock_timestamp()
          FROM fallen f ORDER BY f.id)
    INSERT INTO stock_broadcasts (id, tenant_id, event_id, channel_id)
    SELECT gen_random_uuid(), p_tenant_id, f.id, u.channel_id
      FROM fallen f CROSS JOIN LATERAL unnest(f.channel_ids) AS u(channel_id);
END
$$;

-- After each statement writing ledger rows: the levels of the pairs written, each named by its
-- last row of the statement. The bundles containing a product written are checked when the
-- transaction commits (`check_bundle_stock_alerts`): their level depends on several products'
-- stock, whose locks two writers of two different components hold at once.
CREATE OR REPLACE FUNCTION "queue_stock_events"() RETURNS trigger
LANGUAGE plpgsql SET plan_cache_mode = force_generic_plan AS $$
DECLARE
    t record;
BEGIN
    FOR t IN
        SELECT w.tenant_id, array_agg(w.product_id) AS product_ids, array_agg(w.warehouse_id) AS warehouse_ids,
               array_agg(w.mutation_id) AS mutation_ids
          FROM (SELECT DISTINCT ON (m.tenant_id, m.product_id, m.warehouse_id)
                       m.tenant_id, m.product_id, m.warehouse_id, m.id AS mutation_id
                  FROM written m
                 ORDER BY m.tenant_id, m.product_id, m.warehouse_id, m.sequence DESC) AS w
         GROUP BY w.tenant_id
    LOOP
        PERFORM record_stock_alerts(t.tenant_id, t.product_ids, t.warehouse_ids, t.mutation_ids);
    END LOOP;
    -- A bundle's check names the last row of its components in the statement.
    INSERT INTO stock_alert_bundle_checks (tenant_id, bundle_id, warehouse_id, mutation_id, sequence)
    SELECT DISTINCT ON (m.tenant_id, c.bundle_id, m.warehouse_id)
           m.tenant_id, c.bundle_id, m.warehouse_id, m.id, m.sequence
      FROM written m JOIN bundle_components c ON c.tenant_id = m.tenant_id AND c.component_id = m.product_id
     ORDER BY m.tenant_id, c.bundle_id, m.warehouse_id, m.sequence DESC;
    RETURN NULL;
END
$$;

-- When a transaction that wrote components of bundles commits: the level of each such bundle at
-- each warehouse written, under a lock of the bundle's level there ("stock-alert:" keys, taken in
-- ascending order, to the end of the transaction). The transaction takes no stock lock after it
-- (it is committing), and its reading, a statement after the lock, sees every write of the
-- bundle's components committed before: the transactions that wrote components of one bundle
-- check it one after the other, each against what the one before stored, so a fall raises one
-- event however the writes of its components interleave. Runs once per row of the transaction's
-- checks; the first run takes them all.
CREATE OR REPLACE FUNCTION "check_bundle_stock_alerts"() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
    t record;
    lock_key bigint;
BEGIN
    FOR t IN
        WITH mine AS (
            DELETE FROM stock_alert_bundle_checks c
             WHERE c.transaction_id = pg_current_xact_id()::text::bigint
            RETURNING c.tenant_id, c.bundle_id, c.warehouse_id, c.mutation_id, c.sequence),
        latest AS (
            SELECT DISTINCT ON (m.tenant_id, m.bundle_id, m.warehouse_id) m.*
              FROM mine m ORDER BY m.tenant_id, m.bundle_id, m.warehouse_id, m.sequence DESC)
        SELECT l.tenant_id, array_agg(l.bundle_id) AS bundle_ids, array_agg(l.warehouse_id) AS warehouse_ids,
               array_agg(l.mutation_id) AS mutation_ids
          FROM latest l GROUP BY l.tenant_id
    LOOP
        FOR lock_key IN
            SELECT DISTINCT ('x' || left(encode(sha256(convert_to(
                       'stock-alert:' || t.tenant_id || ':' || u.b || ':' || u.w, 'UTF8')), 'hex'), 16))::bit(64)::bigint AS k
              FROM unnest(t.bundle_ids, t.warehouse_ids) AS u(b, w)
             ORDER BY k
        LOOP
            PERFORM pg_advisory_xact_lock(lock_key);
        END LOOP;
        PERFORM record_stock_alerts(t.tenant_id, t.bundle_ids, t.warehouse_ids, t.mutation_ids);
    END LOOP;
    RETURN NULL;
END
$$;

-- A deferred trigger is a constraint trigger, which PostgreSQL cannot CREATE OR REPLACE: it is
-- dropped and created again, in one statement.
DO $$
BEGIN
    DROP TRIGGER IF EXISTS "stock_alert_bundle_checks_at_commit" ON stock_alert_bundle_checks;
    CREATE CONSTRAINT TRIGGER "stock_alert_bundle_checks_at_commit"
        AFTER INSERT ON stock_alert_bundle_checks
        DEFERRABLE INITIALLY DEFERRED
        FOR EACH ROW EXECUTE FUNCTION check_bundle_stock_alerts();
END
$$;

CREATE OR REPLACE TRIGGER "stock_mutations_queue_stock_events"
    AFTER INSERT ON stock_mutations REFERENCING NEW TABLE AS written
    FOR EACH STATEMENT EXECUTE FUNCTION queue_stock_events();
