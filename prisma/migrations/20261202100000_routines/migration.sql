-- Written by `npm run migration:routines` from src/modules/*/sql/*.sql: edit those files, not this one.

-- src/modules/auth/sql/notify-revoked-keys.sql

-- Every process trusts a verified API key for a few seconds without asking the database. A key
-- that is revoked, or deleted with its tenant, is announced on channel `credentials_revoked` (its
-- id) whichever code changed it, so that every process forgets it at once.
CREATE OR REPLACE FUNCTION "notify_credential_revoked"() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('credentials_revoked', OLD.id::text);
    RETURN NULL;
END
$$;

CREATE OR REPLACE TRIGGER "api_keys_notify_revoked"
    AFTER UPDATE OF revoked_at OR DELETE ON api_keys
    FOR EACH ROW EXECUTE FUNCTION notify_credential_revoked();

-- src/modules/broadcasts/sql/queue-broadcasts.sql

-- Every ledger row written is announced to each sales channel of its tenant with a webhook: one
-- delivery per row and channel, queued in the transaction that wrote the rows, whichever code
-- wrote them. A row with deliveries is PENDING until every channel accepted (the stock module,
-- the ledger's writer, marks it: ../../stock/sql/5-ledger-broadcasts.sql).
CREATE OR REPLACE FUNCTION "queue_stock_broadcasts"() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
    queued_ids uuid[];
BEGIN
    WITH queued AS (
        INSERT INTO stock_broadcasts (id, tenant_id, mutation_id, channel_id)
        SELECT gen_random_uuid(), m.tenant_id, m.id, w.channel_id
          FROM written m
          JOIN channel_webhooks w ON w.tenant_id = m.tenant_id
          JOIN sales_channels c ON c.id = w.channel_id
        RETURNING mutation_id)
    SELECT array_agg(mutation_id) INTO queued_ids FROM queued;
    IF queued_ids IS NOT NULL THEN
        PERFORM stock_mutations_mark_pending(queued_ids);
    END IF;
    RETURN NULL;
END
$$;

CREATE OR REPLACE TRIGGER "stock_mutations_queue_broadcasts"
    AFTER INSERT ON stock_mutations REFERENCING NEW TABLE AS written
    FOR EACH STATEMENT EXECUTE FUNCTION queue_stock_broadcasts();

-- src/modules/broadcasts/sql/stock-events.sql

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

-- src/modules/catalog/sql/bundle-definitions.sql

-- The lock of a product's bundle definition (whether it is a bundle, and of what). Every stock
-- write takes it shared for each product it names before it reads whether the product is a bundle,
-- and keeps it to the end of its transaction; `setBundleComponents` takes it exclusive for the
-- product it defines. A definition therefore never changes between a write's reading of it and the
-- write's commit, whatever the write does between (taking its components' stock locks, queueing).
-- Its keys are of their own kind ("bundle:"), never equal to a stock lock's ("stock:").
CREATE OR REPLACE FUNCTION "bundle_definition_lock"(p_tenant_id uuid, p_product_ids uuid[], p_exclusive boolean)
RETURNS void
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
    lock_key bigint;
BEGIN
    -- Each key once, ascending: shared holders never wait for each other, and an exclusive holder
    -- takes only the one of the product it defines.
    FOR lock_key IN
        SELECT DISTINCT ('x' || left(encode(sha256(convert_to('bundle:' || p_tenant_id || ':' || u.p, 'UTF8')), 'hex'),
                                     16))::bit(64)::bigint AS k
          FROM unnest(p_product_ids) AS u(p)
         ORDER BY k
    LOOP
        IF p_exclusive THEN
            PERFORM pg_advisory_xact_lock(lock_key);
        ELSE
            PERFORM pg_advisory_xact_lock_shared(lock_key);
        END IF;
    END LOOP;
END
$$;

-- The components (with their SKUs) of those of `p_product_ids` that are bundles, in the order last
-- set, read after taking the products' shared definition locks: one round trip for a write's
-- reading of its bundles (each statement of this function sees what committed before it ran).
CREATE OR REPLACE FUNCTION "bundle_components_locked"(p_tenant_id uuid, p_product_ids uuid[])
RETURNS TABLE (bundle_id uuid, component_id uuid, sku text, quantity bigint)
LANGUAGE plpgsql VOLATILE AS $$
#variable_conflict use_column
BEGIN
    PERFORM bundle_definition_lock(p_tenant_id, p_product_ids, false);
    RETURN QUERY
        SELECT c.bundle_id, c.component_id, p.sku, c.quantity
          FROM bundle_components c JOIN products p ON p.tenant_id = c.tenant_id AND p.id = c.component_id
         WHERE c.tenant_id = p_tenant_id AND c.bundle_id = ANY(p_product_ids)
         ORDER BY c.bundle_id, c.position;
END
$$;

-- src/modules/catalog/sql/notify-sales-channel-changes.sql

-- Every process keeps the warehouses its sales channels sell from in memory. A change of a
-- channel's warehouses or allocation strategy, by any code or through a deleted warehouse,
-- channel or tenant, is announced on channel `sales_channel_changed` as `<tenant id>:<channel id>`.
CREATE OR REPLACE FUNCTION "notify_sales_channel_changed"() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF TG_TABLE_NAME = 'sales_channels' THEN
        PERFORM pg_notify('sales_channel_changed', OLD.tenant_id::text || ':' || OLD.id::text);
    ELSIF TG_OP <> 'INSERT' THEN
        PERFORM pg_notify('sales_channel_changed', OLD.tenant_id::text || ':' || OLD.channel_id::text);
    ELSE
        PERFORM pg_notify('sales_channel_changed', NEW.tenant_id::text || ':' || NEW.channel_id::text);
    END IF;
    RETURN NULL;
END
$$;

CREATE OR REPLACE TRIGGER "channel_warehouses_notify_changed"
    AFTER INSERT OR UPDATE OR DELETE ON channel_warehouses
    FOR EACH ROW EXECUTE FUNCTION notify_sales_channel_changed();

CREATE OR REPLACE TRIGGER "sales_channels_notify_changed"
    AFTER UPDATE OF allocation_strategy OR DELETE ON sales_channels
    FOR EACH ROW EXECUTE FUNCTION notify_sales_channel_changed();

-- src/modules/oauth/sql/notify-revoked-grants.sql

-- An OAuth grant that is revoked (revocation, a reused refresh token or code) or deleted with its
-- client or tenant is announced like a revoked API key, so that every process forgets the access
-- tokens it trusted under it at once.
CREATE OR REPLACE TRIGGER "oauth_grants_notify_revoked"
    AFTER UPDATE OF revoked_at OR DELETE ON oauth_grants
    FOR EACH ROW EXECUTE FUNCTION notify_credential_revoked();

-- src/modules/proxies/sql/notify-proxy-changes.sql

-- Every process keeps the proxies it serves in memory. A proxy that is created, replaced or
-- deleted, by any code or with its tenant, is announced on channel `proxy_changed`: its key,
-- followed for a proxy that still exists by the id of the writing transaction (the row's xmin),
-- so that a process that has already read that version of the row keeps what it cached with it.
CREATE OR REPLACE FUNCTION "notify_proxy_changed"() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'DELETE' OR (TG_OP = 'UPDATE' AND OLD.key <> NEW.key) THEN
        PERFORM pg_notify('proxy_changed', OLD.key);
    END IF;
    IF TG_OP <> 'DELETE' THEN
        PERFORM pg_notify('proxy_changed', NEW.key || ' ' || (txid_current() % 4294967296)::text);
    END IF;
    RETURN NULL;
END
$$;

CREATE OR REPLACE TRIGGER "proxies_notify_changed"
    AFTER INSERT OR UPDATE OR DELETE ON proxies
    FOR EACH ROW EXECUTE FUNCTION notify_proxy_changed();

-- src/modules/reservations/sql/reservation-rows.sql

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

-- src/modules/stock/sql/1-locks.sql

-- The stock locks. Every write of any quantity of a SKU at a warehouse first takes that pair's
-- transaction-scoped advisory lock; holding it, the sum of the SKU's lines there is stable.

-- The lock key of a SKU's stock at a warehouse: the first 8 bytes (big-endian, signed) of
-- SHA-256("stock:<tenant>:<product>:<warehouse>").
CREATE OR REPLACE FUNCTION "stock_lock_key"(p_tenant_id uuid, p_product_id uuid, p_warehouse_id uuid) RETURNS bigint
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
    SELECT ('x' || left(encode(sha256(convert_to('stock:' || p_tenant_id || ':' || p_product_id || ':' || p_warehouse_id,
                                                  'UTF8')), 'hex'), 16))::bit(64)::bigint
$$;

-- Takes the locks of the pairs (`p_product_ids[n]`, `p_warehouse_ids[n]`), each once and in
-- ascending key order, so that two writers of overlapping sets of pairs cannot deadlock.
CREATE OR REPLACE FUNCTION "stock_lock"(p_tenant_id uuid, p_product_ids uuid[], p_warehouse_ids uuid[]) RETURNS void
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
    lock_key bigint;
BEGIN
    FOR lock_key IN
        SELECT DISTINCT stock_lock_key(p_tenant_id, u.p, u.w) AS k FROM unnest(p_product_ids, p_warehouse_ids) AS u(p, w)
         ORDER BY k
    LOOP
        PERFORM pg_advisory_xact_lock(lock_key);
    END LOOP;
END
$$;

-- src/modules/stock/sql/2-lines.sql

-- Inventory lines: the order units are allocated in, and how units join a line.

-- The AVAILABLE lines of some products at a warehouse, locked, numbered in the order units are
-- allocated from: by product, then the earliest expiry first (first expired, first out), then
-- lines without a position last. Callers sort by `allocation_order`.
CREATE OR REPLACE FUNCTION "stock_available_lines"(p_tenant_id uuid, p_product_ids uuid[], p_warehouse_id uuid)
RETURNS TABLE (allocation_order bigint, id uuid, product_id uuid, position_id uuid, batch_number text,
               serial_number text, expires_at timestamptz, quantity bigint, cost_amount bigint, cost_currency text,
               gtin text[], rfid text, weight_amount double precision, weight_unit text)
LANGUAGE sql VOLATILE AS $$
    SELECT row_number() OVER (ORDER BY f.product_id, f.expires_at ASC NULLS LAST, f.position_id ASC NULLS LAST, f.id),
           f.id, f.product_id, f.position_id, f.batch_number, f.serial_number, f.expires_at, f.quantity, f.cost_amount,
           f.cost_currency, f.gtin, f.rfid, f.weight_amount, f.weight_unit
      FROM (SELECT i.id, i.product_id, i.position_id, i.batch_number, i.serial_number, i.expires_at, i.quantity,
                   i.cost_amount, i.cost_currency, i.gtin, i.rfid, i.weight_amount, i.weight_unit
              FROM inventory_items i
             WHERE i.tenant_id = p_tenant_id AND i.product_id = ANY(p_product_ids) AND i.warehouse_id = p_warehouse_id
               AND i.state = 'AVAILABLE' AND i.quantity > 0
               FOR UPDATE) AS f
$$;

-- Adds `p_quantity` units to the line with this identity, creating it (with id `p_id`) when there
-- is none. The quantity is added in SQL, so concurrent writers never lose a unit; an attribute
-- given (not null) replaces the line's, a null one leaves it. Returns the line's id.
CREATE OR REPLACE FUNCTION "stock_add_to_line"(
    p_tenant_id uuid, p_id uuid, p_product_id uuid, p_warehouse_id uuid, p_position_id uuid, p_batch_number text,
    p_serial_number text, p_expires_at timestamptz, p_state inventory_item_state, p_reason inventory_item_reason,
    p_quantity bigint, p_cost_amount bigint, p_cost_currency text, p_gtin text[], p_rfid text,
    p_weight_amount double precision, p_weight_unit text)
RETURNS uuid
LANGUAGE sql VOLATILE AS $$
    INSERT INTO inventory_items AS i (id, tenant_id, product_id, warehouse_id, position_id, batch_number, serial_number,
                                      expires_at, state, reason, quantity, cost_amount, cost_currency, gtin, rfid,
                                      weight_amount, weight_unit)
    VALUES (p_id, p_tenant_id, p_product_id, p_warehouse_id, p_position_id, p_batch_number, p_serial_number,
            p_expires_at, p_state, p_reason, p_quantity, p_cost_amount, p_cost_currency, p_gtin, p_rfid,
            p_weight_amount, p_weight_unit)
    ON CONFLICT (tenant_id, product_id, warehouse_id, position_id, batch_number, serial_number, expires_at, state, reason)
    DO UPDATE SET quantity = i.quantity + EXCLUDED.quantity,
                  cost_amount = coalesce(EXCLUDED.cost_amount, i.cost_amount),
                  cost_currency = CASE WHEN EXCLUDED.cost_amount IS NULL THEN i.cost_currency
                                       ELSE EXCLUDED.cost_currency END,
                  gtin = coalesce(EXCLUDED.gtin, i.gtin),
                  rfid = coalesce(EXCLUDED.rfid, i.rfid),
                  weight_amount = coalesce(EXCLUDED.weight_amount, i.weight_amount),
                  weight_unit = CASE WHEN EXCLUDED.weight_amount IS NULL THEN i.weight_unit
                                     ELSE EXCLUDED.weight_unit END,
                  updated_at = now()
    RETURNING i.id
$$;

-- src/modules/stock/sql/2-safety.sql

-- Safety stock: units of a product kept back at a warehouse, which no allocation takes.

-- The safety stock of a product at a warehouse for a sales channel: the channel's own row when it
-- has one, else the warehouse's row for every channel, else 0. Without a channel (a transfer), the
-- warehouse's row.
CREATE OR REPLACE FUNCTION "stock_safety_stock"(p_tenant_id uuid, p_product_id uuid, p_warehouse_id uuid,
                                                p_channel_id uuid)
RETURNS bigint
LANGUAGE sql STABLE AS $$
    SELECT coalesce(
        (SELECT s.quantity FROM safety_stocks s
          WHERE s.tenant_id = p_tenant_id AND s.product_id = p_product_id AND s.warehouse_id = p_warehouse_id
            AND p_channel_id IS NOT NULL AND s.channel_id = p_channel_id),
        (SELECT s.quantity FROM safety_stocks s
          WHERE s.tenant_id = p_tenant_id AND s.product_id = p_product_id AND s.warehouse_id = p_warehouse_id
            AND s.channel_id IS NULL),
        0)::bigint
$$;

-- src/modules/stock/sql/3-allocate.sql

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

-- src/modules/stock/sql/3-expired-reservations.sql

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

-- src/modules/stock/sql/4-reserve-batch.sql

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

-- src/modules/stock/sql/5-ledger-broadcasts.sql

-- The broadcast state of ledger rows (`status`, `messages`), which the broadcasts module keeps,
-- written here, by the ledger's one writer: the broadcasts' trigger marks the rows it queued
-- deliveries for (../../broadcasts/sql/queue-broadcasts.sql), and their deliveries record their
-- outcomes (`refreshSubject` in ../../broadcasts/broadcasts.repository.ts).
CREATE OR REPLACE FUNCTION "stock_mutations_mark_pending"(p_ids uuid[]) RETURNS void
LANGUAGE sql AS $$
    UPDATE stock_mutations SET status = 'PENDING' WHERE id = ANY(p_ids);
$$;

CREATE OR REPLACE FUNCTION "stock_mutation_broadcast_state"(p_id uuid, p_status text, p_messages jsonb) RETURNS void
LANGUAGE sql AS $$
    UPDATE stock_mutations SET status = p_status::stock_mutation_status, messages = p_messages WHERE id = p_id;
$$;
