/**
 * Where the units of an order or reservation come from when it names a sales channel instead of a
 * warehouse: a pure plan over the channel's warehouses and what each has available, by strategy.
 */
import { AppError } from '../../kernel/errors';

export const ALLOCATION_STRATEGIES = ['PRIORITY', 'MOST_STOCK', 'SINGLE_WAREHOUSE'] as const;
export type AllocationStrategy = (typeof ALLOCATION_STRATEGIES)[number];

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
 * Splits every item over `warehouseIds` (the channel's, in priority order) given `available`
 * (`productId:warehouseId` → units), all items or none:
 * - PRIORITY takes from the first warehouse, then the next, until the item is complete;
 * - MOST_STOCK takes from the warehouse with the most available first (ties: priority order);
 * - SINGLE_WAREHOUSE takes every item from the first warehouse that has all of them.
 * Items of one SKU share what is available. OUT_OF_STOCK names the first item that cannot be met.
 */
export function planAllocation(
  items: PlannedItem[],
  warehouseIds: string[],
  available: Map<string, number>,
  strategy: AllocationStrategy,
): AllocationPart[] {
  const left = new Map(available);
  const units = (productId: string, warehouseId: string) => left.get(key(productId, warehouseId)) ?? 0;
  if (strategy === 'SINGLE_WAREHOUSE') {
    const warehouseId = warehouseIds.find((candidate) => {
      const needed = new Map<string, number>();
      for (const item of items) needed.set(item.productId, (needed.get(item.productId) ?? 0) + item.quantity);
      return [...needed].every(([productId, quantity]) => units(productId, candidate) >= quantity);
    });
    if (warehouseId === undefined) {
      throw new AppError('OUT_OF_STOCK', 'out of stock: no warehouse of the sales channel has every item available', {
        details: [{ field: items[0]!.field, message: 'out of stock in every single warehouse' }],
      });
    }
    return items.map((item, itemIndex) => ({ itemIndex, warehouseId, quantity: item.quantity }));
  }
  const parts: AllocationPart[] = [];
  items.forEach((item, itemIndex) => {
    const order =
      strategy === 'MOST_STOCK'
        ? [...warehouseIds].sort((a, b) => units(item.productId, b) - units(item.productId, a))
        : warehouseIds;
    let missing = item.quantity;
    for (const warehouseId of order) {
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
