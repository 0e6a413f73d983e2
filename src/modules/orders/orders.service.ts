import * as ledger from '../stock/repository/ledger';
import * as locks from '../stock/repository/locks';
import * as lines from '../stock/repository/lines';
import type { CursorCodec } from '../../kernel/cursor';
import { writeTransaction, type Db, type Tx } from '../../kernel/db';
import { AppError, invalidState, notFound, type FieldProblem } from '../../kernel/errors';
import { runIdempotent, type Idempotency } from '../../kernel/idempotency';
import { isUuid, uuidv7 } from '../../kernel/ids';
import { sqlKeysetSource } from '../../kernel/keyset';
import { paginate, type PageArguments } from '../../kernel/pagination';
import { requireScope, type Principal } from '../auth/scopes';
import * as catalog from '../catalog/catalog.repository';
import type { LineChangeRecord } from '../stock/repository/ledger';
import type { StockMutationSource } from '../stock/stock.types';
import { clientIdTaken, resolveAllocationTarget, resolveChannelTarget } from '../stock/allocation-target';
import { invalidInput } from '../../kernel/validation';
import * as allocations from '../stock/allocation';
import * as allocationRepository from '../stock/repository/allocations';
import * as preferenceRepository from '../preferences/preferences.repository';
import { allowsBackorder, checkSinglePosition } from '../preferences/preferences.service';
import * as repository from './orders.repository';
import { itemReferenceProblems } from '../stock/item-references';
import type { OrderItemRecord, OrderItemState, OrderRecord, OrderStatus } from './orders.repository';
import type { CreateOrderInput, OrderItemReference } from './orders.schemas';
import type { ItemInput } from '../stock/allocation.schemas';
import * as reservationRepository from '../reservations/reservations.repository';
import type { ReservationRecord } from '../reservations/reservations.repository';

/** What one order-item operation does to each item it names. */
interface ItemOperation {
  /** Mutation name, for messages. */
  name: string;
  source: StockMutationSource;
  /** States an item must be in; others are a CONFLICT naming the item. */
  from: OrderItemState[];
  /** Order statuses the operation accepts. */
  orderStatuses: OrderStatus[];
  to: OrderItemState;
  /** Whether each item needs a `location_id`. */
  needsLocation?: boolean;
  /** Moves the item's units; returns the ledger changes. */
  apply(
    tx: Tx,
    tenantId: string,
    item: OrderItemRecord,
    held: allocations.Allocation[],
    location: Location | null,
  ): Promise<LineChangeRecord[]>;
}

interface Location {
  warehouseId: string;
  positionId: string | null;
}

/** Whether an item may be backordered: its SKU's preference at the warehouse allows it now. */
const backorderPolicy = (preferences: preferenceRepository.ItemPreferenceRecord[]) => (request: allocations.Pair) =>
  allowsBackorder(preferences.find((p) => p.productId === request.productId && p.warehouseId === request.warehouseId));

/**
 * The items of an order converted from a reservation: the ones asked for, each a SKU the
 * reservation holds and, summed per SKU, no more units than it holds; all reserved items by default.
 */
function orderItemsOfReservation(reservation: ReservationRecord, asked: ItemInput[] | undefined) {
  const held = new Map<string, { productId: string; quantity: number }>();
  for (const item of reservation.items) {
    const entry = held.get(item.sku) ?? { productId: item.productId, quantity: 0 };
    held.set(item.sku, { ...entry, quantity: entry.quantity + Number(item.quantity) });
  }
  const wanted = asked ?? reservation.items.map((item) => ({ sku: item.sku, quantity: Number(item.quantity) }));
  const problems: FieldProblem[] = [];
  const total = new Map<string, number>();
  wanted.forEach((item, index) => {
    const reserved = held.get(item.sku);
    if (!reserved) {
      problems.push({
        field: `items[${index}].sku`,
        message: `"${item.sku}" is not held by reservation "${reservation.id}"`,
      });
      return;
    }
    total.set(item.sku, (total.get(item.sku) ?? 0) + item.quantity);
    if (total.get(item.sku)! > reserved.quantity) {
      problems.push({
        field: `items[${index}].quantity`,
        message: `asks for ${total.get(item.sku)} units of "${item.sku}"; the reservation holds ${reserved.quantity}`,
      });
    }
  });
  if (problems.length > 0) throw invalidInput(problems);
  // UUIDv7s of one millisecond are not ordered among themselves: sorted, items keep input order.
  const ids = wanted.map(() => uuidv7()).sort();
  return wanted.map((item, index) => ({
    id: ids[index]!,
    productId: held.get(item.sku)!.productId,
    sku: item.sku,
    quantity: item.quantity,
  }));
}

/** Orders, minimal: allocation on creation, shipping, cancelling, returns, restock and picking corrections. */
export class OrderService {
  constructor(
    private readonly db: Db,
    private readonly cursors: CursorCodec,
  ) {}

  /**
   * Commits the items' units to a new order (COMMITTED, source ALLOCATION), all or none; CONFLICT
   * when a SKU is short, unless its item preference allows backorders: then the items that do not
   * fit wait as BACKORDERED.
   */
  async createOrder(principal: Principal, input: CreateOrderInput, idempotency?: Idempotency): Promise<OrderRecord> {
    requireScope(principal, 'orders:write');
    if (input.reservation_id != null)
      return this.convertReservation(principal, input.reservation_id, input, idempotency);
    if (input.warehouse_id == null) return this.createChannelOrder(principal, input, idempotency);
    const { tenantId } = principal;
    const chosenId = input.id ?? undefined;
    const orderId = chosenId ?? uuidv7();
    // The input schema requires these without reservation_id.
    const target = await resolveAllocationTarget(this.db, tenantId, {
      business_id: input.business_id!,
      warehouse_id: input.warehouse_id!,
      channel_id: input.channel_id!,
      items: input.items!,
    });
    const itemIds = target.items.map(() => uuidv7()).sort();
    const items = target.items.map((item, index) => ({ ...item, id: itemIds[index]! }));
    const requests = items.map((item) => ({
      ...item,
      warehouseId: target.warehouseId,
      holder: { orderItemId: item.id },
    }));
    if (!idempotency) {
      const preferences = await preferenceRepository.preferencesOfPairs(this.db, tenantId, requests);
      await allocations.refuseWhenShort(this.db, tenantId, requests, backorderPolicy(preferences));
    }
    const id = await allocations.withBoundedContention(tenantId, requests, () =>
      writeTransaction(this.db, (tx) =>
        runIdempotent(tx, tenantId, idempotency, async () => {
          if (chosenId && (await repository.orderExists(tx, tenantId, orderId))) throw clientIdTaken('order', orderId);
          // Rows nobody else can see yet go in before the stock locks: the locked part stays short.
          await repository.insertOrder(tx, tenantId, {
            id: orderId,
            businessId: target.businessId,
            warehouseId: target.warehouseId,
            channelId: target.channelId,
            items,
          });
          const preferences = await preferenceRepository.preferencesOfPairs(tx, tenantId, requests);
          await allocations.lockForAllocation(tx, tenantId, requests);
          const { changes, backordered } = await allocations.allocate(
            tx,
            tenantId,
            requests,
            'COMMITTED',
            backorderPolicy(preferences),
          );
          await repository.setItemStates(
            tx,
            tenantId,
            [...backordered].map((request) => request.holder.orderItemId!),
            'BACKORDERED',
          );
          await ledger.recordMutations(tx, tenantId, this.context(principal, 'ALLOCATION', orderId), changes);
          return orderId;
        }),
      ),
    );
    return this.load(tenantId, id);
  }

  /**
   * An order through a sales channel without a warehouse: each item's units are taken from the
   * channel's warehouses by the allocation strategy (an item may be split over several), all or
   * none, under the stock locks of every warehouse considered. The order's `warehouse` is the one
   * its first units come from; each item's `allocations` say where its units are. No backorders:
   * a shortage over all the warehouses is OUT_OF_STOCK.
   */
  private async createChannelOrder(
    principal: Principal,
    input: CreateOrderInput,
    idempotency?: Idempotency,
  ): Promise<OrderRecord> {
    const { tenantId } = principal;
    // The input schema requires these without reservation_id.
    const target = await resolveChannelTarget(this.db, tenantId, {
      business_id: input.business_id!,
      channel_id: input.channel_id!,
      items: input.items!,
      allocation_strategy: input.allocation_strategy,
    });
    const orderId = input.id ?? uuidv7();
    const itemIds = target.items.map(() => uuidv7()).sort();
    const items = target.items.map((item, index) => ({ ...item, id: itemIds[index]! }));
    const pairs = items.flatMap((item) => target.warehouseIds.map((warehouseId) => ({ ...item, warehouseId })));
    const id = await allocations.withBoundedContention(tenantId, pairs, () =>
      writeTransaction(this.db, (tx) =>
        runIdempotent(tx, tenantId, idempotency, async () => {
          if (input.id && (await repository.orderExists(tx, tenantId, orderId))) throw clientIdTaken('order', orderId);
          const parts = await allocations.planAcrossWarehouses(tx, tenantId, target);
          await repository.insertOrder(tx, tenantId, {
            id: orderId,
            businessId: target.businessId,
            warehouseId: parts[0]!.warehouseId,
            channelId: target.channelId,
            items,
          });
          const requests = parts.map((part) => ({
            ...items[part.itemIndex]!,
            warehouseId: part.warehouseId,
            quantity: part.quantity,
            holder: { orderItemId: items[part.itemIndex]!.id },
          }));
          const { changes } = await allocations.allocate(tx, tenantId, requests, 'COMMITTED');
          await ledger.recordMutations(tx, tenantId, this.context(principal, 'ALLOCATION', orderId), changes);
          return orderId;
        }),
      ),
    );
    return this.load(tenantId, id);
  }

  /**
   * Turns an ACTIVE reservation into an order in one transaction under its stock locks: the units
   * of the ordered items go from RESERVED to COMMITTED without ever being available, the rest of
   * the reservation is released (AVAILABLE), and the reservation becomes CONVERTED. Each ledger
   * entry names both the order and the reservation.
   */
  private async convertReservation(
    principal: Principal,
    reservationId: string,
    input: CreateOrderInput,
    idempotency?: Idempotency,
  ): Promise<OrderRecord> {
    const { tenantId } = principal;
    const [reservation] = isUuid(reservationId)
      ? await reservationRepository.findReservations(this.db, tenantId, [reservationId.toLowerCase()])
      : [];
    if (!reservation) throw notFound(`no reservation with id "${reservationId}"`);
    const status =
      reservation.status === 'ACTIVE' && reservation.expiresAt.getTime() <= Date.now() ? 'EXPIRED' : reservation.status;
    const items = orderItemsOfReservation(reservation, input.items ?? undefined);
    const orderId = input.id ?? uuidv7();
    const id = await writeTransaction(this.db, (tx) =>
      runIdempotent(tx, tenantId, idempotency, async () => {
        // Not before: a request replayed with its idempotency key finds the reservation CONVERTED.
        if (status !== 'ACTIVE') throw invalidState(`reservation "${reservation.id}" is ${status} and holds no stock`);
        if (input.id && (await repository.orderExists(tx, tenantId, orderId))) throw clientIdTaken('order', orderId);
        await repository.insertOrder(tx, tenantId, {
          id: orderId,
          businessId: reservation.businessId,
          warehouseId: reservation.warehouseId,
          channelId: reservation.channelId,
          items,
        });
        const holder = { reservationIds: [reservation.id] };
        await locks.lockStockLevels(tx, tenantId, await allocationRepository.pairsOf(tx, tenantId, holder));
        if (!(await reservationRepository.convertActiveReservation(tx, tenantId, reservation.id, orderId))) {
          throw invalidState(`reservation "${reservation.id}" expired or ended meanwhile: its units may be sold`);
        }
        const left = new Map(items.map((item) => [item.id, item.quantity]));
        const committed: allocations.Allocation[] = [];
        const changes: LineChangeRecord[] = [];
        for (const allocation of await allocationRepository.allocationsOf(tx, tenantId, holder)) {
          let rest = allocation.quantity;
          for (const item of items.filter((candidate) => candidate.productId === allocation.productId)) {
            const take = Math.min(rest, left.get(item.id)!);
            if (take === 0) continue;
            left.set(item.id, left.get(item.id)! - take);
            rest -= take;
            const at = { state: 'COMMITTED' as const, positionId: allocation.positionId };
            changes.push(await allocations.moveAllocation(tx, tenantId, { ...allocation, quantity: take }, at));
            committed.push({
              ...allocation,
              ...at,
              id: uuidv7(),
              reservationId: null,
              orderItemId: item.id,
              quantity: take,
            });
          }
          if (rest > 0) {
            const at = { state: 'AVAILABLE' as const, positionId: allocation.positionId };
            changes.push(await allocations.moveAllocation(tx, tenantId, { ...allocation, quantity: rest }, at));
          }
        }
        if ([...left.values()].some((quantity) => quantity > 0)) {
          throw new Error(`reservation ${reservation.id} holds fewer units than its items`);
        }
        await allocationRepository.insertAllocations(tx, tenantId, committed);
        await ledger.recordMutations(
          tx,
          tenantId,
          {
            source: 'ALLOCATION',
            actor: principal.actor,
            references: [
              { type: 'Order', id: orderId },
              { type: 'Reservation', id: reservation.id },
            ],
          },
          changes,
        );
        return orderId;
      }),
    );
    return this.load(tenantId, id);
  }

  /**
   * Ships every ALLOCATED item: its units leave the warehouse (`quantity` and `quantity_committed`
   * drop). BACKORDERED items wait: the order is PARTIALLY_SHIPPED until they ship too.
   */
  async shipOrder(principal: Principal, id: string, idempotency?: Idempotency) {
    requireScope(principal, 'orders:write');
    return this.changeOrder(principal, id, idempotency, ['OPEN', 'PARTIALLY_SHIPPED'], async (tx, order) => {
      const shipped = order.items.filter((item) => item.state === 'ALLOCATED');
      if (shipped.length === 0)
        throw new AppError('INVALID_STATE', `order "${order.id}" has no allocated items to ship`);
      const held = await allocationRepository.allocationsOf(tx, principal.tenantId, {
        orderItemIds: shipped.map((item) => item.id),
      });
      const changes: LineChangeRecord[] = [];
      for (const allocation of held)
        changes.push(await allocations.moveAllocation(tx, principal.tenantId, allocation, null));
      await repository.setItemStates(
        tx,
        principal.tenantId,
        shipped.map((item) => item.id),
        'SHIPPED',
        { shipped: true },
      );
      const waiting = order.items.some((item) => item.state === 'BACKORDERED');
      await repository.setOrderStatus(tx, principal.tenantId, order.id, waiting ? 'PARTIALLY_SHIPPED' : 'SHIPPED');
      await ledger.recordMutations(tx, principal.tenantId, this.context(principal, 'ALLOCATION', order.id), changes);
    });
  }

  /**
   * Ships some units of ALLOCATED items, all or none: their units leave the warehouse. An item
   * shipped in part is split, so that the shipped units are an item of their own that can be
   * returned and restocked. Returns the order and the items this shipment shipped.
   */
  async createShipment(
    principal: Principal,
    orderId: string,
    requested: { item_id: string; quantity: number }[],
    idempotency?: Idempotency,
  ): Promise<{ order: OrderRecord; shippedItemIds: string[] }> {
    requireScope(principal, 'orders:write');
    const { tenantId } = principal;
    const found = await this.load(tenantId, orderId);
    const problems = itemReferenceProblems(
      requested,
      new Set(found.items.map((item) => item.id)),
      `order "${found.id}"`,
    );
    requested.forEach((entry, index) => {
      const item = found.items.find((candidate) => candidate.id === entry.item_id.toLowerCase());
      if (item && entry.quantity > item.quantity)
        problems.push({ field: `items[${index}].quantity`, message: `is more than the item's ${item.quantity} units` });
    });
    if (problems.length > 0) throw invalidInput(problems);
    // Ids of the split-off items; an item shipped whole keeps its own.
    const shippedItemIds = requested.map(() => uuidv7()).sort();
    const statuses: OrderStatus[] = ['OPEN', 'PARTIALLY_SHIPPED'];
    const { order, result } = await this.changeOrderWith(
      principal,
      found.id,
      idempotency,
      statuses,
      'order_id',
      async (tx, order) => {
        const changes: LineChangeRecord[] = [];
        const ids: string[] = [];
        for (const [index, entry] of requested.entries()) {
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
          let left = entry.quantity;
          for (const allocation of await allocationRepository.allocationsOf(tx, tenantId, {
            orderItemIds: [item.id],
          })) {
            if (left === 0) break;
            const take = Math.min(left, allocation.quantity);
            left -= take;
            changes.push(await allocations.moveAllocation(tx, tenantId, { ...allocation, quantity: take }, null));
            // The units the item keeps stay committed to it.
            if (take < allocation.quantity) {
              await allocationRepository.insertAllocations(tx, tenantId, [
                { ...allocation, id: uuidv7(), quantity: allocation.quantity - take },
              ]);
            }
          }
          if (entry.quantity === item.quantity) {
            await repository.setItemStates(tx, tenantId, [item.id], 'SHIPPED', { shipped: true });
            ids.push(item.id);
          } else {
            await repository.splitShippedItem(tx, tenantId, item.id, shippedItemIds[index]!, entry.quantity);
            ids.push(shippedItemIds[index]!);
          }
        }
        const [current] = await repository.findOrders(tx, tenantId, [order.id]);
        const waiting = current!.items.some((item) => item.state === 'ALLOCATED' || item.state === 'BACKORDERED');
        await repository.setOrderStatus(tx, tenantId, order.id, waiting ? 'PARTIALLY_SHIPPED' : 'SHIPPED');
        await ledger.recordMutations(tx, tenantId, this.context(principal, 'ALLOCATION', order.id), changes);
        return ids;
      },
    );
    return { order, shippedItemIds: result };
  }

  /**
   * Cancels an order. Unshipped items release what they hold (committed units become available;
   * units marked unavailable stay unavailable) and are not restockable, since they never left;
   * shipped items of a shipped order become restockable.
   */
  async cancelOrder(principal: Principal, id: string, idempotency?: Idempotency) {
    requireScope(principal, 'orders:write');
    return this.changeOrder(principal, id, idempotency, ['OPEN', 'PARTIALLY_SHIPPED', 'SHIPPED'], async (tx, order) => {
      const open = order.items.filter((item) =>
        ['ALLOCATED', 'BACKORDERED', 'DEALLOCATED', 'MISSING', 'UNAVAILABLE'].includes(item.state),
      );
      const shipped = order.items.filter((item) => item.state === 'SHIPPED');
      const held = await allocationRepository.allocationsOf(tx, principal.tenantId, {
        orderItemIds: open.map((item) => item.id),
      });
      const changes: LineChangeRecord[] = [];
      for (const allocation of held) {
        if (allocation.state === 'COMMITTED') {
          changes.push(
            await allocations.moveAllocation(tx, principal.tenantId, allocation, {
              state: 'AVAILABLE',
              positionId: allocation.positionId,
            }),
          );
        } else {
          await allocationRepository.deleteAllocation(tx, allocation.id);
        }
      }
      await repository.setItemStates(
        tx,
        principal.tenantId,
        [...open, ...shipped].map((item) => item.id),
        'CANCELLED',
      );
      await repository.setOrderStatus(tx, principal.tenantId, order.id, 'CANCELLED');
      await ledger.recordMutations(tx, principal.tenantId, this.context(principal, 'ALLOCATION', order.id), changes);
    });
  }

  /** Records shipped items as returned: they become restockable. */
  returnOrderItems(principal: Principal, orderId: string, items: OrderItemReference[], idempotency?: Idempotency) {
    return this.itemOperation(principal, orderId, items, idempotency, {
      name: 'returnOrderItems',
      source: 'RESTOCK',
      from: ['SHIPPED'],
      orderStatuses: ['SHIPPED', 'PARTIALLY_SHIPPED'],
      to: 'RETURNED',
      apply: async () => [],
    });
  }

  /** Releases the commitment of items on an open, unshipped order: their units become available where they are. */
  deallocateOrderItems(principal: Principal, orderId: string, items: OrderItemReference[], idempotency?: Idempotency) {
    return this.itemOperation(principal, orderId, items, idempotency, {
      name: 'deallocateOrderItems',
      source: 'ALLOCATION',
      from: ['ALLOCATED', 'BACKORDERED'],
      orderStatuses: ['OPEN', 'PARTIALLY_SHIPPED'],
      to: 'DEALLOCATED',
      apply: (tx, tenantId, _item, held) =>
        this.moveAll(tx, tenantId, held, (a) => ({ state: 'AVAILABLE', positionId: a.positionId })),
    });
  }

  /** Puts returned or cancelled-after-shipping items back on stock at a chosen location (RESTOCK). */
  restockOrderItems(principal: Principal, orderId: string, items: OrderItemReference[], idempotency?: Idempotency) {
    return this.itemOperation(principal, orderId, items, idempotency, {
      name: 'restockOrderItems',
      source: 'RESTOCK',
      from: ['RETURNED', 'CANCELLED'],
      orderStatuses: ['SHIPPED', 'PARTIALLY_SHIPPED', 'CANCELLED'],
      to: 'RESTOCKED',
      needsLocation: true,
      apply: async (tx, tenantId, item, _held, location) => {
        if (item.shippedAt === null) {
          throw invalidState(`item "${item.id}" was cancelled before it shipped: its units never left stock`, 'items');
        }
        return [
          await lines.putOnHand(tx, tenantId, {
            productId: item.productId,
            warehouseId: location!.warehouseId,
            positionId: location!.positionId,
            quantity: item.quantity,
          }),
        ];
      },
    });
  }

  /** The picker cannot find the items: they leave the order and their units leave the inventory (CORRECTION). */
  markItemsAsMissing(principal: Principal, orderId: string, items: OrderItemReference[], idempotency?: Idempotency) {
    return this.itemOperation(principal, orderId, items, idempotency, {
      name: 'markItemsAsMissing',
      source: 'CORRECTION',
      from: ['ALLOCATED'],
      orderStatuses: ['OPEN', 'PARTIALLY_SHIPPED'],
      to: 'MISSING',
      apply: (tx, tenantId, _item, held) => this.moveAll(tx, tenantId, held, () => null),
    });
  }

  /**
   * The items' units exist but cannot be sold: they stay on hand as UNAVAILABLE, still tied to the item (CORRECTION).
   */
  markItemsAsUnavailable(
    principal: Principal,
    orderId: string,
    items: OrderItemReference[],
    idempotency?: Idempotency,
  ) {
    return this.itemOperation(principal, orderId, items, idempotency, {
      name: 'markItemsAsUnavailable',
      source: 'CORRECTION',
      from: ['ALLOCATED'],
      orderStatuses: ['OPEN', 'PARTIALLY_SHIPPED'],
      to: 'UNAVAILABLE',
      apply: (tx, tenantId, _item, held) =>
        this.moveAll(tx, tenantId, held, (a) => ({ state: 'UNAVAILABLE', positionId: a.positionId }), true),
    });
  }

  /**
   * Unavailable items turned up at `location_id` (of the order's warehouse): their units become available there
   * (CORRECTION).
   */
  markItemsAsAvailable(principal: Principal, orderId: string, items: OrderItemReference[], idempotency?: Idempotency) {
    return this.itemOperation(principal, orderId, items, idempotency, {
      name: 'markItemsAsAvailable',
      source: 'CORRECTION',
      from: ['UNAVAILABLE'],
      orderStatuses: ['OPEN', 'PARTIALLY_SHIPPED'],
      to: 'DEALLOCATED',
      needsLocation: true,
      apply: (tx, tenantId, _item, held, location) =>
        this.moveAll(tx, tenantId, held, () => ({ state: 'AVAILABLE', positionId: location!.positionId })),
    });
  }

  private async moveAll(
    tx: Tx,
    tenantId: string,
    held: allocations.Allocation[],
    target: (
      allocation: allocations.Allocation,
    ) => { state: 'AVAILABLE' | 'UNAVAILABLE'; positionId: string | null } | null,
    keep = false,
  ) {
    const changes: LineChangeRecord[] = [];
    for (const allocation of held)
      changes.push(await allocations.moveAllocation(tx, tenantId, allocation, target(allocation), { keep }));
    return changes;
  }

  /**
   * Runs an operation on some items of one order: checks the input (VALIDATION_ERROR naming the
   * field), takes the stock locks of the items' SKUs, then the order's row lock, checks the states
   * (CONFLICT naming the item) and applies the operation to every item, all or none.
   */
  private async itemOperation(
    principal: Principal,
    orderId: string,
    references: OrderItemReference[],
    idempotency: Idempotency | undefined,
    operation: ItemOperation,
  ) {
    requireScope(principal, 'orders:write');
    const { tenantId } = principal;
    const order = await this.load(tenantId, orderId);
    const itemById = new Map(order.items.map((item) => [item.id, item]));
    const problems = itemReferenceProblems(references, new Set(itemById.keys()), `order "${order.id}"`);
    if (problems.length > 0) throw invalidInput(problems);
    const locations = operation.needsLocation
      ? await this.resolveLocations(tenantId, order, references, operation.name === 'markItemsAsAvailable')
      : [];

    const pairs = [
      ...references.map((r) => ({
        productId: itemById.get(r.item_id.toLowerCase())!.productId,
        warehouseId: order.warehouseId,
      })),
      ...locations.map((location, index) => ({
        productId: itemById.get(references[index]!.item_id.toLowerCase())!.productId,
        warehouseId: location.warehouseId,
      })),
    ];
    await writeTransaction(this.db, (tx) =>
      runIdempotent(tx, tenantId, idempotency, async () => {
        await locks.lockStockLevels(tx, tenantId, [
          ...pairs,
          // An order through a sales channel may hold units at other warehouses too.
          ...(await allocationRepository.pairsOf(tx, tenantId, {
            orderItemIds: references.map((reference) => reference.item_id.toLowerCase()),
          })),
        ]);
        await repository.lockOrder(tx, tenantId, order.id);
        const [current] = await repository.findOrders(tx, tenantId, [order.id]);
        if (!operation.orderStatuses.includes(current!.status)) {
          const rule =
            operation.name === 'restockOrderItems' && current!.status === 'OPEN'
              ? ': items on an open, unshipped order cannot be restocked'
              : '';
          throw new AppError(
            'INVALID_STATE',
            `${operation.name} needs an order that is ${operation.orderStatuses.join(' or ')}; order "${order.id}" ` +
              `is ${current!.status}${rule}`,
            {
              details: [{ field: 'order_id', message: `order is ${current!.status}` }],
            },
          );
        }
        const currentItems = new Map(current!.items.map((item) => [item.id, item]));
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
        const held = await allocationRepository.allocationsOf(tx, tenantId, {
          orderItemIds: items.map((item) => item.id),
        });
        const changes: LineChangeRecord[] = [];
        for (const [index, item] of items.entries()) {
          changes.push(
            ...(await operation.apply(
              tx,
              tenantId,
              item,
              held.filter((a) => a.orderItemId === item.id),
              locations[index] ?? null,
            )),
          );
        }
        if (locations.length > 0) {
          await checkSinglePosition(
            tx,
            tenantId,
            items.map((item, index) => ({
              productId: item.productId,
              warehouseId: locations[index]!.warehouseId,
              field: `items[${index}].location_id`,
            })),
          );
        }
        await repository.setItemStates(
          tx,
          tenantId,
          items.map((item) => item.id),
          operation.to,
        );
        await ledger.recordMutations(tx, tenantId, this.context(principal, operation.source, order.id), changes);
        return order.id;
      }),
    );
    return this.load(tenantId, order.id);
  }

  /**
   * `location_id`s → warehouse and position: a warehouse of the order's business (the order's own one when
   * `sameWarehouse`) or a position in it.
   */
  private async resolveLocations(
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
      catalog.warehousesByIds(this.db, tenantId, ids),
      catalog.positionsByIds(this.db, tenantId, ids),
    ]);
    const positionWarehouses = await catalog.warehousesByIds(
      this.db,
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

  /** Runs a change of a whole order under its stock locks and row lock, refusing orders not in `statuses`. */
  private async changeOrder(
    principal: Principal,
    id: string,
    idempotency: Idempotency | undefined,
    statuses: OrderStatus[],
    work: (tx: Tx, order: OrderRecord) => Promise<void>,
  ) {
    return (await this.changeOrderWith(principal, id, idempotency, statuses, 'id', work)).order;
  }

  /** `changeOrder` whose work has a result (stored with the idempotency key); `idField` names the order's id input. */
  private async changeOrderWith<T>(
    principal: Principal,
    id: string,
    idempotency: Idempotency | undefined,
    statuses: OrderStatus[],
    idField: string,
    work: (tx: Tx, order: OrderRecord) => Promise<T>,
  ): Promise<{ order: OrderRecord; result: T }> {
    const { tenantId } = principal;
    const order = await this.load(tenantId, id);
    const result = await writeTransaction(this.db, (tx) =>
      runIdempotent(tx, tenantId, idempotency, async () => {
        await locks.lockStockLevels(tx, tenantId, [
          ...order.items.map((item) => ({ productId: item.productId, warehouseId: order.warehouseId })),
          // An order through a sales channel may hold units at other warehouses too.
          ...(await allocationRepository.pairsOf(tx, tenantId, { orderItemIds: order.items.map((item) => item.id) })),
        ]);
        await repository.lockOrder(tx, tenantId, order.id);
        const [current] = await repository.findOrders(tx, tenantId, [order.id]);
        if (!statuses.includes(current!.status)) {
          throw new AppError(
            'INVALID_STATE',
            `order "${order.id}" is ${current!.status}; this needs an order that is ${statuses.join(' or ')}`,
            {
              details: [{ field: idField, message: `order is ${current!.status}` }],
            },
          );
        }
        return work(tx, current!);
      }),
    );
    return { order: await this.load(tenantId, order.id), result };
  }

  /** Where the units of these order items are, per item, for the GraphQL loaders (the order was read already). */
  async allocationsOfItems(tenantId: string, itemIds: readonly string[]) {
    const rows = await repository.allocationsOfItems(this.db, tenantId, itemIds);
    return itemIds.map((id) => rows.filter((row) => row.orderItemId === id));
  }

  async order(principal: Principal, id: string) {
    requireScope(principal, 'orders:read');
    return this.load(principal.tenantId, id);
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

  private async load(tenantId: string, id: string) {
    const [record] = isUuid(id) ? await repository.findOrders(this.db, tenantId, [id.toLowerCase()]) : [];
    if (!record) throw notFound(`no order with id "${id}"`);
    return record;
  }

  private context(principal: Principal, source: StockMutationSource, orderId: string): ledger.MutationContext {
    return { source, actor: principal.actor, references: [{ type: 'Order', id: orderId }] };
  }
}

/** JSON aggregates hand numbers over as they come; make the item quantities plain numbers. */
