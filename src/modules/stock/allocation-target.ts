/**
 * The catalog check of an order or reservation: its business, warehouse, sales channel and SKUs
 * must be the tenant's. Fields are named relative to the input (`items[2].sku`).
 */
import { z } from 'zod';
import { idTaken, type FieldProblem } from '../../kernel/errors';
import type { Db, Tx } from '../../kernel/db';
import { parseFirstRow, uuid } from '../../kernel/rows';
import { invalidInput } from '../../kernel/validation';
import type { AllocationTargetInput } from './allocation.schemas';
import { ALLOCATION_STRATEGIES, type AllocationStrategy } from '../catalog';
import { nearestFirst, type Destination } from './allocation-plan';

export interface ResolvedItem {
  productId: string;
  sku: string;
  quantity: number;
  /** The input field an out-of-stock error names. */
  field: string;
}

export interface AllocationTarget {
  businessId: string;
  warehouseId: string;
  channelId: string;
  items: ResolvedItem[];
}

const Found = z.object({
  business: z.boolean().nullable(),
  warehouseBusinessId: uuid.nullable(),
  channel: z.boolean().nullable(),
  products: z.array(z.object({ id: uuid, sku: z.string() })),
});

/**
 * Checks the business, warehouse, sales channel and items an order or reservation names against
 * the tenant's catalog: every problem is reported at once, as a VALIDATION_ERROR per field.
 */
export async function resolveAllocationTarget(
  tx: Tx | Db,
  tenantId: string,
  input: AllocationTargetInput,
): Promise<AllocationTarget> {
  const { business_id: businessId, warehouse_id: warehouseId, channel_id: channelId } = input;
  const problems: FieldProblem[] = [];
  const at = (field: string, message: string) => problems.push({ field, message });

  // One statement for the whole check: the business, the warehouse, the channel and the products.
  const rows = await tx.$queryRaw<unknown[]>`
    SELECT (SELECT true FROM businesses WHERE tenant_id = ${tenantId}::uuid AND id = ${businessId}::uuid) AS business,
           (SELECT business_id FROM warehouses WHERE tenant_id = ${tenantId}::uuid AND id = ${warehouseId}::uuid) AS
             "warehouseBusinessId",
           (SELECT true FROM sales_channels WHERE tenant_id = ${tenantId}::uuid AND id = ${channelId}::uuid) AS channel,
           coalesce((SELECT json_agg(json_build_object('id', p.id, 'sku', p.sku))
                       FROM products p
                      WHERE p.tenant_id = ${tenantId}::uuid AND p.sku =
                        ANY(${[...new Set(input.items.map((item) => item.sku))]}::text[])), '[]') AS products`;
  const found = parseFirstRow(Found, rows);
  const business = found?.business ?? null;
  const warehouse = found?.warehouseBusinessId ? { businessId: found.warehouseBusinessId } : null;
  const channel = found?.channel ?? null;
  const products = found?.products ?? [];
  if (!business) at('business_id', `"${input.business_id}" is not a business of the tenant`);
  if (!warehouse) at('warehouse_id', `"${input.warehouse_id}" is not a warehouse of the tenant`);
  else if (business && warehouse.businessId !== businessId)
    at('warehouse_id', `belongs to business "${warehouse.businessId}", not "${businessId}"`);
  if (!channel) at('channel_id', `"${input.channel_id}" is not a sales channel of the tenant`);
  const productBySku = new Map(products.map((product) => [product.sku, product]));
  const items = input.items.map((item, index) => {
    const product = productBySku.get(item.sku);
    if (!product) at(`items[${index}].sku`, `"${item.sku}" is not a product of the tenant`);
    return {
      productId: product?.id ?? '',
      sku: item.sku,
      quantity: item.quantity,
      field: `items[${index}].quantity`,
    };
  });
  if (problems.length > 0) throw invalidInput(problems);
  return { businessId, warehouseId, channelId, items };
}

/** An order or reservation through a sales channel, spread over its warehouses by `strategy`. */
export interface ChannelTarget {
  businessId: string;
  channelId: string;
  /** The channel's warehouses of the business, in priority order. */
  warehouseIds: string[];
  strategy: AllocationStrategy;
  items: ResolvedItem[];
  /** `productId:warehouseId` → units sellable when the target was read, without locks: a guess to plan with. */
  availableGuess: Map<string, number>;
  /** The warehouses nearest the destination first (CLOSEST); priority order without a destination. */
  nearest: string[];
}

const ChannelFound = z.object({
  business: z.boolean().nullable(),
  strategy: z.enum(ALLOCATION_STRATEGIES).nullable(),
  warehouseIds: z.array(uuid),
  places: z.array(
    z.object({
      id: uuid,
      latitude: z.number().nullable(),
      longitude: z.number().nullable(),
      countryCode: z.string().nullable(),
    }),
  ),
  products: z.array(z.object({ id: uuid, sku: z.string() })),
  available: z.array(z.object({ productId: uuid, warehouseId: uuid, quantity: z.coerce.number() })),
});

/**
 * Checks the business, sales channel and items of an order or reservation without a warehouse:
 * the channel must sell from at least one warehouse of the business. The strategy is the
 * request's, else the channel's. In the same statement, what each warehouse has available of each
 * item beyond its safety stock (sellable now, as `sellableNow` counts it; read without locks: a first guess only).
 */
export async function resolveChannelTarget(
  tx: Tx | Db,
  tenantId: string,
  input: Omit<AllocationTargetInput, 'warehouse_id'> & {
    allocation_strategy?: AllocationStrategy | null;
    destination?: Destination | null;
  },
): Promise<ChannelTarget> {
  const { business_id: businessId, channel_id: channelId } = input;
  const skus = [...new Set(input.items.map((item) => item.sku))];
  const rows = await tx.$queryRaw<unknown[]>`
    WITH w AS (
      SELECT l.warehouse_id, l.priority FROM channel_warehouses l JOIN warehouses wh ON wh.id = l.warehouse_id
       WHERE l.tenant_id = ${tenantId}::uuid AND l.channel_id = ${channelId}::uuid
         AND wh.business_id = ${businessId}::uuid
    ), p AS (
      SELECT id, sku FROM products WHERE tenant_id = ${tenantId}::uuid AND sku = ANY(${skus}::text[])
    ), pair AS (
      SELECT p.id AS product_id, w.warehouse_id FROM p CROSS JOIN w
    ), held AS MATERIALIZED (
      SELECT * FROM expired_reservation_holdings(${tenantId}::uuid,
        coalesce((SELECT array_agg(product_id) FROM pair), '{}'),
        coalesce((SELECT array_agg(warehouse_id) FROM pair), '{}'))
    )
    SELECT (SELECT true FROM businesses WHERE tenant_id = ${tenantId}::uuid AND id = ${businessId}::uuid) AS business,
           (SELECT allocation_strategy::text FROM sales_channels WHERE tenant_id = ${tenantId}::uuid
               AND id = ${channelId}::uuid) AS strategy,
           coalesce((SELECT array_agg(warehouse_id ORDER BY priority) FROM w), '{}') AS "warehouseIds",
           coalesce((SELECT json_agg(json_build_object('id', wh.id, 'latitude', wh.latitude, 'longitude', wh.longitude,
                              'countryCode', wh.country_code) ORDER BY w.priority)
                       FROM w JOIN warehouses wh ON wh.id = w.warehouse_id), '[]') AS places,
           coalesce((SELECT json_agg(json_build_object('id', id, 'sku', sku)) FROM p), '[]') AS products,
           coalesce((SELECT json_agg(json_build_object('productId', pair.product_id, 'warehouseId', pair.warehouse_id,
                       'quantity', greatest(0,
                       coalesce((SELECT sum(i.quantity) FROM inventory_items i
                                  WHERE i.tenant_id = ${tenantId}::uuid AND i.product_id = pair.product_id
                                    AND i.warehouse_id = pair.warehouse_id AND i.state = 'AVAILABLE'), 0)
                     + coalesce((SELECT sum(h.quantity) FROM held h
                                  WHERE h.product_id = pair.product_id AND h.warehouse_id = pair.warehouse_id), 0)
                     - stock_safety_stock(${tenantId}::uuid, pair.product_id, pair.warehouse_id, ${channelId}::uuid))))
                       FROM pair), '[]') AS available`;
  const found = parseFirstRow(ChannelFound, rows);
  const problems: FieldProblem[] = [];
  if (!found?.business)
    problems.push({ field: 'business_id', message: `"${businessId}" is not a business of the tenant` });
  if (!found?.strategy)
    problems.push({ field: 'channel_id', message: `"${channelId}" is not a sales channel of the tenant` });
  else if (found.business && found.warehouseIds.length === 0) {
    problems.push({
      field: 'channel_id',
      message: 'sells from no warehouse of the business: give warehouse_id, or setSalesChannelWarehouses first',
    });
  }
  const productBySku = new Map((found?.products ?? []).map((product) => [product.sku, product]));
  const items = input.items.map((item, index) => {
    const product = productBySku.get(item.sku);
    if (!product)
      problems.push({ field: `items[${index}].sku`, message: `"${item.sku}" is not a product of the tenant` });
    return { productId: product?.id ?? '', sku: item.sku, quantity: item.quantity, field: `items[${index}].quantity` };
  });
  if (problems.length > 0) throw invalidInput(problems);
  return {
    businessId,
    channelId,
    warehouseIds: found!.warehouseIds,
    strategy: input.allocation_strategy ?? found!.strategy!,
    items,
    availableGuess: new Map(found!.available.map((row) => [`${row.productId}:${row.warehouseId}`, row.quantity])),
    nearest: nearestFirst(found!.places, input.destination),
  };
}

/** The ID_TAKEN of a client-chosen id. */
export const clientIdTaken = (kind: string, id: string) => idTaken(`a ${kind} with id "${id}" already exists`);
