/**
 * The verbs on units already held by reservations, order items and transfer items: `release`,
 * `ship`, `writeOff`, `move`, `commitReserved` and `endReservations`. Each takes the stock locks of
 * what the holders hold, moves the lines, writes the allocations, checks single positions and
 * records the ledger, in that order, in the caller's transaction.
 */
import { conflict } from '../../../kernel/errors';
import type { Tx } from '../../../kernel/db';
import { uuidv7 } from '../../../kernel/ids';
import * as repository from '../repository/allocations';
import type { Allocation, Holders } from '../repository/allocations';
import * as ledger from '../repository/ledger';
import type { LineChangeRecord } from '../repository/ledger';
import * as lineRepository from '../repository/lines';
import type { LineIdentity } from '../repository/lines';
import * as locks from '../repository/locks';
import type { InventoryItemState, StockActor, StockReference } from '../stock.types';
import { expandItems, withBundle } from './bundles';
import { checkSinglePosition } from './positions';
import type { StockChange } from './stock-change';

export type { Allocation, Holders } from '../repository/allocations';

/** Who releases a reservation whose time ran out. */
export const EXPIRY_ACTOR: StockActor = { type: 'system', id: 'reservation-expiry' };

/**
 * Takes the stock locks of `pairs` and of every pair the holders hold units of. Callers that lock
 * rows of their own (an order, a transfer) take these first, so that every writer locks in the
 * same order; the verbs take them again, which costs nothing in the same transaction.
 */
export async function lock(
  tx: Tx,
  tenantId: string,
  what: { pairs?: { productId: string; warehouseId: string }[]; holders?: Holders },
) {
  const held = what.holders ? await repository.pairsOf(tx, tenantId, what.holders) : [];
  await locks.lockStockLevels(tx, tenantId, [...(what.pairs ?? []), ...held]);
}

const holderOf = (allocation: Allocation) =>
  allocation.reservationId ?? allocation.orderItemId ?? allocation.transferItemId ?? '';

/** The holders' allocations under their stock locks, holder by holder in the order given. */
async function lockHeld(tx: Tx, tenantId: string, holders: Holders) {
  await lock(tx, tenantId, { holders });
  const order = [
    ...(holders.reservationIds ?? []),
    ...(holders.orderItemIds ?? []),
    ...(holders.transferItemIds ?? []),
  ];
  const rank = (allocation: Allocation) => order.indexOf(holderOf(allocation));
  return (await repository.allocationsOf(tx, tenantId, holders)).sort((a, b) => rank(a) - rank(b));
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
const lineOf = (allocation: Allocation): LineIdentity => ({ ...identityOf(allocation), reason: 'NONE' });

/**
 * Moves an allocation's units to another state and position (the allocation follows them when
 * `keep`), or out of stock altogether when `target` is null (shipped, missing). Returns the
 * ledger change: delta 0 for a move, minus the quantity when the units leave.
 */
async function moveAllocation(
  tx: Tx,
  tenantId: string,
  allocation: Allocation,
  target: { state: InventoryItemState; positionId: string | null } | null,
  options: { keep?: boolean; references: StockReference[] },
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
  const base = {
    id: uuidv7(),
    productId: allocation.productId,
    warehouseId: allocation.warehouseId,
    references: withBundle(options.references, allocation.bundleId),
  };
  if (options.keep && target) await repository.updateAllocation(tx, allocation.id, target.state, target.positionId);
  else await repository.deleteAllocation(tx, allocation.id);
  if (!target) return { ...base, lineId, positionId: allocation.positionId, delta: -allocation.quantity };
  const to: LineIdentity = { ...from, state: target.state, positionId: target.positionId };
  const [targetId] = await lineRepository.addToLines(tx, tenantId, [
    { ...to, id: uuidv7(), quantity: allocation.quantity, attributes },
  ]);
  return { ...base, lineId: targetId!, positionId: target.positionId, delta: 0 };
}

/**
 * Ends active reservations (conditionally: one already ended is left alone, so a release is
 * recorded exactly once whoever gets there first) and puts their units back to AVAILABLE, one
 * ALLOCATION mutation per allocation. The caller holds the locks of their pairs. Returns the ids
 * of the reservations it ended.
 */
export async function releaseEnded(
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
    const references = [{ type: 'Reservation' as const, id }];
    for (const allocation of allocations.filter((a) => a.reservationId === id)) {
      const target = { state: 'AVAILABLE' as const, positionId: allocation.positionId };
      changes.push(await moveAllocation(tx, tenantId, allocation, target, { references }));
    }
    await ledger.recordMutations(tx, tenantId, { source: 'ALLOCATION', actor, references }, changes);
  }
  return endedIds;
}

/** Ends the ACTIVE reservations among `ids` (REMOVED or EXPIRED), making their units available; returns those ended. */
export async function endReservations(
  tx: Tx,
  tenantId: string,
  ids: string[],
  status: 'REMOVED' | 'EXPIRED',
  actor: StockActor,
) {
  await lock(tx, tenantId, { holders: { reservationIds: ids } });
  return releaseEnded(tx, tenantId, ids, status, actor);
}

/**
 * Releases what the holders hold: committed and reserved units become AVAILABLE where they are;
 * units in another state (unavailable) stay as they are and only lose their holder.
 */
export async function release(tx: Tx, tenantId: string, holders: Holders, change: StockChange) {
  const changes: LineChangeRecord[] = [];
  for (const allocation of await lockHeld(tx, tenantId, holders)) {
    if (allocation.state === 'COMMITTED' || allocation.state === 'RESERVED') {
      const target = { state: 'AVAILABLE' as const, positionId: allocation.positionId };
      changes.push(await moveAllocation(tx, tenantId, allocation, target, change));
    } else {
      await repository.deleteAllocation(tx, allocation.id);
    }
  }
  await ledger.recordMutations(tx, tenantId, change, changes);
}

/** Units of a holder's product (an order item's): a bundle's are its components' units. */
export interface HeldUnits {
  productId: string;
  quantity: number;
}

/**
 * The holders' units leave stock (shipped, written off): all of them, or per holder id the
 * `quantities` given, taken from its allocations in order; the rest stays held.
 */
async function takeOut(
  tx: Tx,
  tenantId: string,
  holders: Holders,
  change: StockChange,
  quantities?: Map<string, HeldUnits>,
) {
  const changes: LineChangeRecord[] = [];
  const key = (holder: string, productId: string) => `${holder}:${productId}`;
  const parts = quantities
    ? await expandItems(
        tx,
        tenantId,
        [...quantities].map(([id, units]) => ({ id, ...units })),
      )
    : [];
  const left = new Map(parts.map((part) => [key(part.id, part.productId), part.quantity]));
  for (const allocation of await lockHeld(tx, tenantId, holders)) {
    const holder = key(holderOf(allocation), allocation.productId);
    const take = Math.min(left.get(holder) ?? allocation.quantity, allocation.quantity);
    if (take === 0) continue;
    if (quantities) left.set(holder, (left.get(holder) ?? 0) - take);
    changes.push(await moveAllocation(tx, tenantId, { ...allocation, quantity: take }, null, change));
    // The units the holder keeps stay held by it.
    if (take < allocation.quantity) {
      await repository.insertAllocations(tx, tenantId, [
        { ...allocation, id: uuidv7(), quantity: allocation.quantity - take },
      ]);
    }
  }
  await ledger.recordMutations(tx, tenantId, change, changes);
}

/**
 * Ships what the holders hold (all, or the units of `quantities` per holder id, a bundle's as its
 * components'): the units leave the warehouse.
 */
export const ship = (
  tx: Tx,
  tenantId: string,
  holders: Holders,
  change: StockChange,
  quantities?: Map<string, HeldUnits>,
) => takeOut(tx, tenantId, holders, change, quantities);

/** Writes off what the holders hold (units that cannot be found): they leave the inventory. */
export const writeOff = (tx: Tx, tenantId: string, holders: Holders, change: StockChange) =>
  takeOut(tx, tenantId, holders, change);

/** Where `move` puts an allocation's units; `field` names the input a single-position breach is reported on. */
export interface MoveTarget {
  state: 'AVAILABLE' | 'UNAVAILABLE';
  positionId: string | null;
  field?: string;
}

/**
 * Moves what the holders hold to another state and position: the allocation stays with the units
 * when `keepHolder` (still tied to the holder), otherwise it ends.
 */
export async function move(
  tx: Tx,
  tenantId: string,
  holders: Holders,
  to: (allocation: Allocation) => MoveTarget,
  change: StockChange,
  options: { keepHolder?: boolean } = {},
) {
  const changes: LineChangeRecord[] = [];
  const placements: { productId: string; warehouseId: string; field: string }[] = [];
  for (const allocation of await lockHeld(tx, tenantId, holders)) {
    const target = to(allocation);
    changes.push(
      await moveAllocation(tx, tenantId, allocation, target, {
        keep: options.keepHolder,
        references: change.references,
      }),
    );
    if (target.positionId !== allocation.positionId) placements.push({ ...allocation, field: target.field ?? 'items' });
  }
  await checkSinglePosition(tx, tenantId, placements);
  await ledger.recordMutations(tx, tenantId, change, changes);
}

/**
 * Turns units a reservation holds into units committed to order items without their ever being
 * available: each item takes its units of its SKU from the reservation's allocations in order, the
 * rest of the reservation becomes AVAILABLE. `claim` runs under the stock locks first and ends the
 * reservation (it throws when that is no longer possible).
 */
export async function commitReserved(
  tx: Tx,
  tenantId: string,
  reservationId: string,
  items: { id: string; productId: string; quantity: number }[],
  change: StockChange,
  claim: () => Promise<void>,
) {
  const held = await lockHeld(tx, tenantId, { reservationIds: [reservationId] });
  await claim();
  // An item of a bundle takes its components' units, each under the item's id.
  const parts = await expandItems(tx, tenantId, items);
  const key = (item: { id: string; productId: string }) => `${item.id}:${item.productId}`;
  const left = new Map(parts.map((item) => [key(item), item.quantity]));
  const committed: Allocation[] = [];
  const changes: LineChangeRecord[] = [];
  // Units go first to the items of the bundle (or of no bundle) the reservation holds them for,
  // then to any item of their SKU.
  const rests = new Map(held.map((allocation) => [allocation.id, allocation.quantity]));
  for (const sameBundle of [true, false]) {
    for (const allocation of held) {
      let rest = rests.get(allocation.id)!;
      const candidates = parts.filter(
        (candidate) =>
          candidate.productId === allocation.productId &&
          (!sameBundle || (candidate.bundleId ?? null) === (allocation.bundleId ?? null)),
      );
      for (const item of candidates) {
        const take = Math.min(rest, left.get(key(item))!);
        if (take === 0) continue;
        left.set(key(item), left.get(key(item))! - take);
        rest -= take;
        const at = { state: 'COMMITTED' as const, positionId: allocation.positionId };
        const units = { ...allocation, quantity: take, bundleId: item.bundleId ?? null };
        changes.push(await moveAllocation(tx, tenantId, units, at, change));
        committed.push({ ...units, ...at, id: uuidv7(), reservationId: null, orderItemId: item.id });
      }
      rests.set(allocation.id, rest);
    }
  }
  for (const allocation of held) {
    const rest = rests.get(allocation.id)!;
    if (rest > 0) {
      const at = { state: 'AVAILABLE' as const, positionId: allocation.positionId };
      changes.push(await moveAllocation(tx, tenantId, { ...allocation, quantity: rest }, at, change));
    }
  }
  if ([...left.values()].some((quantity) => quantity > 0)) {
    throw new Error(`reservation ${reservationId} holds fewer units than its items`);
  }
  await repository.insertAllocations(tx, tenantId, committed);
  await ledger.recordMutations(tx, tenantId, change, changes);
}
