/** What every write of an order shares: loading it, its ledger context, and a change under its locks. */
import { writeTransaction, type Db, type Tx } from '../../kernel/db';
import { AppError, notFound } from '../../kernel/errors';
import { runIdempotent, type Idempotency } from '../../kernel/idempotency';
import { isUuid } from '../../kernel/ids';
import type { Principal } from '../../kernel/principal';
import * as stock from '../stock';
import type { StockMutationSource } from '../stock';
import * as repository from './orders.repository';
import type { OrderRecord, OrderStatus } from './orders.repository';

/** The order of the tenant with this id; NOT_FOUND otherwise. */
export async function loadOrder(db: Db, tenantId: string, id: string) {
  const [record] = isUuid(id) ? await repository.findOrders(db, tenantId, [id.toLowerCase()]) : [];
  if (!record) throw notFound(`no order with id "${id}"`);
  return record;
}

/** The ledger's account of a change of an order's stock. */
export const orderChange = (principal: Principal, source: StockMutationSource, orderId: string): stock.StockChange => ({
  source,
  actor: principal.actor,
  references: [{ type: 'Order', id: orderId }],
});

/**
 * The stock locks of an order's items at its warehouse and of whatever its items hold elsewhere (an
 * order through a sales channel may hold units at other warehouses), then its row lock: every write
 * of an order locks in this order.
 */
export async function lockOrder(tx: Tx, tenantId: string, order: OrderRecord, pairs: stock.Pair[] = []) {
  await stock.lock(tx, tenantId, {
    pairs: [...order.items.map((item) => ({ productId: item.productId, warehouseId: order.warehouseId })), ...pairs],
    holders: { orderItemIds: order.items.map((item) => item.id) },
  });
  await repository.lockOrder(tx, tenantId, order.id);
  const [current] = await repository.findOrders(tx, tenantId, [order.id]);
  return current!;
}

/**
 * Runs a change of a whole order under its locks, refusing orders not in `statuses`
 * (INVALID_STATE on `idField`); returns the order as it is after, and what the work returned.
 */
export async function changeOrder<T>(
  db: Db,
  principal: Principal,
  id: string,
  idempotency: Idempotency | undefined,
  statuses: OrderStatus[],
  idField: string,
  work: (tx: Tx, order: OrderRecord) => Promise<T>,
): Promise<{ order: OrderRecord; result: T }> {
  const { tenantId } = principal;
  const order = await loadOrder(db, tenantId, id);
  const result = await writeTransaction(db, (tx) =>
    runIdempotent(tx, tenantId, idempotency, async () => {
      const current = await lockOrder(tx, tenantId, order);
      if (!statuses.includes(current.status)) {
        throw new AppError(
          'INVALID_STATE',
          `order "${order.id}" is ${current.status}; this needs an order that is ${statuses.join(' or ')}`,
          { details: [{ field: idField, message: `order is ${current.status}` }] },
        );
      }
      return work(tx, current);
    }),
  );
  return { order: await loadOrder(db, tenantId, order.id), result };
}
