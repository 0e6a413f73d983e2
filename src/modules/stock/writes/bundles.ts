/**
 * Bundles in the allocating verbs: a bundle has no lines of its own, so a request of a bundle is
 * the requests of its components (the bundle's quantity times each component's), held by the same
 * holder and reported on the same input field. The verbs expand before they lock, so the
 * components' locks are taken in the one global order with every other pair of the write.
 */
import type { DbOrTx } from '../../../kernel/db';
import * as catalog from '../../catalog';
import type { StockReference } from '../stock.types';
import type { AllocationRequest } from './allocating';

/**
 * The references of a ledger row that moves units of a bundle's component: the change's own (the
 * order, the reservation) followed by the bundle; the change's own alone for any other row.
 */
export const withBundle = (
  references: StockReference[],
  bundleId: string | null | undefined,
): StockReference[] | undefined => (bundleId ? [...references, { type: 'Bundle', id: bundleId }] : undefined);

/** A component request expanded from a bundle request: `bundle` is the request it came from. */
export type ExpandedRequest = AllocationRequest & { bundle?: AllocationRequest };

/** The requests with every bundle request replaced by its components' requests, in order. */
export async function expandBundles(db: DbOrTx, tenantId: string, requests: AllocationRequest[]) {
  const components = await catalog.bundleComponents(db, tenantId, [...new Set(requests.map((r) => r.productId))]);
  if (components.length === 0) return requests as ExpandedRequest[];
  return requests.flatMap((request): ExpandedRequest[] => {
    const own = components.filter((component) => component.bundleId === request.productId);
    if (own.length === 0) return [request];
    return own.map((component) => ({
      ...request,
      productId: component.componentId,
      sku: component.sku,
      quantity: request.quantity * Number(component.quantity),
      bundle: request,
    }));
  });
}

/**
 * Items (of an order, a reservation) with every item of a bundle replaced by its components' units
 * under its id, each naming the bundle (`bundleId`).
 */
export async function expandItems<Item extends { id: string; productId: string; quantity: number }>(
  db: DbOrTx,
  tenantId: string,
  items: Item[],
): Promise<(Item & { bundleId?: string })[]> {
  const components = await catalog.bundleComponents(db, tenantId, [...new Set(items.map((item) => item.productId))]);
  if (components.length === 0) return items;
  return items.flatMap((item) => {
    const own = components.filter((component) => component.bundleId === item.productId);
    if (own.length === 0) return [item];
    return own.map((component) => ({
      ...item,
      productId: component.componentId,
      quantity: item.quantity * Number(component.quantity),
      bundleId: item.productId,
    }));
  });
}

/**
 * The pairs to lock and plan for items at warehouses: a bundle's pairs are its components', and
 * `bundleAvailability` turns their available units into the bundle's.
 */
export async function bundlePlan(db: DbOrTx, tenantId: string, pairs: { productId: string; warehouseId: string }[]) {
  const components = await catalog.bundleComponents(db, tenantId, [...new Set(pairs.map((pair) => pair.productId))]);
  const lockPairs = pairs.flatMap((pair) => {
    const own = components.filter((component) => component.bundleId === pair.productId);
    return own.length === 0 ? [pair] : own.map((component) => ({ ...pair, productId: component.componentId }));
  });
  /** Adds each bundle's availability at each warehouse: the fewest bundles its components' units make. */
  const bundleAvailability = (available: Map<string, number>) => {
    for (const pair of pairs) {
      const own = components.filter((component) => component.bundleId === pair.productId);
      if (own.length === 0) continue;
      const each = own.map((component) =>
        Math.floor((available.get(`${component.componentId}:${pair.warehouseId}`) ?? 0) / Number(component.quantity)),
      );
      available.set(`${pair.productId}:${pair.warehouseId}`, Math.min(...each));
    }
    return available;
  };
  return { lockPairs, bundleAvailability };
}
