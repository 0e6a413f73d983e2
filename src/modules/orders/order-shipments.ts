/** Whole-order writes: shipping everything allocated, shipments of some units, and cancelling. */
import type { Db, Tx } from '../../kernel/db';
import { AppError, invalidState } from '../../kernel/errors';
import type { Idempotency } from '../../kernel/idempotency';
import { uuidv7 } from '../../kernel/ids';
import { invalidInput } from '../../kernel/validation';
import type { Principal } from '../../kernel/principal';
import { queueOrderEvent } from '../broadcasts';
import * as stock from '../stock';
import { itemReferenceProblems } from '../stock';
import { changeOrder, loadOrder, orderChange } from './order-changes';
import type { OrderMoneySteps } from './order-money-steps';
import * as repository from './orders.repository';
import type { OrderRecord, OrderStatus } from './orders.repository';

/** An order with money shipped (all of it, or part): its channel's webhook hears `order.shipped`. */
const announceShipped = (tx: Tx, tenantId: string, orderId: string, status: OrderStatus) =>
  queueOrderEvent(tx, tenantId, { orderId, type: 'order.shipped', data: { status } });

/**
 * Ships every ALLOCATED item: its units leave the warehouse (`quantity` and `quantity_committed`
 * drop). BACKORDERED items wait: the order is PARTIALLY_SHIPPED until they ship too.
 */
export async function shipOrder(db: Db, principal: Principal, id: string, idempotency?: Idempotency) {
  const { tenantId } = principal;
  const statuses: OrderStatus[] = ['OPEN', 'PARTIALLY_SHIPPED'];
  const { order } = await changeOrder(db, principal, id, idempotency, statuses, 'id', async (tx, order) => {
    const shipped = order.items.filter((item) => item.state === 'ALLOCATED');
    if (shipped.length === 0) throw new AppError('INVALID_STATE', `order "${order.id}" has no allocated items to ship`);
    const holders = { orderItemIds: shipped.map((item) => item.id) };
    await stock.ship(tx, tenantId, holders, orderChange(principal, 'ALLOCATION', order.id));
    await repository.setItemStates(tx, tenantId, holders.orderItemIds, 'SHIPPED', { shipped: true });
    const waiting = order.items.some((item) => item.state === 'BACKORDERED');
    await repository.setOrderStatus(tx, tenantId, order.id, waiting ? 'PARTIALLY_SHIPPED' : 'SHIPPED');
    if (order.money !== null) await announceShipped(tx, tenantId, order.id, waiting ? 'PARTIALLY_SHIPPED' : 'SHIPPED');
  });
  return order;
}

/**
 * Ships some units of ALLOCATED items, all or none: their units leave the warehouse. An item
 * shipped in part is split, so that the shipped units are an item of their own that can be
 * returned and restocked. Returns the order and the items this shipment shipped.
 */
export async function createShipment(
  db: Db,
  principal: Principal,
  orderId: string,
  requested: { item_id: string; quantity: number }[],
  idempotency?: Idempotency,
): Promise<{ order: OrderRecord; shippedItemIds: string[] }> {
  const { tenantId } = principal;
  const found = await loadOrder(db, tenantId, orderId);
  const problems = itemReferenceProblems(requested, new Set(found.items.map((item) => item.id)), `order "${found.id}"`);
  requested.forEach((entry, index) => {
    const item = found.items.find((candidate) => candidate.id === entry.item_id.toLowerCase());
    if (item && entry.quantity > item.quantity)
      problems.push({ field: `items[${index}].quantity`, message: `is more than the item's ${item.quantity} units` });
  });
  if (problems.length > 0) throw invalidInput(problems);
  // Ids of the split-off items; an item shipped whole keeps its own.
  const splitIds = requested.map(() => uuidv7()).sort();
  const statuses: OrderStatus[] = ['OPEN', 'PARTIALLY_SHIPPED'];
  const { order, result } = await changeOrder(
    db,
    principal,
    found.id,
    idempotency,
    statuses,
    'order_id',
    async (tx, order) => {
      const items = requested.map((entry, index) => {
        const item = order.items.find((candidate) => candidate.id === entry.item_id.toLowerCase())!;
        if (item.state !== 'ALLOCATED') {
          throw invalidState(
            `is ${item.state}; createShipment needs an item that is ALLOCATED`,
            `items[${index}].item_id`,
          );
        }
        if (entry.quantity > item.quantity) {
          throw invalidState(
            `holds ${item.quantity} units now, fewer than ${entry.quantity}`,
            `items[${index}].quantity`,
          );
        }
        return { item, quantity: entry.quantity };
      });
      await stock.ship(
        tx,
        tenantId,
        { orderItemIds: items.map(({ item }) => item.id) },
        orderChange(principal, 'ALLOCATION', order.id),
        new Map(items.map(({ item, quantity }) => [item.id, { productId: item.productId, quantity }])),
      );
      const ids: string[] = [];
      for (const [index, { item, quantity }] of items.entries()) {
        if (quantity === item.quantity) {
          await repository.setItemStates(tx, tenantId, [item.id], 'SHIPPED', { shipped: true });
          ids.push(item.id);
        } else {
          await repository.splitShippedItem(tx, tenantId, item.id, splitIds[index]!, quantity);
          ids.push(splitIds[index]!);
        }
      }
      const [current] = await repository.findOrders(tx, tenantId, [order.id]);
      const waiting = current!.items.some((item) => item.state === 'ALLOCATED' || item.state === 'BACKORDERED');
      await repository.setOrderStatus(tx, tenantId, order.id, waiting ? 'PARTIALLY_SHIPPED' : 'SHIPPED');
      if (order.money !== null)
        await announceShipped(tx, tenantId, order.id, waiting ? 'PARTIALLY_SHIPPED' : 'SHIPPED');
      return ids;
    },
  );
  return { order, shippedItemIds: result };
}

/**
 * Cancels an order. Unshipped items release what they hold (committed units become available;
 * units marked unavailable stay unavailable) and are not restockable, since they never left;
 * shipped items of a shipped order become restockable. An order with money has its payment voided
 * or refunded by `moneySteps` in the same transaction.
 */
export async function cancelOrder(
  db: Db,
  principal: Principal,
  id: string,
  idempotency?: Idempotency,
  moneySteps?: OrderMoneySteps | null,
) {
  const { tenantId } = principal;
  const statuses: OrderStatus[] = ['OPEN', 'PARTIALLY_SHIPPED', 'SHIPPED'];
  const { order } = await changeOrder(db, principal, id, idempotency, statuses, 'id', async (tx, order) => {
    const open = order.items.filter((item) =>
      ['ALLOCATED', 'BACKORDERED', 'DEALLOCATED', 'MISSING', 'UNAVAILABLE'].includes(item.state),
    );
    const shipped = order.items.filter((item) => item.state === 'SHIPPED');
    const holders = { orderItemIds: open.map((item) => item.id) };
    await stock.release(tx, tenantId, holders, orderChange(principal, 'ALLOCATION', order.id));
    await repository.setItemStates(
      tx,
      tenantId,
      [...open, ...shipped].map((item) => item.id),
      'CANCELLED',
    );
    await repository.setOrderStatus(tx, tenantId, order.id, 'CANCELLED');
    if (order.money !== null && moneySteps) await moneySteps.canceled(tx, tenantId, order);
  });
  return order;
}
