/**
 * Operations on some items of an order: returns, deallocation, restock at a location, and the
 * picking corrections (missing, unavailable, available again). Each runs under the order's locks,
 * checks the input and the items' states, and changes the items' stock through one stock verb.
 */
import { writeTransaction, type Db, type Tx } from '../../kernel/db';
import { AppError, invalidState, type FieldProblem } from '../../kernel/errors';
import { runIdempotent, type Idempotency } from '../../kernel/idempotency';
import { isUuid } from '../../kernel/ids';
import { invalidInput } from '../../kernel/validation';
import type { Principal } from '../../kernel/principal';
import * as catalog from '../catalog';
import * as stock from '../stock';
import { itemReferenceProblems, type StockMutationSource } from '../stock';
import { loadOrder, lockOrder, orderChange } from './order-changes';
import * as repository from './orders.repository';
import type { OrderItemRecord, OrderItemState, OrderRecord, OrderStatus } from './orders.repository';
import type { OrderItemReference } from './orders.schemas';

interface Location {
  warehouseId: string;
  positionId: string | null;
}

/** What one order-item operation does to the items it names. */
export interface ItemOperation {
  /** Mutation name, for messages. */
  name: string;
  source: StockMutationSource;
  /** States an item must be in; others are INVALID_STATE naming the item. */
  from: OrderItemState[];
  /** Order statuses the operation accepts. */
  orderStatuses: OrderStatus[];
  to: OrderItemState;
  /** Whether each item needs a `location_id`, and whether it must be in the order's own warehouse. */
  location?: 'ANY_WAREHOUSE' | 'ORDER_WAREHOUSE';
  /** Changes the items' stock (the items and their locations in input order). */
  apply(
    tx: Tx,
    tenantId: string,
    items: OrderItemRecord[],
    locations: Location[],
    change: stock.StockChange,
  ): Promise<void>;
}

const holders = (items: OrderItemRecord[]) => ({ orderItemIds: items.map((item) => item.id) });

/** The operations, by mutation name. */
export const ITEM_OPERATIONS = {
  /** Records shipped items as returned: they become restockable. */
  returnOrderItems: {
    name: 'returnOrderItems',
    source: 'RESTOCK',
    from: ['SHIPPED'],
    orderStatuses: ['SHIPPED', 'PARTIALLY_SHIPPED'],
    to: 'RETURNED',
    apply: async () => {},
  },
  /** Releases the commitment of items on an open, unshipped order: their units become available where they are. */
  deallocateOrderItems: {
    name: 'deallocateOrderItems',
    source: 'ALLOCATION',
    from: ['ALLOCATED', 'BACKORDERED'],
    orderStatuses: ['OPEN', 'PARTIALLY_SHIPPED'],
    to: 'DEALLOCATED',
    apply: (tx, tenantId, items, _locations, change) => stock.release(tx, tenantId, holders(items), change),
  },
  /** Puts returned or cancelled-after-shipping items back on stock at a chosen location (RESTOCK). */
  restockOrderItems: {
    name: 'restockOrderItems',
    source: 'RESTOCK',
    from: ['RETURNED', 'CANCELLED'],
    orderStatuses: ['SHIPPED', 'PARTIALLY_SHIPPED', 'CANCELLED'],
    to: 'RESTOCKED',
    location: 'ANY_WAREHOUSE',
    apply: async (tx, tenantId, items, locations, change) => {
      for (const item of items) {
        if (item.shippedAt === null) {
          throw invalidState(`item "${item.id}" was cancelled before it shipped: its units never left stock`, 'items');
        }
      }
      const arrivals = items.map((item, index) => ({
        productId: item.productId,
        ...locations[index]!,
        quantity: item.quantity,
        field: `items[${index}].location_id`,
      }));
      await stock.receive(tx, tenantId, arrivals, change);
    },
  },
  /** The picker cannot find the items: they leave the order and their units leave the inventory (CORRECTION). */
  markItemsAsMissing: {
    name: 'markItemsAsMissing',
    source: 'CORRECTION',
    from: ['ALLOCATED'],
    orderStatuses: ['OPEN', 'PARTIALLY_SHIPPED'],
    to: 'MISSING',
    apply: (tx, tenantId, items, _locations, change) => stock.writeOff(tx, tenantId, holders(items), change),
  },
  /** The items' units exist but cannot be sold: they stay on hand as UNAVAILABLE, tied to the item (CORRECTION). */
  markItemsAsUnavailable: {
    name: 'markItemsAsUnavailable',
    source: 'CORRECTION',
    from: ['ALLOCATED'],
    orderStatuses: ['OPEN', 'PARTIALLY_SHIPPED'],
    to: 'UNAVAILABLE',
    apply: (tx, tenantId, items, _locations, change) =>
      stock.move(
        tx,
        tenantId,
        holders(items),
        (allocation) => ({ state: 'UNAVAILABLE', positionId: allocation.positionId }),
        change,
        { keepHolder: true },
      ),
  },
  /** Unavailable items turned up at `location_id` (of the order's warehouse): their units become available there. */
  markItemsAsAvailable: {
    name: 'markItemsAsAvailable',
    source: 'CORRECTION',
    from: ['UNAVAILABLE'],
    orderStatuses: ['OPEN', 'PARTIALLY_SHIPPED'],
    to: 'DEALLOCATED',
    location: 'ORDER_WAREHOUSE',
    apply: (tx, tenantId, items, locations, change) =>
      stock.move(
        tx,
        tenantId,
        holders(items),
        (allocation) => {
          const index = items.findIndex((item) => item.id === allocation.orderItemId);
          return { state: 'AVAILABLE', positionId: locations[index]!.positionId, field: `items[${index}].location_id` };
        },
        change,
      ),
  },
} satisfies Record<string, ItemOperation>;

/**
 * Runs an operation on some items of one order: checks the input (VALIDATION_ERROR naming the
 * field), takes the order's locks, checks the states (INVALID_STATE naming the item) and applies
 * the operation to the items, all or none. Returns the order as it is after.
 */
export async function runItemOperation(
  db: Db,
  principal: Principal,
  orderId: string,
  references: OrderItemReference[],
  idempotency: Idempotency | undefined,
  operation: ItemOperation,
  /** Runs last in the operation's transaction, with the order as it was locked. */
  after?: (tx: Tx, order: OrderRecord) => Promise<void>,
): Promise<OrderRecord> {
  const { tenantId } = principal;
  const order = await loadOrder(db, tenantId, orderId);
  const problems = itemReferenceProblems(
    references,
    new Set(order.items.map((item) => item.id)),
    `order "${order.id}"`,
  );
  if (problems.length > 0) throw invalidInput(problems);
  const locations = operation.location
    ? await resolveLocations(db, tenantId, order, references, operation.location === 'ORDER_WAREHOUSE')
    : [];
  await writeTransaction(db, (tx) =>
    runIdempotent(tx, tenantId, idempotency, async () => {
      const byId = new Map(order.items.map((item) => [item.id, item]));
      const current = await lockOrder(
        tx,
        tenantId,
        order,
        locations.map((location, index) => ({
          productId: byId.get(references[index]!.item_id.toLowerCase())!.productId,
          warehouseId: location.warehouseId,
        })),
      );
      if (!operation.orderStatuses.includes(current.status)) {
        const rule =
          operation.name === 'restockOrderItems' && current.status === 'OPEN'
            ? ': items on an open, unshipped order cannot be restocked'
            : '';
        throw new AppError(
          'INVALID_STATE',
          `${operation.name} needs an order that is ${operation.orderStatuses.join(' or ')}; order "${order.id}" ` +
            `is ${current.status}${rule}`,
          { details: [{ field: 'order_id', message: `order is ${current.status}` }] },
        );
      }
      const currentItems = new Map(current.items.map((item) => [item.id, item]));
      const items = references.map((reference, index) => {
        const item = currentItems.get(reference.item_id.toLowerCase())!;
        if (!operation.from.includes(item.state)) {
          throw invalidState(
            `is ${item.state}; ${operation.name} needs an item that is ${operation.from.join(' or ')}`,
            `items[${index}].item_id`,
          );
        }
        return item;
      });
      await operation.apply(tx, tenantId, items, locations, orderChange(principal, operation.source, order.id));
      await repository.setItemStates(
        tx,
        tenantId,
        items.map((item) => item.id),
        operation.to,
      );
      if (after) await after(tx, current);
      return order.id;
    }),
  );
  return loadOrder(db, tenantId, order.id);
}

/**
 * `location_id`s → warehouse and position: a warehouse of the order's business (the order's own one when
 * `sameWarehouse`) or a position in it.
 */
async function resolveLocations(
  db: Db,
  tenantId: string,
  order: OrderRecord,
  references: OrderItemReference[],
  sameWarehouse: boolean,
): Promise<Location[]> {
  const ids = [
    ...new Set(
      references
        .map((r) => r.location_id!)
        .filter(isUuid)
        .map((id) => id.toLowerCase()),
    ),
  ];
  const [warehouses, positions] = await Promise.all([
    catalog.warehousesByIds(db, tenantId, ids),
    catalog.positionsByIds(db, tenantId, ids),
  ]);
  const positionWarehouses = await catalog.warehousesByIds(
    db,
    tenantId,
    positions.map((p) => p.warehouseId),
  );
  const problems: FieldProblem[] = [];
  const result = references.map((reference, index) => {
    const id = reference.location_id!.toLowerCase();
    const warehouse = warehouses.find((w) => w.id === id);
    const position = positions.find((p) => p.id === id);
    const owner = warehouse ?? positionWarehouses.find((w) => w.id === position?.warehouseId);
    const field = `items[${index}].location_id`;
    if (!owner)
      problems.push({
        field,
        message: `"${reference.location_id}" is neither a warehouse nor a position of the tenant`,
      });
    else if (sameWarehouse && owner.id !== order.warehouseId)
      problems.push({ field, message: `must be in the order's warehouse "${order.warehouseId}"` });
    else if (owner.businessId !== order.businessId)
      problems.push({ field, message: `must be in a warehouse of business "${order.businessId}"` });
    return { warehouseId: owner?.id ?? '', positionId: position?.id ?? null };
  });
  if (problems.length > 0) throw invalidInput(problems);
  return result;
}
