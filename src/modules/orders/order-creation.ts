/** Creating orders: at a warehouse, through a sales channel's warehouses, or from a reservation. */
import { writeTransaction, type Db } from '../../kernel/db';
import { invalidState, type FieldProblem } from '../../kernel/errors';
import { runIdempotent, type Idempotency } from '../../kernel/idempotency';
import { uuidv7 } from '../../kernel/ids';
import { invalidInput } from '../../kernel/validation';
import type { Principal } from '../../kernel/principal';
import { backorderPolicy } from '../preferences';
import { claimForOrder, findReservation, type ReservationRecord } from '../reservations';
import * as stock from '../stock';
import { clientIdTaken, resolveAllocationTarget, resolveChannelTarget, type ItemInput } from '../stock';
import { orderChange } from './order-changes';
import * as repository from './orders.repository';
import type { CreateOrderInput } from './orders.schemas';

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

/**
 * Commits the items' units to a new order at a warehouse (COMMITTED, source ALLOCATION), all or
 * none; OUT_OF_STOCK when a SKU is short, unless its item preference allows backorders: then the
 * items that do not fit wait as BACKORDERED. Returns the order's id.
 */
export async function createOrderAt(
  db: Db,
  principal: Principal,
  input: CreateOrderInput,
  idempotency?: Idempotency,
): Promise<string> {
  const { tenantId } = principal;
  const chosenId = input.id ?? undefined;
  const orderId = chosenId ?? uuidv7();
  // The input schema requires these without reservation_id.
  const target = await resolveAllocationTarget(db, tenantId, {
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
    const mayBackorder = await backorderPolicy(db, tenantId, requests);
    await stock.refuseWhenShort(db, tenantId, requests, target.channelId, mayBackorder);
  }
  return stock.withBoundedContention(tenantId, requests, () =>
    writeTransaction(db, (tx) =>
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
        const mayBackorder = await backorderPolicy(tx, tenantId, requests);
        const change = orderChange(principal, 'ALLOCATION', orderId);
        const order = { requests, change, channelId: target.channelId };
        const backordered = await stock.commit(tx, tenantId, order, mayBackorder);
        await repository.setItemStates(
          tx,
          tenantId,
          [...backordered].map((request) => request.holder.orderItemId!),
          'BACKORDERED',
        );
        return orderId;
      }),
    ),
  );
}

/**
 * An order through a sales channel without a warehouse: each item's units are taken from the
 * channel's warehouses by the allocation strategy (an item may be split over several), all or
 * none, under the stock locks of every warehouse considered. The order's `warehouse` is the one
 * its first units come from; each item's `allocations` say where its units are. No backorders:
 * a shortage over all the warehouses is OUT_OF_STOCK.
 */
export async function createChannelOrder(
  db: Db,
  principal: Principal,
  input: CreateOrderInput,
  idempotency?: Idempotency,
): Promise<string> {
  const { tenantId } = principal;
  // The input schema requires these without reservation_id.
  const target = await resolveChannelTarget(db, tenantId, {
    business_id: input.business_id!,
    channel_id: input.channel_id!,
    items: input.items!,
    allocation_strategy: input.allocation_strategy,
    destination: input.destination,
  });
  const orderId = input.id ?? uuidv7();
  const itemIds = target.items.map(() => uuidv7()).sort();
  const items = target.items.map((item, index) => ({ ...item, id: itemIds[index]! }));
  const pairs = items.flatMap((item) => target.warehouseIds.map((warehouseId) => ({ ...item, warehouseId })));
  return stock.withBoundedContention(tenantId, pairs, () =>
    writeTransaction(db, (tx) =>
      runIdempotent(tx, tenantId, idempotency, async () => {
        if (input.id && (await repository.orderExists(tx, tenantId, orderId))) throw clientIdTaken('order', orderId);
        await stock.commit(tx, tenantId, {
          route: target,
          change: orderChange(principal, 'ALLOCATION', orderId),
          channelId: target.channelId,
          place: async (parts) => {
            await repository.insertOrder(tx, tenantId, {
              id: orderId,
              businessId: target.businessId,
              warehouseId: parts[0]!.warehouseId,
              channelId: target.channelId,
              items,
            });
            return parts.map((part) => ({
              ...items[part.itemIndex]!,
              warehouseId: part.warehouseId,
              quantity: part.quantity,
              holder: { orderItemId: items[part.itemIndex]!.id },
            }));
          },
        });
        return orderId;
      }),
    ),
  );
}

/**
 * Turns an ACTIVE reservation into an order in one transaction under its stock locks: the units
 * of the ordered items go from RESERVED to COMMITTED without ever being available, the rest of
 * the reservation is released (AVAILABLE), and the reservation becomes CONVERTED. Each ledger
 * entry names both the order and the reservation.
 */
export async function convertReservation(
  db: Db,
  principal: Principal,
  reservationId: string,
  input: CreateOrderInput,
  idempotency?: Idempotency,
): Promise<string> {
  const { tenantId } = principal;
  const reservation = await findReservation(db, tenantId, reservationId);
  const items = orderItemsOfReservation(reservation, input.items ?? undefined);
  const orderId = input.id ?? uuidv7();
  return writeTransaction(db, (tx) =>
    runIdempotent(tx, tenantId, idempotency, async () => {
      // Not before: a request replayed with its idempotency key finds the reservation CONVERTED.
      if (reservation.status !== 'ACTIVE')
        throw invalidState(`reservation "${reservation.id}" is ${reservation.status} and holds no stock`);
      if (input.id && (await repository.orderExists(tx, tenantId, orderId))) throw clientIdTaken('order', orderId);
      await repository.insertOrder(tx, tenantId, {
        id: orderId,
        businessId: reservation.businessId,
        warehouseId: reservation.warehouseId,
        channelId: reservation.channelId,
        items,
      });
      const change: stock.StockChange = {
        source: 'ALLOCATION',
        actor: principal.actor,
        references: [
          { type: 'Order', id: orderId },
          { type: 'Reservation', id: reservation.id },
        ],
      };
      await stock.commitReserved(tx, tenantId, reservation.id, items, change, () =>
        claimForOrder(tx, tenantId, reservation.id, orderId),
      );
      return orderId;
    }),
  );
}
