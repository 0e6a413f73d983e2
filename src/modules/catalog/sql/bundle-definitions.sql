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
