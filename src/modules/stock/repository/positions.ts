/** The single-position rule of item preferences, read where stock is written. */
import { z } from 'zod';
import type { Tx } from '../../../kernel/db';
import { parseRows, uuid } from '../../../kernel/rows';

/**
 * The pairs among `pairs` whose SKU is restricted to a single position (its item preference) and
 * has units at more than one position of the warehouse now (no position counts as a position).
 */
export async function singlePositionBreaches(
  tx: Tx,
  tenantId: string,
  pairs: { productId: string; warehouseId: string }[],
) {
  if (pairs.length === 0) return [];
  const rows = await tx.$queryRaw<unknown[]>`
    SELECT f.product_id AS "productId", f.warehouse_id AS "warehouseId", p.sku
      FROM item_preferences f JOIN products p ON p.id = f.product_id
     WHERE f.tenant_id = ${tenantId}::uuid AND f.is_restricted_to_single_position
       AND (f.product_id, f.warehouse_id) IN (
         SELECT * FROM unnest(${pairs.map((p) => p.productId)}::uuid[], ${pairs.map((p) => p.warehouseId)}::uuid[]))
       AND (SELECT count(DISTINCT coalesce(i.position_id::text, '')) FROM inventory_items i
             WHERE i.tenant_id = f.tenant_id AND i.product_id = f.product_id AND i.warehouse_id = f.warehouse_id
               AND i.quantity > 0) > 1`;
  return parseRows(z.object({ productId: uuid, warehouseId: uuid, sku: z.string() }), rows);
}
