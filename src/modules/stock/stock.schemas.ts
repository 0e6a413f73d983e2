/** The stock queries' GraphQL arguments, parsed at the edge: the service receives them valid and typed. */
import { z } from 'zod';
import { isUuid } from '../../kernel/ids';
import { IdempotencyKey } from '../../kernel/graphql/idempotency';
import { id } from '../../kernel/validation';
import { INVENTORY_ITEM_STATES } from './stock.types';

const MAX_VALUES = 100;

/** A list filter: absent, or 1 to 100 values. */
const list = <T extends z.ZodType>(item: T) =>
  z.array(item).min(1, 'must not be an empty list').max(MAX_VALUES, `may hold at most ${MAX_VALUES} values`);

/** A list filter of ids, named by the first that is not one; in lower case. */
const idList = list(z.string())
  .superRefine((values, context) => {
    const bad = values.find((value) => !isUuid(value));
    if (bad !== undefined) context.addIssue({ code: 'custom', message: `holds "${bad}", which is not a valid id` });
  })
  .transform((values) => values.map((value) => value.toLowerCase()));

const Inequality = z.object({
  eq: z.number().nullish(),
  gt: z.number().nullish(),
  gte: z.number().nullish(),
  lt: z.number().nullish(),
  lte: z.number().nullish(),
});

/** A list of SKUs to filter by: 1 to 100. */
export const SkuList = list(z.string());

/** `filters:` of `inventory` and `inventoryItems`: every given filter must hold. */
export const StockFilterArguments = z.object({
  ids: idList.nullish(),
  sku: SkuList.nullish(),
  warehouse_id: idList.nullish(),
  business_id: idList.nullish(),
  location_id: idList.nullish(),
  status: list(z.enum(INVENTORY_ITEM_STATES)).nullish(),
  batch_number: list(z.string()).nullish(),
  serial_number: list(z.string()).nullish(),
  quantity: Inequality.nullish(),
});
export type StockFilterArguments = z.output<typeof StockFilterArguments>;

/** `inventory(sku:, warehouse_id:, business_id:, filters:)`. */
export const InventoryArguments = z.object({
  sku: z.string().nullish(),
  warehouse_id: id().nullish(),
  business_id: id().nullish(),
  filters: StockFilterArguments.extend({
    channel_id: id()
      .transform((value) => value.toLowerCase())
      .nullish(),
  }).nullish(),
});
export type InventoryArguments = z.output<typeof InventoryArguments>;

/** `inventoryItems(filters:)`: at least one filter. */
export const InventoryItemsArguments = z.object({
  filters: StockFilterArguments.refine((filters) => Object.values(filters).some((value) => value != null), {
    message: 'needs at least one filter',
  }),
});

const COUNTED_QUANTITY = z.int().min(0).max(1_000_000_000);

/** One line of `setInventoryQuantities`. */
const QuantityCount = z.object({
  item_id: z.string().min(1).max(64),
  quantity: COUNTED_QUANTITY,
  change_from_quantity: COUNTED_QUANTITY.nullish(),
});
export type QuantityCount = z.output<typeof QuantityCount>;

/** `setInventoryQuantities(input:)`. */
export const SetInventoryQuantitiesInput = z.object({
  items: z.array(QuantityCount).min(1, 'must not be an empty list').max(1000, 'may hold at most 1000 lines'),
  idempotency_key: IdempotencyKey,
});

/** The most units a safety stock may keep back (as many as one line may hold). */
export const MAX_SAFETY_STOCK = 1_000_000_000;

/** `setSafetyStock(input:)`. */
export const SafetyStockInput = z.object({
  sku: z.string().min(1).max(100),
  warehouse_id: id(),
  channel_id: id().nullish(),
  quantity: z.int().min(0).max(MAX_SAFETY_STOCK),
});
export type SafetyStockInput = z.output<typeof SafetyStockInput>;
