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
