import type { CursorCodec } from '../../kernel/cursor';
import type { Db, Tx } from '../../kernel/db';
import type { Idempotency } from '../../kernel/idempotency';
import { sqlKeysetSource } from '../../kernel/keyset';
import { paginate, type PageArguments } from '../../kernel/pagination';
import { requireScope } from '../../kernel/scopes';
import type { Principal } from '../../kernel/principal';
import { loadOrder } from './order-changes';
import { convertReservation, createChannelOrder, createOrderAt } from './order-creation';
import { ITEM_OPERATIONS, runItemOperation } from './order-items';
import type { OrderMoneySteps } from './order-money-steps';
import { cancelOrder, createShipment, shipOrder } from './order-shipments';
import { badRequest } from '../../kernel/errors';
import * as repository from './orders.repository';
import type { OrderRecord, OrderStatus } from './orders.repository';
import type { CreateOrderInput, OrderItemReference } from './orders.schemas';

/**
 * Orders, minimal: allocation on creation, shipping, cancelling, returns, restock and picking
 * corrections. Each write is one of the verbs in `order-creation`, `order-shipments` and
 * `order-items`; this class checks the scope and hands over.
 */
export class OrderService {
  private moneySteps: OrderMoneySteps | null = null;

  constructor(
    private readonly db: Db,
    private readonly cursors: CursorCodec,
  ) {}

  /** What canceling and returning do to the money of an order (the payments module registers them). */
  setMoneySteps(steps: OrderMoneySteps) {
    this.moneySteps = steps;
  }

  /**
   * Commits the items' units to a new order (COMMITTED, source ALLOCATION), all or none: at a
   * warehouse (backorders as item preferences allow), through a sales channel's warehouses, or
   * from a reservation's units.
   */
  async createOrder(principal: Principal, input: CreateOrderInput, idempotency?: Idempotency): Promise<OrderRecord> {
    requireScope(principal, 'orders:write');
    const id =
      input.reservation_id != null
        ? await convertReservation(this.db, principal, input.reservation_id, input, idempotency)
        : input.warehouse_id == null
          ? await createChannelOrder(this.db, principal, input, idempotency)
          : await createOrderAt(this.db, principal, input, idempotency);
    return loadOrder(this.db, principal.tenantId, id);
  }

  /** Ships every ALLOCATED item; BACKORDERED items wait (PARTIALLY_SHIPPED). */
  shipOrder(principal: Principal, id: string, idempotency?: Idempotency) {
    requireScope(principal, 'orders:write');
    return shipOrder(this.db, principal, id, idempotency);
  }

  /** Ships some units of ALLOCATED items, all or none; an item shipped in part is split. */
  createShipment(
    principal: Principal,
    orderId: string,
    requested: { item_id: string; quantity: number }[],
    idempotency?: Idempotency,
  ) {
    requireScope(principal, 'orders:write');
    return createShipment(this.db, principal, orderId, requested, idempotency);
  }

  /** Cancels an order: unshipped items release what they hold, shipped ones become restockable. */
  cancelOrder(principal: Principal, id: string, idempotency?: Idempotency) {
    requireScope(principal, 'orders:write');
    return cancelOrder(this.db, principal, id, idempotency, this.moneySteps);
  }

  /**
   * Records shipped items as returned: they become restockable. With `refundAmount` (an order with
   * money) that much of its payment is refunded in the same transaction.
   */
  returnOrderItems(
    principal: Principal,
    orderId: string,
    items: OrderItemReference[],
    idempotency?: Idempotency,
    refundAmount?: number | null,
  ) {
    requireScope(principal, 'orders:write');
    const steps = this.moneySteps;
    const refund =
      refundAmount == null
        ? undefined
        : async (tx: Tx, order: OrderRecord) => {
            if (order.money === null || steps === null)
              throw badRequest('this order carries no money to refund', [
                { field: 'refund_amount', message: 'is only for orders with money' },
              ]);
            await steps.refundReturn(tx, principal.tenantId, order, refundAmount);
          };
    return runItemOperation(this.db, principal, orderId, items, idempotency, ITEM_OPERATIONS.returnOrderItems, refund);
  }

  /** Releases the commitment of items on an open, unshipped order: their units become available where they are. */
  deallocateOrderItems(principal: Principal, orderId: string, items: OrderItemReference[], idempotency?: Idempotency) {
    return this.itemOperation(principal, orderId, items, idempotency, ITEM_OPERATIONS.deallocateOrderItems);
  }

  /** Puts returned or cancelled-after-shipping items back on stock at a chosen location (RESTOCK). */
  restockOrderItems(principal: Principal, orderId: string, items: OrderItemReference[], idempotency?: Idempotency) {
    return this.itemOperation(principal, orderId, items, idempotency, ITEM_OPERATIONS.restockOrderItems);
  }

  /** The picker cannot find the items: they leave the order and their units leave the inventory (CORRECTION). */
  markItemsAsMissing(principal: Principal, orderId: string, items: OrderItemReference[], idempotency?: Idempotency) {
    return this.itemOperation(principal, orderId, items, idempotency, ITEM_OPERATIONS.markItemsAsMissing);
  }

  /** The items' units exist but cannot be sold: they stay on hand as UNAVAILABLE, still tied to the item. */
  markItemsAsUnavailable(
    principal: Principal,
    orderId: string,
    items: OrderItemReference[],
    idempotency?: Idempotency,
  ) {
    return this.itemOperation(principal, orderId, items, idempotency, ITEM_OPERATIONS.markItemsAsUnavailable);
  }

  /** Unavailable items turned up at `location_id` (of the order's warehouse): their units become available there. */
  markItemsAsAvailable(principal: Principal, orderId: string, items: OrderItemReference[], idempotency?: Idempotency) {
    return this.itemOperation(principal, orderId, items, idempotency, ITEM_OPERATIONS.markItemsAsAvailable);
  }

  private itemOperation(
    principal: Principal,
    orderId: string,
    items: OrderItemReference[],
    idempotency: Idempotency | undefined,
    operation: (typeof ITEM_OPERATIONS)[keyof typeof ITEM_OPERATIONS],
  ) {
    requireScope(principal, 'orders:write');
    return runItemOperation(this.db, principal, orderId, items, idempotency, operation);
  }

  /** Where the units of these order items are, per item, for the GraphQL loaders (the order was read already). */
  async allocationsOfItems(tenantId: string, itemIds: readonly string[]) {
    const rows = await repository.allocationsOfItems(this.db, tenantId, itemIds);
    return itemIds.map((id) => rows.filter((row) => row.orderItemId === id));
  }

  async order(principal: Principal, id: string) {
    requireScope(principal, 'orders:read');
    return loadOrder(this.db, principal.tenantId, id);
  }

  async orders(principal: Principal, status: OrderStatus | null | undefined, page: PageArguments) {
    requireScope(principal, 'orders:read');
    const { tenantId } = principal;
    return paginate<OrderRecord, string>(
      this.cursors,
      `orders:${tenantId}:${status ?? ''}`,
      page,
      sqlKeysetSource(this.db, repository.orderList(tenantId, status ?? undefined)),
      { after: 'after', before: 'before' },
    );
  }

  /** Orders by id for the GraphQL loaders (references of stock mutations). */
  async ordersByIds(tenantId: string, ids: readonly string[]) {
    return repository.findOrders(this.db, tenantId, ids);
  }
}
