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
