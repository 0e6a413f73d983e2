/**
 * Where the units of an order or reservation come from when it names a sales channel instead of a
 * warehouse: a pure plan over the channel's warehouses and what each has available, by strategy.
 */
import { AppError } from '../../kernel/errors';
import type { AllocationStrategy } from '../catalog';

export interface PlannedItem {
  productId: string;
  sku: string;
  quantity: number;
  /** The input field an out-of-stock error names. */
  field: string;
}

/** Units of one item from one warehouse. */
export interface AllocationPart {
  itemIndex: number;
  warehouseId: string;
  quantity: number;
}

const key = (productId: string, warehouseId: string) => `${productId}:${warehouseId}`;

/**
 * Sets of warehouses FEWEST_SHIPMENTS tries before it settles for walking all of them in priority
 * order: the search is exact for the channels one meets (a handful of warehouses) and bounded for
 * any other.
 */
export const MAX_WAREHOUSE_SETS = 5_000;

/**
 * Splits every item over `warehouseIds` (the channel's, in priority order) given `available`
 * (`productId:warehouseId` → units), all items or none:
 * - PRIORITY takes from the first warehouse, then the next, until the item is complete;
 * - MOST_STOCK takes from the warehouse with the most available first (ties: priority order);
 * - SINGLE_WAREHOUSE takes every item from the first warehouse that has all of them;
 * - FEWEST_SHIPMENTS takes the items from the smallest set of warehouses that has all of them (ties:
 *   the set first in priority order), in priority order within the set;
 * - CLOSEST takes every item from the nearest warehouse that has all of them (`nearest`: the
 *   warehouses nearest first; priority order without one), and only when none has, from the nearest
 *   first, splitting.
 * Items of one SKU share what is available. OUT_OF_STOCK names the first item that cannot be met.
 */
export function planAllocation(
  items: PlannedItem[],
  warehouseIds: string[],
  available: Map<string, number>,
  strategy: AllocationStrategy,
  nearest: readonly string[] = warehouseIds,
): AllocationPart[] {
  const units = (productId: string, warehouseId: string) => available.get(key(productId, warehouseId)) ?? 0;
  const needed = new Map<string, number>();
  for (const item of items) needed.set(item.productId, (needed.get(item.productId) ?? 0) + item.quantity);
  const covers = (set: readonly string[]) =>
    [...needed].every(([productId, quantity]) => set.reduce((sum, w) => sum + units(productId, w), 0) >= quantity);
  const whole = (warehouseId: string) =>
    items.map((item, itemIndex) => ({ itemIndex, warehouseId, quantity: item.quantity }));
  switch (strategy) {
    case 'SINGLE_WAREHOUSE': {
      const warehouseId = warehouseIds.find((candidate) => covers([candidate]));
      if (warehouseId === undefined) {
        throw new AppError('OUT_OF_STOCK', 'out of stock: no warehouse of the sales channel has every item available', {
          details: [{ field: items[0]!.field, message: 'out of stock in every single warehouse' }],
        });
      }
      return whole(warehouseId);
    }
    case 'CLOSEST': {
      const warehouseId = nearest.find((candidate) => covers([candidate]));
      return warehouseId === undefined ? walk(items, nearest, available, warehouseIds) : whole(warehouseId);
    }
    case 'FEWEST_SHIPMENTS':
      return walk(items, smallestCoveringSet(warehouseIds, covers) ?? warehouseIds, available, warehouseIds);
    case 'MOST_STOCK':
      return walk(items, warehouseIds, available, warehouseIds, (productId, left) =>
        [...warehouseIds].sort((a, b) => (left.get(key(productId, b)) ?? 0) - (left.get(key(productId, a)) ?? 0)),
      );
    case 'PRIORITY':
      return walk(items, warehouseIds, available, warehouseIds);
  }
}

/**
 * The smallest set of warehouses that `covers` the items, sets of one size tried in priority order
 * (lexicographically by position in `warehouseIds`); null when none does or the search gives up.
 */
function smallestCoveringSet(warehouseIds: string[], covers: (set: readonly string[]) => boolean) {
  let tried = 0;
  for (let size = 1; size <= warehouseIds.length; size += 1) {
    const indexes = Array.from({ length: size }, (_, n) => n);
    for (;;) {
      const set = indexes.map((n) => warehouseIds[n]!);
      if (covers(set)) return set;
      if ((tried += 1) >= MAX_WAREHOUSE_SETS) return null;
      // The next combination: advance the rightmost index that can move, reset those after it.
      let at = size - 1;
      while (at >= 0 && indexes[at] === warehouseIds.length - size + at) at -= 1;
      if (at < 0) break;
      indexes[at] = indexes[at]! + 1;
      for (let next = at + 1; next < size; next += 1) indexes[next] = indexes[next - 1]! + 1;
    }
  }
  return null;
}

/**
 * Takes each item's units from the warehouses of `order` (or of `rank(productId, left)`) in turn;
 * OUT_OF_STOCK, counting over all of the channel's `warehouseIds`, names the first item not met.
 */
function walk(
  items: PlannedItem[],
  order: readonly string[],
  available: Map<string, number>,
  warehouseIds: readonly string[],
  rank?: (productId: string, left: Map<string, number>) => readonly string[],
): AllocationPart[] {
  const left = new Map(available);
  const units = (productId: string, warehouseId: string) => left.get(key(productId, warehouseId)) ?? 0;
  const parts: AllocationPart[] = [];
  items.forEach((item, itemIndex) => {
    let missing = item.quantity;
    for (const warehouseId of rank ? rank(item.productId, left) : order) {
      const take = Math.min(missing, units(item.productId, warehouseId));
      if (take === 0) continue;
      left.set(key(item.productId, warehouseId), units(item.productId, warehouseId) - take);
      parts.push({ itemIndex, warehouseId, quantity: take });
      missing -= take;
      if (missing === 0) break;
    }
    if (missing > 0) {
      const total = warehouseIds.reduce(
        (sum, warehouseId) => sum + (available.get(key(item.productId, warehouseId)) ?? 0),
        0,
      );
      throw new AppError(
        'OUT_OF_STOCK',
        `out of stock: SKU "${item.sku}" has ${total} available over the sales channel's warehouses, ` +
          `${item.quantity} requested (with the items before it)`,
        { details: [{ field: item.field, message: 'out of stock' }] },
      );
    }
  });
  return parts;
}

/** Where an order or reservation goes: a point, a country (ISO 3166-1 alpha-2), or both. */
export interface Destination {
  latitude?: number | null;
  longitude?: number | null;
  country?: string | null;
}

/** A warehouse of a channel with where it is (unknown: null). */
export interface WarehousePlace {
  id: string;
  latitude: number | null;
  longitude: number | null;
  countryCode: string | null;
}

const EARTH_RADIUS_KM = 6371;
const radians = (degrees: number) => (degrees * Math.PI) / 180;

/** Great-circle distance in kilometres (haversine). */
export function distanceKm(a: { latitude: number; longitude: number }, b: { latitude: number; longitude: number }) {
  const dLat = radians(b.latitude - a.latitude);
  const dLon = radians(b.longitude - a.longitude);
  const h =
    Math.sin(dLat / 2) ** 2 + Math.cos(radians(a.latitude)) * Math.cos(radians(b.latitude)) * Math.sin(dLon / 2) ** 2;
  return 2 * EARTH_RADIUS_KM * Math.asin(Math.min(1, Math.sqrt(h)));
}

/**
 * The warehouses (given in priority order) nearest first, for CLOSEST: with a destination point,
 * by distance to it, warehouses without a location last; with a country only, the warehouses in
 * that country first. Ties, and everything without a destination, keep priority order.
 */
export function nearestFirst(warehouses: WarehousePlace[], destination: Destination | null | undefined): string[] {
  const point =
    destination?.latitude != null && destination.longitude != null
      ? { latitude: destination.latitude, longitude: destination.longitude }
      : null;
  const country = destination?.country?.toUpperCase() ?? null;
  const rank = (warehouse: WarehousePlace) => {
    if (point) {
      return warehouse.latitude !== null && warehouse.longitude !== null
        ? distanceKm(point, { latitude: warehouse.latitude, longitude: warehouse.longitude })
        : Number.POSITIVE_INFINITY;
    }
    return country !== null && warehouse.countryCode !== country ? 1 : 0;
  };
  return warehouses
    .map((warehouse, priority) => ({ id: warehouse.id, rank: rank(warehouse), priority }))
    .sort((a, b) => a.rank - b.rank || a.priority - b.priority)
    .map((warehouse) => warehouse.id);
}
