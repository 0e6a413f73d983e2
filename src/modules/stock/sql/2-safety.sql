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
