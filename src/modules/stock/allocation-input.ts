import { badRequest, idTaken, type FieldProblem } from '../../kernel/errors';
import type { Db, Tx } from '../../kernel/db';
import { isUuid } from '../../kernel/ids';

/** Most items one order or reservation may hold. */
export const MAX_ITEMS = 100;
/** Most units one item may ask for. */
export const MAX_ITEM_QUANTITY = 1_000_000;

/** One 400 (VALIDATION_ERROR) naming every problem, the first one in `extensions.field`. */
export function rejected(problems: FieldProblem[]) {
  const shown = problems.slice(0, 5).map((p) => `${p.field} ${p.message}`);
  if (problems.length > 5) shown.push(`and ${problems.length - 5} more`);
  return badRequest(shown.join(', '), problems);
}

export const invalid = (field: string, message: string) => rejected([{ field, message }]);

/** An optional client-chosen id: a UUID not yet used (CONFLICT otherwise is the caller's check). */
export function checkNewId(field: string, id: string | null | undefined): string | undefined {
  if (id == null) return undefined;
  if (!isUuid(id)) throw invalid(field, 'is not a valid id');
  return id.toLowerCase();
}

export interface ItemInput {
  sku: string;
  quantity: number;
}

export interface ResolvedItem {
  productId: string;
  sku: string;
  quantity: number;
  field: string;
}

export interface AllocationTarget {
  businessId: string;
  warehouseId: string;
  channelId: string;
  items: ResolvedItem[];
}

interface AllocationInput {
  business_id: string;
  warehouse_id: string;
  channel_id: string;
  items: ItemInput[];
}

/**
 * The checks of an order or reservation that need no database: the ids are UUIDs (returned in
 * lower case) and the items are 1 to MAX_ITEMS with whole quantities in range. Every problem is
 * reported at once, as a VALIDATION_ERROR per field.
 */
export function checkAllocationInput(input: AllocationInput): {
  businessId: string;
  warehouseId: string;
  channelId: string;
} {
  const problems: FieldProblem[] = [];
  const at = (field: string, message: string) => problems.push({ field: `input.${field}`, message });
  const id = (field: 'business_id' | 'warehouse_id' | 'channel_id') => {
    const value = input[field];
    if (!isUuid(value)) at(field, 'is not a valid id');
    return value.toLowerCase();
  };
  const [businessId, warehouseId, channelId] = [id('business_id'), id('warehouse_id'), id('channel_id')];
  if (input.items.length === 0) at('items', 'must hold at least one item');
  if (input.items.length > MAX_ITEMS) at('items', `may hold at most ${MAX_ITEMS} items`);
  input.items.forEach((item, index) => {
    if (!Number.isInteger(item.quantity) || item.quantity < 1 || item.quantity > MAX_ITEM_QUANTITY) {
      at(`items[${index}].quantity`, `must be a whole number from 1 to ${MAX_ITEM_QUANTITY}`);
    }
  });
  if (problems.length > 0) throw rejected(problems);
  return { businessId, warehouseId, channelId };
}

/**
 * Checks the business, warehouse, sales channel and items an order or reservation names against
 * the tenant's catalog: every problem is reported at once, as a VALIDATION_ERROR per field.
 */
export async function resolveAllocationTarget(
  tx: Tx | Db,
  tenantId: string,
  input: AllocationInput,
): Promise<AllocationTarget> {
  const { businessId, warehouseId, channelId } = checkAllocationInput(input);
  const problems: FieldProblem[] = [];
  const at = (field: string, message: string) => problems.push({ field: `input.${field}`, message });

  // One statement for the whole check: the business, the warehouse, the channel and the products.
  const [found] = await tx.$queryRaw<
    {
      business: boolean | null;
      warehouseBusinessId: string | null;
      channel: boolean | null;
      products: { id: string; sku: string }[];
    }[]
  >`
    SELECT (SELECT true FROM businesses WHERE tenant_id = ${tenantId}::uuid AND id = ${businessId}::uuid) AS business,
           (SELECT business_id FROM warehouses WHERE tenant_id = ${tenantId}::uuid AND id = ${warehouseId}::uuid) AS "warehouseBusinessId",
           (SELECT true FROM sales_channels WHERE tenant_id = ${tenantId}::uuid AND id = ${channelId}::uuid) AS channel,
           coalesce((SELECT json_agg(json_build_object('id', p.id, 'sku', p.sku))
                       FROM products p
                      WHERE p.tenant_id = ${tenantId}::uuid AND p.sku = ANY(${[...new Set(input.items.map((item) => item.sku))]}::text[])), '[]') AS products`;
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
      field: `input.items[${index}].quantity`,
    };
  });
  if (problems.length > 0) throw rejected(problems);
  return { businessId, warehouseId, channelId, items };
}

/** The ID_TAKEN of a client-chosen id. */
export const clientIdTaken = (kind: string, id: string) => idTaken(`a ${kind} with id "${id}" already exists`);
