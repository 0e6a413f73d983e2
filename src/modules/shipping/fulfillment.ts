/**
 * The options of a checkout: which of a channel's methods can serve its destination and its items,
 * how the items would ship, and what each costs. The stock planner (`planAllocation`) says which
 * warehouses ship what; availability is read without locks, so an option is a forecast the hold
 * confirms.
 */
import type { DbOrTx } from '../../kernel/db';
import { AppError } from '../../kernel/errors';
import { bundleComponents } from '../catalog';
import { planAllocation, resolveChannelTarget } from '../stock';
import { parcelWeight, shippingCharge } from './rates';
import * as repository from './shipping.repository';
import type { FulfillmentOptionQuote, FulfillmentQuery, ShippingMethodRecord } from './shipping.types';

/** Units of one product the planner must find for a line: the line's product, or a component of its bundle. */
interface PlannedUnits {
  key: string;
  productId: string;
  sku: string;
  quantity: number;
}

/** What the planner answered for the checkout's lines over the channel's warehouses. */
interface StockPicture {
  /** The groups of the first business whose warehouses can ship every line; null when none can. */
  shipment: { warehouseId: string; lineKeys: string[] }[] | null;
  /** `productId:warehouseId` → units available now, over every warehouse of the channel. */
  available: Map<string, number>;
  planned: PlannedUnits[];
}

/**
 * How the lines would ship: the channel's warehouses are grouped by business (a shipment leaves
 * one business), the business of the first warehouse first; the first business whose warehouses
 * have every line plans the shipment by the channel's allocation strategy. A line split over two
 * warehouses is in both groups.
 */
async function stockPicture(
  db: DbOrTx,
  tenantId: string,
  query: FulfillmentQuery,
  planned: PlannedUnits[],
  warehouses: { warehouseId: string; businessId: string }[],
): Promise<StockPicture> {
  const businesses = [...new Set(warehouses.map((warehouse) => warehouse.businessId))];
  const available = new Map<string, number>();
  let shipment: StockPicture['shipment'] = null;
  for (const businessId of businesses) {
    const target = await resolveChannelTarget(db, tenantId, {
      business_id: businessId,
      channel_id: query.channelId,
      items: planned.map((units) => ({ sku: units.sku, quantity: units.quantity })),
      destination: query.destination ? { country: query.destination.country } : null,
    });
    for (const [key, units] of target.availableGuess) available.set(key, units);
    if (shipment !== null) continue;
    try {
      const parts = planAllocation(
        target.items,
        target.warehouseIds,
        target.availableGuess,
        target.strategy,
        target.nearest,
      );
      const groups = new Map<string, string[]>();
      for (const part of parts) {
        const keys = groups.get(part.warehouseId) ?? [];
        const key = planned[part.itemIndex]!.key;
        if (!keys.includes(key)) keys.push(key);
        groups.set(part.warehouseId, keys);
      }
      shipment = [...groups].map(([warehouseId, lineKeys]) => ({ warehouseId, lineKeys }));
    } catch (error) {
      if (!(error instanceof AppError && error.key === 'OUT_OF_STOCK')) throw error;
    }
  }
  return { shipment, available, planned };
}

/**
 * What the planner looks for: each line's product, a bundle's components instead of the bundle (a
 * bundle has no stock of its own: the line's quantity times each component's).
 */
async function plannedUnits(
  db: DbOrTx,
  tenantId: string,
  query: FulfillmentQuery,
  products: Map<string, { sku: string }>,
): Promise<PlannedUnits[]> {
  const components = await bundleComponents(db, tenantId, [...products.keys()]);
  return query.lines.flatMap((line) => {
    const own = components.filter((component) => component.bundleId === line.productId);
    if (own.length === 0) {
      return [
        { key: line.key, productId: line.productId, sku: products.get(line.productId)!.sku, quantity: line.quantity },
      ];
    }
    return own.map((component) => ({
      key: line.key,
      productId: component.componentId,
      sku: component.sku,
      quantity: line.quantity * Number(component.quantity),
    }));
  });
}

/** Whether the warehouse has every line available, units of one product together. */
function holdsEvery(planned: readonly PlannedUnits[], warehouseId: string, available: Map<string, number>) {
  const needed = new Map<string, number>();
  for (const units of planned) needed.set(units.productId, (needed.get(units.productId) ?? 0) + units.quantity);
  return [...needed].every(([productId, units]) => (available.get(`${productId}:${warehouseId}`) ?? 0) >= units);
}

/**
 * The quotes of the channel's active methods for the query, in the methods' creation order (a
 * pickup method's warehouses in the channel's priority order). A SHIPPING method is offered when
 * the destination's country is one of its countries and a business of the channel can ship every
 * line; a PICKUP method, at each of its warehouses that has every line, when there is no
 * destination or its country is one of the method's. Neither is offered when its rate cannot
 * charge the parcel (a WEIGHT method and a product without a weight, or a parcel above the last
 * bracket). Lines of unknown products, no lines or another currency than the channel's: none.
 */
export async function fulfillmentOptions(
  db: DbOrTx,
  tenantId: string,
  channel: { id: string; currency: string },
  query: FulfillmentQuery,
): Promise<FulfillmentOptionQuote[]> {
  if (query.lines.length === 0 || query.currency.toUpperCase() !== channel.currency) return [];
  const methods = await repository.methodsOfChannel(db, tenantId, channel.id, true);
  const country = query.destination?.country.toUpperCase() ?? null;
  const serves = (method: ShippingMethodRecord) =>
    country === null ? method.type === 'PICKUP' : method.countries.includes(country);
  const candidates = methods.filter(serves);
  if (candidates.length === 0) return [];
  const products = await repository.productsOf(db, tenantId, [...new Set(query.lines.map((line) => line.productId))]);
  const byId = new Map(products.map((product) => [product.id, product]));
  if (query.lines.some((line) => !byId.has(line.productId))) return [];
  const weightGrams = parcelWeight(
    query.lines.map((line) => ({ weightGrams: byId.get(line.productId)!.weightGrams, quantity: line.quantity })),
  );
  const warehouses = await repository.channelWarehouses(db, tenantId, channel.id);
  if (warehouses.length === 0) return [];
  const stock = await stockPicture(db, tenantId, query, await plannedUnits(db, tenantId, query, byId), warehouses);
  const allKeys = query.lines.map((line) => line.key);
  const quotes: FulfillmentOptionQuote[] = [];
  for (const method of candidates) {
    const amount = shippingCharge(method, { subtotal: query.subtotal, weightGrams });
    if (amount === null) continue;
    if (method.type === 'SHIPPING') {
      if (stock.shipment === null) continue;
      quotes.push({
        id: `ship_${method.id}`,
        methodId: method.id,
        type: 'shipping',
        title: method.title,
        amount,
        warehouseId: null,
        groups: stock.shipment,
      });
      continue;
    }
    for (const warehouse of warehouses) {
      if (!method.pickupWarehouseIds.includes(warehouse.warehouseId)) continue;
      if (!holdsEvery(stock.planned, warehouse.warehouseId, stock.available)) continue;
      quotes.push({
        id: `pickup_${method.id}_${warehouse.warehouseId}`,
        methodId: method.id,
        type: 'pickup',
        title: `${method.title} (${warehouse.name})`,
        amount,
        warehouseId: warehouse.warehouseId,
        groups: [{ warehouseId: warehouse.warehouseId, lineKeys: allKeys }],
      });
    }
  }
  return quotes;
}
