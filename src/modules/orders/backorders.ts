/**
 * The backorders of open orders, as the supply module matches arrivals to them (MATCH_ORDERS): the
 * orders module's verbs for the order items it alone writes, run in the caller's transaction.
 */
import { z } from 'zod';
import type { Tx } from '../../kernel/db';
import { int8, parseRows, uuid } from '../../kernel/rows';

/** BACKORDERED items of OPEN orders for a product at a warehouse, oldest first, locked. */
export async function backorderedItems(tx: Tx, tenantId: string, productId: string, warehouseId: string) {
  return parseRows(
    z.object({ id: uuid, orderId: uuid, quantity: int8 }),
    await tx.$queryRaw<unknown[]>`
      SELECT i.id, i.order_id AS "orderId", i.quantity FROM order_items i
        JOIN orders o ON o.tenant_id = i.tenant_id AND o.id = i.order_id
       WHERE i.tenant_id = ${tenantId}::uuid AND i.product_id = ${productId}::uuid
         AND o.warehouse_id = ${warehouseId}::uuid AND o.status IN ('OPEN', 'PARTIALLY_SHIPPED')
         AND i.state = 'BACKORDERED'
       ORDER BY i.created_at, i.id
         FOR UPDATE OF i`,
  );
}

/** A backordered order item got its units. */
export async function markBackorderAllocated(tx: Tx, orderItemId: string) {
  await tx.$executeRaw`UPDATE order_items SET state = 'ALLOCATED', updated_at = now() WHERE id = ${orderItemId}::uuid`;
}
