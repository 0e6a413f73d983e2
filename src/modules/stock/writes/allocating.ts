/**
 * The allocating verbs: `reserve` and `commit` hold AVAILABLE units for reservations, order items
 * and transfer items. Each takes the stock locks (releasing expired reservations in the way), moves
 * the units and writes the allocations through the one allocation walk (`stock_allocate`, which the
 * batched reservations call too) and records the ledger, in the caller's transaction.
 */
import type { DbOrTx, Tx } from '../../../kernel/db';
import { AppError } from '../../../kernel/errors';
import { HotKeyGate } from '../../../kernel/hot-key-gate';
import { uuidv7 } from '../../../kernel/ids';
import type { AllocationStrategy } from '../../catalog';
import { planAllocation, type AllocationPart, type PlannedItem } from '../allocation-plan';
import * as repository from '../repository/allocations';
import * as ledger from '../repository/ledger';
import * as locks from '../repository/locks';
import { bundlePlan, expandBundles, withBundle, type ExpandedRequest } from './bundles';
import { EXPIRY_ACTOR, releaseEnded } from './held';
import type { StockChange } from './stock-change';

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
async function lockForAllocation(tx: Tx, tenantId: string, pairs: Pair[]) {
  const expired = await repository.expiredReservationsTouching(tx, tenantId, pairs);
  const extra = expired.length > 0 ? await repository.pairsOf(tx, tenantId, { reservationIds: expired }) : [];
  await locks.lockStockLevels(tx, tenantId, [...pairs, ...extra]);
  if (expired.length > 0) await releaseEnded(tx, tenantId, expired, 'EXPIRED', EXPIRY_ACTOR);
}

/** OUT_OF_STOCK naming the item whose SKU is short. */
export function outOfStock(
  request: Pick<ExpandedRequest, 'sku' | 'warehouseId' | 'field' | 'bundle'>,
  requested: number,
  available: number,
) {
  const of = request.bundle ? ` (a component of bundle "${request.bundle.sku}")` : '';
  const reason =
    `out of stock: SKU "${request.sku}"${of} has ${available} available at warehouse ` +
    `"${request.warehouseId}", ${requested} requested`;
  return new AppError('OUT_OF_STOCK', reason, { details: [{ field: request.field, message: 'out of stock' }] });
}

/**
 * Refuses requests that cannot be met by what is sellable right now through `channelId` (beyond
 * the safety stock), before any lock is taken:
 * a shortage seen in a committed snapshot is a true answer, and a rush of clients on a sold-out
 * SKU then never queues behind the writers that still can succeed.
 */
export async function refuseWhenShort(
  db: DbOrTx,
  tenantId: string,
  requests: AllocationRequest[],
  channelId: string | null,
  mayBackorder: (request: AllocationRequest) => boolean = () => false,
) {
  // A bundle's components never wait as backorders.
  requests = (await expandBundles(db, tenantId, requests)).filter(
    (request) => request.bundle || !mayBackorder(request),
  );
  if (requests.length === 0) return;
  const sellable = await repository.sellableNow(db, tenantId, requests, channelId);
  const requested = new Map<string, number>();
  for (const request of requests) {
    const key = pairKey(request);
    requested.set(key, (requested.get(key) ?? 0) + request.quantity);
    if (requested.get(key)! > sellable.get(key)!) throw outOfStock(request, requested.get(key)!, sellable.get(key)!);
  }
}

/**
 * Moves AVAILABLE units into `state` for every request, all or none: the requests of one SKU at
 * one warehouse are checked against their summed quantity first, beyond the safety stock the sales
 * channel (null: none) keeps back. A SKU short at a warehouse is
 * OUT_OF_STOCK unless `mayBackorder` allows it: then the items that do not fit (in input order)
 * are left out (returned as `backordered`). Records one ledger row per request and line moved from
 * (delta 0: only the state changes). The caller holds the stock locks.
 */
async function allocateLocked(
  tx: Tx,
  tenantId: string,
  requests: AllocationRequest[],
  state: 'COMMITTED' | 'RESERVED',
  order: { change: StockChange; channelId: string | null },
  mayBackorder: (request: AllocationRequest) => boolean = () => false,
) {
  const available = await repository.availableTotals(tx, tenantId, requests, order.channelId);
  const byPair = new Map<string, AllocationRequest[]>();
  for (const request of requests) byPair.set(pairKey(request), [...(byPair.get(pairKey(request)) ?? []), request]);
  const backordered = new Set<AllocationRequest>();
  for (const [key, group] of byPair) {
    const left = available.get(key) ?? 0;
    const requested = group.reduce((sum, request) => sum + request.quantity, 0);
    if (requested <= left) continue;
    if (!mayBackorder(group[0]!) || group.some((request: ExpandedRequest) => request.bundle))
      throw outOfStock(group.find((request: ExpandedRequest) => request.bundle) ?? group[0]!, requested, left);
    // Backorders allowed: the items that fit (in input order) are allocated, the others wait.
    let rest = left;
    for (const request of group) {
      if (request.quantity <= rest) rest -= request.quantity;
      else backordered.add(request);
    }
  }
  const allocated: ExpandedRequest[] = requests.filter((request) => !backordered.has(request));
  const taken = await repository.allocateFromLines(
    tx,
    tenantId,
    state,
    allocated.map((request) => ({ ...request, bundleId: request.bundle?.productId ?? null })),
  );
  await ledger.recordMutations(
    tx,
    tenantId,
    order.change,
    taken.map((take) => ({
      id: uuidv7(),
      lineId: take.lineId,
      productId: take.productId,
      warehouseId: take.warehouseId,
      positionId: take.positionId,
      delta: 0,
      references: withBundle(order.change.references, allocated[take.take - 1]!.bundle?.productId),
    })),
  );
  return backordered;
}

/** What an allocating verb holds units for, and the sales channel it sells through (null: none). */
export type Allocating = { change: StockChange; channelId: string | null } & (
  | { requests: AllocationRequest[] }
  | {
      /** Items through a sales channel: split over its warehouses by the strategy. */
      route: { items: PlannedItem[]; warehouseIds: string[]; strategy: AllocationStrategy; nearest?: string[] };
      /** Writes the holders' rows once the plan is known and returns what each part allocates. */
      place: (parts: AllocationPart[]) => Promise<AllocationRequest[]>;
    }
);

async function allocating(
  tx: Tx,
  tenantId: string,
  state: 'COMMITTED' | 'RESERVED',
  order: Allocating,
  mayBackorder?: (request: AllocationRequest) => boolean,
) {
  if ('requests' in order) {
    const requests = await expandBundles(tx, tenantId, order.requests);
    await lockForAllocation(tx, tenantId, requests);
    return allocateLocked(tx, tenantId, requests, state, order, mayBackorder);
  }
  // Every item at every warehouse of the channel is locked, then planned over what is available.
  const { items, warehouseIds, strategy, nearest } = order.route;
  const pairs = items.flatMap((item) =>
    warehouseIds.map((warehouseId) => ({ productId: item.productId, warehouseId })),
  );
  // A bundle is planned as a whole at each warehouse, by what its components there make.
  const { lockPairs, bundleAvailability } = await bundlePlan(tx, tenantId, pairs);
  await lockForAllocation(tx, tenantId, lockPairs);
  const available = bundleAvailability(await repository.availableTotals(tx, tenantId, lockPairs, order.channelId));
  const parts = planAllocation(items, warehouseIds, available, strategy, nearest);
  const requests = await expandBundles(tx, tenantId, await order.place(parts));
  return allocateLocked(tx, tenantId, requests, state, order);
}

/** Holds AVAILABLE units as RESERVED for reservations, all or none (OUT_OF_STOCK when short). */
export async function reserve(tx: Tx, tenantId: string, order: Allocating): Promise<void> {
  await allocating(tx, tenantId, 'RESERVED', order);
}

/**
 * Commits AVAILABLE units to order items or transfer items, all or none; a request that
 * `mayBackorder` allows to wait is left out when short and returned among `backordered`.
 */
export function commit(
  tx: Tx,
  tenantId: string,
  order: Allocating,
  mayBackorder?: (request: AllocationRequest) => boolean,
): Promise<Set<AllocationRequest>> {
  return allocating(tx, tenantId, 'COMMITTED', order, mayBackorder);
}
