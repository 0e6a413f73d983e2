import { z } from '../../kernel/rest/schemas';

/** Most entries one POST or PATCH may carry; larger batches are split by the client. */
export const MAX_ITEMS_PER_WRITE = 1000;
/** Most line ids one DELETE may name. */
export const MAX_IDS_PER_DELETE = 1000;
const MAX_QUANTITY = 1_000_000_000;
/** Expiry dates are Unix milliseconds; anything before this (March 1973) is taken as seconds sent by mistake. */
export const MIN_EXPIRES_AT = 100_000_000_000;
const MAX_EXPIRES_AT = 253_402_300_799_999;

const Quantity = z.int().min(0).max(MAX_QUANTITY);
const Text = (max: number, description: string) => z.string().min(1).max(max).openapi({ description });

const Cost = z
  .object({
    amount: z
      .int()
      .min(0)
      .max(1_000_000_000_000)
      .openapi({ description: "Cost per unit in the currency's minor unit (cents)." }),
    currency: z
      .string()
      .regex(/^[A-Z]{3}$/)
      .openapi({ description: 'ISO 4217 currency code, for example `EUR`.' }),
  })
  .strict()
  .openapi('InventoryCost');

const Weight = z
  .object({
    amount: z.number().min(0).max(1_000_000_000).openapi({ description: 'Weight of one unit.' }),
    unit: z.string().min(1).max(16).openapi({ description: 'Unit of `amount`, for example `g` or `kg`.' }),
  })
  .strict()
  .openapi('InventoryWeight');

const ExpiresAt = z.int().min(MIN_EXPIRES_AT).max(MAX_EXPIRES_AT).openapi({
  description: 'Expiry date, Unix timestamp in **milliseconds** (values before 1973 are refused as likely seconds).',
});

const common = {
  position: Text(
    64,
    'Code of a position of the warehouse (create positions with the GraphQL `createPosition`); omitted: no position.',
  ),
  gtin: z.array(z.string().min(1).max(64)).max(20).openapi({ description: 'Scannable barcodes, at most 20.' }),
  rfid: Text(128, 'RFID tag.'),
  cost: Cost,
  batchNumber: Text(100, 'Batch (lot) number.'),
  serialNumber: Text(100, 'Serial number.'),
  weight: Weight,
  expiresAt: ExpiresAt,
};

/** A line of 24 T-shirts: the example of the reference (`/docs`), as sent and as answered. */
const ITEM_EXAMPLE = {
  sku: 'TSHIRT-M',
  warehouseId: 'wh_3kq9v2',
  businessId: 'bu_7d1x0c',
  quantity: 24,
  state: 'AVAILABLE',
  position: 'A-03-2',
  gtin: ['4006381333931'],
  cost: { amount: 750, currency: 'EUR' },
  batchNumber: 'LOT-2026-47',
  weight: { amount: 180, unit: 'g' },
};

export const InventoryItemCreate = z
  .object({
    sku: Text(100, 'SKU of a product of the tenant.'),
    warehouseId: Text(64, 'Id of a warehouse of the tenant.'),
    businessId: Text(64, 'Id of the business that owns the warehouse.'),
    quantity: Quantity.optional().openapi({ description: `Units to add, 0 to ${MAX_QUANTITY}; default 1.` }),
    state: z.enum(['AVAILABLE', 'UNAVAILABLE']).optional().openapi({ description: 'Default AVAILABLE.' }),
    reason: z
      .enum(['BROKEN', 'NONE'])
      .optional()
      .openapi({ description: 'Why the units are unavailable; BROKEN only with state UNAVAILABLE. Default NONE.' }),
    position: common.position.optional(),
    gtin: common.gtin.optional(),
    rfid: common.rfid.optional(),
    cost: common.cost.optional(),
    batchNumber: common.batchNumber.optional(),
    serialNumber: common.serialNumber.optional(),
    weight: common.weight.optional(),
    expiresAt: common.expiresAt.optional(),
  })
  .strict()
  .openapi('InventoryItemCreate', { example: ITEM_EXAMPLE });

export const InventoryItemUpdate = z
  .object({
    id: Text(64, 'Id of the line (from `inventoryItems` or the `ids` of an Inventory node).'),
    quantity: Quantity.optional().openapi({ description: "The counted quantity: replaces the line's quantity." }),
    expectedQuantity: Quantity.optional().openapi({
      description:
        'Compare-and-set: the quantity the line must hold when the request is applied (as the client last read ' +
        'it). If any line holds another, the whole request is a 409 CONFLICT whose `details` name each such ' +
        'line (`id`, `expected`, `actual`) and nothing is applied.',
    }),
    state: z
      .enum(['AVAILABLE', 'UNAVAILABLE'])
      .optional()
      .openapi({ description: 'New state; AVAILABLE clears the reason.' }),
    reason: z.enum(['BROKEN']).optional().openapi({ description: 'Only with the resulting state UNAVAILABLE.' }),
    position: common.position
      .nullable()
      .optional()
      .openapi({ description: 'Moves the line to this position of its warehouse; null: no position.' }),
    gtin: common.gtin.nullable().optional(),
    rfid: common.rfid.nullable().optional(),
    cost: common.cost.nullable().optional(),
    batchNumber: common.batchNumber.nullable().optional(),
    serialNumber: common.serialNumber.nullable().optional(),
    weight: common.weight.nullable().optional(),
    expiresAt: common.expiresAt.nullable().optional(),
  })
  .strict()
  .openapi('InventoryItemUpdate');

export type InventoryItemCreateInput = z.output<typeof InventoryItemCreate>;
export type InventoryItemUpdateInput = z.output<typeof InventoryItemUpdate>;

export const InventoryItemOutput = z
  .object({
    id: z.string().openapi({ description: 'Id of the line.' }),
    sku: z.string(),
    warehouseId: z.string(),
    businessId: z.string().openapi({ description: 'The business owning the warehouse.' }),
    position: z.string().nullable().openapi({ description: 'Code of the position; null: no position.' }),
    quantity: z.int().openapi({ description: 'Units on the line.' }),
    state: z.enum(['AVAILABLE', 'COMMITTED', 'RESERVED', 'UNAVAILABLE']),
    reason: z.enum(['BROKEN', 'NONE']).nullable().openapi({ description: 'Null unless the state is UNAVAILABLE.' }),
    gtin: z.array(z.string()),
    rfid: z.string().nullable(),
    cost: Cost.nullable(),
    batchNumber: z.string().nullable(),
    serialNumber: z.string().nullable(),
    weight: Weight.nullable(),
    expiresAt: z.int().nullable().openapi({ description: 'Unix milliseconds.' }),
    createdAt: z.int().openapi({ description: 'Unix milliseconds.' }),
    updatedAt: z.int().openapi({ description: 'Unix milliseconds.' }),
  })
  .strict()
  .openapi('InventoryItem', {
    example: {
      ...ITEM_EXAMPLE,
      id: 'il_5m2r8t',
      reason: null,
      rfid: null,
      serialNumber: null,
      expiresAt: null,
      createdAt: 1_795_000_000_000,
      updatedAt: 1_795_000_000_000,
    },
  });

export type InventoryItemRecord = z.output<typeof InventoryItemOutput>;

/** `{data: [line, ...], page: null, meta: null}`: the lines a write resulted in. */
export const InventoryItemsEnvelope = z.object({ data: z.array(InventoryItemOutput), page: z.null(), meta: z.null() });
