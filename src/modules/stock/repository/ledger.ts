/** The stock ledger: one row per change of a line, written after the change, and read in pages. */
import { z } from 'zod';
import type { Tx } from '../../../kernel/db';
import type { SqlKeysetList } from '../../../kernel/keyset';
import { int8, int8OrNull, parseRows, timestamp as timestampColumn, uuid, type RowModel } from '../../../kernel/rows';
import { Prisma } from '../../../__generated__/prisma/client';
import {
  STOCK_MUTATION_SOURCES,
  STOCK_MUTATION_STATUSES,
  type LedgerEntry,
  type StockActor,
  type StockMutationSource,
  type StockReference,
} from '../stock.types';
import { bigint, inequality, stockConditions, timestamp, type Inequality, type LineFilter } from './filters';

type Sql = Prisma.Sql;

const pairKey = (productId: string, warehouseId: string) => `${productId}:${warehouseId}`;

const PairTotal = z.object({ productId: uuid, warehouseId: uuid, quantity: int8 });

/** On-hand quantity of each product at each warehouse (all positions and states). */
async function onHandTotals(tx: Tx, tenantId: string, pairs: { productId: string; warehouseId: string }[]) {
  const rows = await tx.$queryRaw<unknown[]>`
    SELECT pair.product_id AS "productId", pair.warehouse_id AS "warehouseId",
           coalesce(sum(i.quantity), 0)::bigint AS quantity
      FROM unnest(${pairs.map((p) => p.productId)}::uuid[], ${pairs.map((p) => p.warehouseId)}::uuid[])
           AS pair(product_id, warehouse_id)
      LEFT JOIN inventory_items i
        ON i.tenant_id = ${tenantId}::uuid AND i.product_id = pair.product_id AND i.warehouse_id = pair.warehouse_id
     GROUP BY pair.product_id, pair.warehouse_id`;
  return new Map(parseRows(PairTotal, rows).map((row) => [pairKey(row.productId, row.warehouseId), row.quantity]));
}

export interface MutationContext {
  source: StockMutationSource;
  actor: StockActor;
  references: StockReference[];
}

/**
 * Writes one ledger row per change, in the order the changes were applied. Call it after applying
 * the changes and while holding the stock locks of their products and warehouses: `new_quantity`
 * of the last change of a pair is the pair's current total, and each earlier one is the next one
 * minus the next one's delta.
 */
export async function recordMutations(tx: Tx, tenantId: string, context: MutationContext, changes: LineChangeRecord[]) {
  if (changes.length === 0) return;
  const pairs = [...new Map(changes.map((c) => [pairKey(c.productId, c.warehouseId), c])).values()];
  const totals = await onHandTotals(tx, tenantId, pairs);
  const newQuantities = new Array<number>(changes.length);
  for (let index = changes.length - 1; index >= 0; index -= 1) {
    const change = changes[index]!;
    const key = pairKey(change.productId, change.warehouseId);
    const after = totals.get(key)!;
    newQuantities[index] = after;
    totals.set(key, after - change.delta);
  }
  await tx.$executeRaw`
    INSERT INTO stock_mutations (id, tenant_id, source, status, delta, new_quantity, product_id, warehouse_id,
      position_id,
                                 inventory_item_id, actor_type, actor_id, "references", created_at, safety_stock,
                                 safety_channel_id)
    SELECT v.id, ${tenantId}::uuid, ${context.source}::stock_mutation_source, 'PROCESSED', v.delta, v.new_quantity,
      v.product_id,
           v.warehouse_id, v.position_id, v.item_id, ${context.actor.type}, ${context.actor.id},
           ${JSON.stringify(changes.map((c) => c.references ?? context.references))}::jsonb -> (v.n - 1)::int,
           clock_timestamp(), v.safety_stock, v.safety_channel_id
      FROM unnest(${changes.map((c) => c.id)}::uuid[], ${changes.map((c) => String(c.delta))}::bigint[],
                  ${newQuantities.map(String)}::bigint[], ${changes.map((c) => c.productId)}::uuid[],
                  ${changes.map((c) => c.warehouseId)}::uuid[], ${changes.map((c) => c.positionId)}::uuid[],
                  ${changes.map((c) => c.lineId)}::uuid[],
                  ${changes.map((c) => (c.safetyStock == null ? null : String(c.safetyStock)))}::bigint[],
                  ${changes.map((c) => c.safetyChannelId ?? null)}::uuid[]) WITH ORDINALITY
           AS v(id, delta, new_quantity, product_id, warehouse_id, position_id, item_id, safety_stock,
                safety_channel_id, n)
     ORDER BY v.n`;
}

export interface LineChangeRecord {
  /** Id of the ledger row. */
  id: string;
  /** The line changed; null for a change of safety stock. */
  lineId: string | null;
  productId: string;
  warehouseId: string;
  positionId: string | null;
  delta: number;
  /** The entities behind this change when they are not the context's. */
  references?: StockReference[];
  /** A change of safety stock: the new safety stock, and the sales channel it holds for (null: every one). */
  safetyStock?: number;
  safetyChannelId?: string | null;
}

export interface LedgerFilter extends Pick<
  LineFilter,
  'skus' | 'productIds' | 'warehouseIds' | 'businessIds' | 'locationIds'
> {
  positionIds?: string[];
  inventoryItemIds?: string[];
  sources?: string[];
  statuses?: string[];
  actorTypes?: string[];
  actorIds?: string[];
  createdAt?: Inequality;
  newQuantity?: Inequality;
  delta?: Inequality;
}

export type LedgerSortField = 'created_at' | 'new_quantity';
/** Sort value (Unix milliseconds or quantity), then the write sequence. */
export type LedgerKey = [number, number];

function ledgerConditions(tenantId: string, filter: LedgerFilter): Sql[] {
  const conditions = stockConditions('m', tenantId, filter);
  if (filter.positionIds) conditions.push(Prisma.sql`m.position_id = ANY(${filter.positionIds}::uuid[])`);
  if (filter.inventoryItemIds)
    conditions.push(Prisma.sql`m.inventory_item_id = ANY(${filter.inventoryItemIds}::uuid[])`);
  if (filter.sources) conditions.push(Prisma.sql`m.source::text = ANY(${filter.sources}::text[])`);
  if (filter.statuses) conditions.push(Prisma.sql`m.status::text = ANY(${filter.statuses}::text[])`);
  if (filter.actorTypes) conditions.push(Prisma.sql`m.actor_type = ANY(${filter.actorTypes}::text[])`);
  if (filter.actorIds) conditions.push(Prisma.sql`m.actor_id = ANY(${filter.actorIds}::text[])`);
  conditions.push(...inequality(Prisma.sql`m.created_at`, filter.createdAt, timestamp));
  conditions.push(...inequality(Prisma.sql`m.new_quantity`, filter.newQuantity));
  conditions.push(...inequality(Prisma.sql`m.delta`, filter.delta));
  return conditions;
}

const LedgerRow: RowModel<LedgerEntry> = z.object({
  id: uuid,
  source: z.enum(STOCK_MUTATION_SOURCES),
  status: z.enum(STOCK_MUTATION_STATUSES),
  delta: int8,
  newQuantity: int8,
  productId: uuid,
  warehouseId: uuid,
  positionId: uuid.nullable(),
  inventoryItemId: uuid.nullable(),
  actorType: z.string(),
  actorId: z.string(),
  references: z.array(
    z.object({
      type: z.enum(['Bundle', 'InventoryList', 'Order', 'Reservation', 'Supply', 'Transfer']),
      id: z.string(),
    }),
  ),
  messages: z.array(z.unknown()),
  createdAt: timestampColumn,
  sequence: int8,
  safetyStock: int8OrNull,
  safetyChannelId: uuid.nullable(),
});

/** The ledger rows matching `filter`, sorted by `sort` (then by write order). */
export function ledgerList(
  tenantId: string,
  filter: LedgerFilter,
  sort: { field: LedgerSortField; descending: boolean },
): SqlKeysetList<LedgerEntry, LedgerKey> {
  return {
    select: Prisma.sql`
      SELECT m.id, m.source::text AS source, m.status::text AS status, m.delta, m.new_quantity AS "newQuantity",
             m.product_id AS "productId", m.warehouse_id AS "warehouseId", m.position_id AS "positionId",
             m.inventory_item_id AS "inventoryItemId", m.actor_type AS "actorType", m.actor_id AS "actorId",
             m."references", m.messages, m.created_at AS "createdAt", m.sequence, m.safety_stock AS "safetyStock",
             m.safety_channel_id AS "safetyChannelId"
        FROM stock_mutations m`,
    where: ledgerConditions(tenantId, filter),
    key: [sort.field === 'created_at' ? Prisma.sql`m.created_at` : Prisma.sql`m.new_quantity`, Prisma.sql`m.sequence`],
    values: ([value, sequence]) => [sort.field === 'created_at' ? timestamp(value) : bigint(value), bigint(sequence)],
    descending: sort.descending,
    row: LedgerRow,
    keyOf: (entry) => [sort.field === 'created_at' ? entry.createdAt.getTime() : entry.newQuantity, entry.sequence],
  };
}
