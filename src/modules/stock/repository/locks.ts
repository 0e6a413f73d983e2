/** The stock locks, taken through the database's `stock_lock` (../sql/1-locks.sql). */
import type { Tx } from '../../../kernel/db';

/**
 * Serialises writers of the same products at the same warehouses: one transaction-scoped advisory
 * lock per (tenant, product, warehouse), taken by the database's `stock_lock` (../sql/1-locks.sql), the
 * same function the batched reservations take them with. Every write of any quantity takes these
 * locks first; holding them, the sum of a product's lines at a warehouse is stable, so
 * `new_quantity` is exact.
 */
export async function lockStockLevels(tx: Tx, tenantId: string, pairs: { productId: string; warehouseId: string }[]) {
  if (pairs.length === 0) return;
  await tx.$executeRaw`
    SELECT stock_lock(${tenantId}::uuid, ${pairs.map((p) => p.productId)}::uuid[],
      ${pairs.map((p) => p.warehouseId)}::uuid[])`;
}
