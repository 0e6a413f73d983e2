/**
 * Moving units between the states of inventory lines on behalf of orders and reservations. The
 * callers own the transaction and must hold the stock locks (`lockForAllocation`) of every
 * product and warehouse they touch; these functions then apply the moves and return the ledger
 * changes for `recordMutations`.
 */
import { AppError, conflict } from '../../kernel/errors';
import type { Tx } from '../../kernel/db';
import { uuidv7 } from '../../kernel/ids';
import { HotKeyGate } from '../../kernel/hot-key-gate';
import * as repository from './repository/allocations';
import type { Allocation } from './repository/allocations';
import * as ledger from './repository/ledger';
import type { LineChangeRecord } from './repository/ledger';
import * as lineRepository from './repository/lines';
import type { LineIdentity } from './repository/lines';
import * as locks from './repository/locks';
import type { InventoryItemState, StockActor } from './stock.types';
import { planAllocation, type AllocationStrategy, type PlannedItem } from './allocation-plan';

export type { Allocation } from './repository/allocations';

/** Who releases a reservation whose time ran out. */
export const EXPIRY_ACTOR: StockActor = { type: 'system', id: 'reservation-expiry' };

export interface Pair {
  productId: string;
  warehouseId: string;
}

/** One item to allocate, with the input field it came from (named by an out-of-stock error). */
export interface AllocationRequest extends Pair {
  sku: string;
  quantity: number;
  field: string;
  holder: { reservationId?: string; orderItemId?: string; transferItemId?: string };
}

const pairKey = (pair: Pair) => `${pair.productId}:${pair.warehouseId}`;

/** Transactions of this process allowed at once per SKU and warehouse (see HotKeyGate). */
const hotKeys = new HotKeyGate(2);

/** Runs an allocating write with this process's concurrency on each of its SKUs bounded. */
export const withBoundedContention = <T>(tenantId: string, pairs: Pair[], work: () => Promise<T>) =>
  hotKeys.run(
    pairs.map((pair) => `${tenantId}:${pairKey(pair)}`),
    work,
  );

/**
 * Takes the stock locks of `pairs`, and of every pair held by an expired reservation touching
 * them, then releases those reservations: from here on the caller sees expired stock as available,
 * whether or not the background sweeper got to it yet.
 */
export async function lockForAllocation(tx: Tx, tenantId: string, pairs: Pair[]) {
  const expired = await repository.expiredReservationsTouching(tx, tenantId, pairs);
  const extra = expired.length > 0 ? await repository.pairsOf(tx, tenantId, { reservationIds: expired }) : [];
  await locks.lockStockLevels(tx, tenantId, [...pairs, ...extra]);
  if (expired.length > 0) await releaseReservations(tx, tenantId, expired, 'EXPIRED', EXPIRY_ACTOR);
}

/**
 * Plans where the items of an order or reservation through a sales channel come from: takes the
 * stock locks of every item at every warehouse of the channel (releasing expired reservations
 * there), reads what is available under them and splits the items by the strategy. The caller
 * then allocates the parts (`allocate`) in the same transaction.
 */
export async function planAcrossWarehouses(
  tx: Tx,
  tenantId: string,
  target: { items: PlannedItem[]; warehouseIds: string[]; strategy: AllocationStrategy },
) {
  const pairs = target.items.flatMap((item) =>
    target.warehouseIds.map((warehouseId) => ({ productId: item.productId, warehouseId })),
  );
  await lockForAllocation(tx, tenantId, pairs);
  const available = await repository.sellableNow(tx, tenantId, pairs);
  return planAllocation(target.items, target.warehouseIds, available, target.strategy);
}

/**
 * Ends active reservations (conditionally: one already ended is left alone, so a release is
 * recorded exactly once whoever gets there first) and puts their units back to AVAILABLE, one
 * ALLOCATION mutation per allocation. The caller holds the locks of their pairs. Returns the ids
 * of the reservations it ended.
 */
export async function releaseReservations(
  tx: Tx,
  tenantId: string,
  ids: string[],
  status: 'REMOVED' | 'EXPIRED',
  actor: StockActor,
) {
  const endedIds = await repository.endActiveReservations(tx, tenantId, ids, status);
  const allocations = await repository.allocationsOf(tx, tenantId, { reservationIds: endedIds });
  for (const id of endedIds) {
    const changes: LineChangeRecord[] = [];
    for (const allocation of allocations.filter((a) => a.reservationId === id)) {
      changes.push(
        await moveAllocation(tx, tenantId, allocation, { state: 'AVAILABLE', positionId: allocation.positionId }),
      );
    }
    await ledger.recordMutations(
      tx,
      tenantId,
      { source: 'ALLOCATION', actor, references: [{ type: 'Reservation', id }] },
      changes,
    );
  }
  return endedIds;
}

/** OUT_OF_STOCK naming the item whose SKU is short. */
export function outOfStock(
  request: Pick<AllocationRequest, 'sku' | 'warehouseId' | 'field'>,
  requested: number,
  available: number,
) {
  const reason =
    `out of stock: SKU "${request.sku}" has ${available} available at warehouse ` +
    `"${request.warehouseId}", ${requested} requested`;
  return new AppError('OUT_OF_STOCK', reason, { details: [{ field: request.field, message: 'out of stock' }] });
}

/**
 * Refuses requests that cannot be met by what is sellable right now, before any lock is taken:
 * a shortage seen in a committed snapshot is a true answer, and a rush of clients on a sold-out
 * SKU then never queues behind the writers that still can succeed.
 */
export async function refuseWhenShort(
  db: Parameters<typeof repository.sellableNow>[0],
  tenantId: string,
  requests: AllocationRequest[],
  mayBackorder: (request: AllocationRequest) => boolean = () => false,
) {
  requests = requests.filter((request) => !mayBackorder(request));
  if (requests.length === 0) return;
  const sellable = await repository.sellableNow(db, tenantId, requests);
  const requested = new Map<string, number>();
  for (const request of requests) {
    const key = pairKey(request);
    requested.set(key, (requested.get(key) ?? 0) + request.quantity);
    if (requested.get(key)! > sellable.get(key)!) throw outOfStock(request, requested.get(key)!, sellable.get(key)!);
  }
}

/**
 * Moves AVAILABLE units into `state` for every request, all or none: the requests of one SKU at
 * one warehouse are checked against their summed quantity first. Units come from the lines that
 * expire first. A SKU short at a warehouse is a CONFLICT unless `mayBackorder` allows it: then the
 * items that do not fit are left out (returned as `backordered`). Returns one ledger change per
 * line moved from (delta 0: only the state changes).
 */
export async function allocate(
  tx: Tx,
  tenantId: string,
  requests: AllocationRequest[],
  state: 'COMMITTED' | 'RESERVED',
  mayBackorder: (request: AllocationRequest) => boolean = () => false,
) {
  const backordered = new Set<AllocationRequest>();
  const byPair = new Map<string, { requests: AllocationRequest[]; lines: lineRepository.AvailableLine[] }>();
  for (const request of requests) {
    const key = pairKey(request);
    const group = byPair.get(key) ?? { requests: [], lines: [] };
    group.requests.push(request);
    byPair.set(key, group);
  }
  for (const group of byPair.values()) {
    const first = group.requests[0]!;
    group.lines = await lineRepository.lockAvailableLines(tx, tenantId, first.productId, first.warehouseId);
    const available = group.lines.reduce((sum, line) => sum + line.quantity, 0);
    const requested = group.requests.reduce((sum, request) => sum + request.quantity, 0);
    if (requested <= available) continue;
    if (!mayBackorder(first)) throw outOfStock(first, requested, available);
    // Backorders allowed: the items that fit (in input order) are allocated, the others wait.
    let left = available;
    for (const request of group.requests) {
      if (request.quantity <= left) left -= request.quantity;
      else backordered.add(request);
    }
  }

  const changes: LineChangeRecord[] = [];
  const allocations: Allocation[] = [];
  for (const request of requests) {
    if (backordered.has(request)) continue;
    const lines = byPair.get(pairKey(request))!.lines;
    let missing = request.quantity;
    for (const line of lines) {
      if (missing === 0) break;
      const take = Math.min(line.quantity, missing);
      if (take === 0) continue;
      line.quantity -= take;
      missing -= take;
      const target: LineIdentity = { ...line, state, reason: 'NONE' };
      const lineId = await lineRepository.takeFromLine(tx, tenantId, line, take);
      if (lineId === null) throw new Error(`inventory line ${line.id} changed while locked`);
      const [targetId] = await lineRepository.addToLines(tx, tenantId, [
        { ...target, id: uuidv7(), quantity: take, attributes: line.attributes },
      ]);
      allocations.push({
        ...identityOf(target),
        id: uuidv7(),
        reservationId: request.holder.reservationId ?? null,
        orderItemId: request.holder.orderItemId ?? null,
        transferItemId: request.holder.transferItemId ?? null,
        quantity: take,
      });
      changes.push({
        id: uuidv7(),
        lineId: targetId!,
        productId: line.productId,
        warehouseId: line.warehouseId,
        positionId: line.positionId,
        delta: 0,
      });
    }
  }
  await repository.insertAllocations(tx, tenantId, allocations);
  return { changes, backordered };
}

const identityOf = (identity: Omit<LineIdentity, 'reason'>) => ({
  productId: identity.productId,
  warehouseId: identity.warehouseId,
  positionId: identity.positionId,
  batchNumber: identity.batchNumber,
  serialNumber: identity.serialNumber,
  expiresAt: identity.expiresAt,
  state: identity.state,
});

/** The line identity an allocation's units sit on. */
export const lineOf = (allocation: Allocation): LineIdentity => ({ ...identityOf(allocation), reason: 'NONE' });

/**
 * Moves an allocation's units to another state and position (the allocation follows them when
 * `keep`), or out of stock altogether when `target` is null (shipped, missing). Returns the
 * ledger change: delta 0 for a move, minus the quantity when the units leave.
 */
export async function moveAllocation(
  tx: Tx,
  tenantId: string,
  allocation: Allocation,
  target: { state: InventoryItemState; positionId: string | null } | null,
  options: { keep?: boolean } = {},
): Promise<LineChangeRecord> {
  const from = lineOf(allocation);
  const attributes = target ? await lineRepository.lineAttributes(tx, tenantId, from) : {};
  const lineId = await lineRepository.takeFromLine(tx, tenantId, from, allocation.quantity);
  if (lineId === null) {
    throw conflict(
      `the inventory line holding ${allocation.quantity} allocated unit(s) was changed by another write; correct it ` +
        `first`,
    );
  }
  const base = { id: uuidv7(), productId: allocation.productId, warehouseId: allocation.warehouseId };
  if (options.keep && target) await repository.updateAllocation(tx, allocation.id, target.state, target.positionId);
  else await repository.deleteAllocation(tx, allocation.id);
  if (!target) return { ...base, lineId, positionId: allocation.positionId, delta: -allocation.quantity };
  const to: LineIdentity = { ...from, state: target.state, positionId: target.positionId };
  const [targetId] = await lineRepository.addToLines(tx, tenantId, [
    { ...to, id: uuidv7(), quantity: allocation.quantity, attributes },
  ]);
  return { ...base, lineId: targetId!, positionId: target.positionId, delta: 0 };
}
