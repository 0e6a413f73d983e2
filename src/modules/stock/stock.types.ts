/** The stock domain's shapes, shared by the service, the REST routes and the GraphQL resolvers. */

export const INVENTORY_ITEM_STATES = ['AVAILABLE', 'COMMITTED', 'RESERVED', 'UNAVAILABLE'] as const;
export type InventoryItemState = (typeof INVENTORY_ITEM_STATES)[number];

export const INVENTORY_ITEM_REASONS = ['NONE', 'BROKEN'] as const;
export type InventoryItemReason = (typeof INVENTORY_ITEM_REASONS)[number];

export const STOCK_MUTATION_SOURCES = [
  'REGISTER',
  'ALLOCATION',
  'RESTOCK',
  'CORRECTION',
  'EXTERNAL',
  'UNKNOWN',
] as const;
export type StockMutationSource = (typeof STOCK_MUTATION_SOURCES)[number];

export const STOCK_MUTATION_STATUSES = ['PENDING', 'PROCESSED', 'FAILING'] as const;
export type StockMutationStatus = (typeof STOCK_MUTATION_STATUSES)[number];

/** One inventory line with what its readers need from the catalog (SKU, business, position code). */
export interface InventoryLine {
  id: string;
  tenantId: string;
  productId: string;
  sku: string;
  warehouseId: string;
  businessId: string;
  positionId: string | null;
  positionCode: string | null;
  batchNumber: string | null;
  serialNumber: string | null;
  expiresAt: Date | null;
  state: InventoryItemState;
  reason: InventoryItemReason;
  quantity: number;
  costAmount: number | null;
  costCurrency: string | null;
  gtin: string[];
  rfid: string | null;
  weightAmount: number | null;
  weightUnit: string | null;
  createdAt: Date;
  updatedAt: Date;
}

/** The lines of one SKU at one warehouse position (or without a position), summed. */
export interface InventoryGroup {
  productId: string;
  sku: string;
  /** Null when the group sums a sales channel's warehouses. */
  warehouseId: string | null;
  positionId: string | null;
  ids: string[];
  quantity: number;
  quantityAvailable: number;
  quantityCommitted: number;
  quantityReserved: number;
  quantityUnavailable: number;
  quantityExpected: number;
  /** What the warehouse keeps back (over a channel's warehouses: what they keep back for it). */
  quantitySafety: number;
  /** Available beyond the safety stock: what can be sold. */
  quantitySellable: number;
  costAmount: number | null;
  costCurrency: string | null;
}

/** An entity behind a stock mutation, as stored in its `references`. */
export interface StockReference {
  /** `Bundle`: the bundle whose component's units the row moved (its `id` is the bundle's product id). */
  type: 'Bundle' | 'InventoryList' | 'Order' | 'Reservation' | 'Supply' | 'Transfer';
  id: string;
}

/** Who was behind a change: the credential of the request. */
export interface StockActor {
  type: string;
  id: string;
}

/** A warehouse, or a position inside it. */
export interface StockLocation {
  warehouseId: string;
  positionId: string | null;
}

/** One row of the stock ledger. */
export interface LedgerEntry {
  id: string;
  source: StockMutationSource;
  status: StockMutationStatus;
  delta: number;
  newQuantity: number;
  productId: string;
  warehouseId: string;
  positionId: string | null;
  inventoryItemId: string | null;
  actorType: string;
  actorId: string;
  references: StockReference[];
  messages: unknown[];
  createdAt: Date;
  /** Order of writing; with `createdAt` the ledger's sort key. */
  sequence: number;
  /** After a change of safety stock: the new one, and the sales channel it holds for (null: every one). */
  safetyStock: number | null;
  safetyChannelId: string | null;
}

/** Units of a product kept back at a warehouse, for every sales channel or (`channelId`) for one. */
export interface SafetyStockRecord {
  id: string;
  productId: string;
  sku: string;
  warehouseId: string;
  channelId: string | null;
  quantity: number;
  updatedAt: Date;
}
