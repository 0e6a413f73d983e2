import type { Tx } from '../../../kernel/db';
import { AppError } from '../../../kernel/errors';
import { singlePositionBreaches } from '../repository/positions';

/**
 * Called after a write placed units: refuses it (the caller's transaction rolls back) when a SKU
 * restricted to a single position now has units at more than one position of the warehouse
 * (stock without a position counts as a position). The caller holds the stock locks of the
 * pairs, so no concurrent write can slip a second position in.
 */
export async function checkSinglePosition(
  tx: Tx,
  tenantId: string,
  placements: { productId: string; warehouseId: string; field: string }[],
) {
  const breaches = await singlePositionBreaches(tx, tenantId, placements);
  const problems = placements.flatMap((placement) => {
    const breach = breaches.find((b) => b.productId === placement.productId && b.warehouseId === placement.warehouseId);
    if (!breach) return [];
    const message =
      `would place SKU "${breach.sku}", which is restricted to a single position, at a second ` +
      `position of warehouse "${placement.warehouseId}"`;
    return [{ field: placement.field, message }];
  });
  if (problems.length > 0) {
    throw new AppError('CONFLICT', problems.map((p) => `${p.field} ${p.message}`).join(', '), { details: problems });
  }
}
