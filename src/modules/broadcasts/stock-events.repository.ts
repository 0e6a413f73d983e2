/** Stock events (low stock, out of stock): recorded by the ledger's trigger (./sql/stock-events.sql), read here. */
import { z } from 'zod';
import type { Tx } from '../../kernel/db';
import type { SqlKeysetList } from '../../kernel/keyset';
import { int8, int8OrNull, timestamp, uuid, type RowModel } from '../../kernel/rows';
import { Prisma } from '../../__generated__/prisma/client';

export const STOCK_EVENT_TYPES = ['STOCK_LOW', 'STOCK_OUT'] as const;

export interface StockEventRecord {
  id: string;
  type: (typeof STOCK_EVENT_TYPES)[number];
  status: 'PENDING' | 'PROCESSED' | 'FAILING';
  sku: string;
  productId: string;
  warehouseId: string;
  available: number;
  reorderPoint: number | null;
  mutationId: string;
  messages: unknown[];
  createdAt: Date;
  sequence: number;
}

const StockEventRow: RowModel<StockEventRecord> = z.object({
  id: uuid,
  type: z.enum(STOCK_EVENT_TYPES),
  status: z.enum(['PENDING', 'PROCESSED', 'FAILING']),
  sku: z.string(),
  productId: uuid,
  warehouseId: uuid,
  available: int8,
  reorderPoint: int8OrNull,
  mutationId: uuid,
  messages: z.array(z.unknown()),
  createdAt: timestamp,
  sequence: int8,
});

export interface StockEventFilter {
  skus?: string[];
  warehouseIds?: string[];
  types?: string[];
}

/** The stock events of a tenant in the order they were recorded, narrowed by `filter`. */
export function stockEventList(tenantId: string, filter: StockEventFilter): SqlKeysetList<StockEventRecord, number> {
  const where = [Prisma.sql`e.tenant_id = ${tenantId}::uuid`];
  if (filter.skus) where.push(Prisma.sql`p.sku = ANY(${filter.skus}::text[])`);
  if (filter.warehouseIds) where.push(Prisma.sql`e.warehouse_id = ANY(${filter.warehouseIds}::uuid[])`);
  if (filter.types) where.push(Prisma.sql`e.type::text = ANY(${filter.types}::text[])`);
  return {
    select: Prisma.sql`
      SELECT e.id, e.type::text AS type, e.status::text AS status, p.sku, e.product_id AS "productId",
             e.warehouse_id AS "warehouseId", e.available, e.reorder_point AS "reorderPoint",
             e.mutation_id AS "mutationId", e.messages, e.created_at AS "createdAt", e.sequence
        FROM stock_events e JOIN products p ON p.id = e.product_id`,
    where,
    key: [Prisma.sql`e.sequence`],
    values: (sequence) => [Prisma.sql`${String(sequence)}::bigint`],
    row: StockEventRow,
    keyOf: (event) => event.sequence,
  };
}

/**
 * Stores the level of the pairs as it is now, without an event (`stock_alert_rebase`,
 * ./sql/stock-events.sql): after their reorder point changed. The caller holds their stock locks.
 */
export async function rebaseStockAlerts(tx: Tx, tenantId: string, pairs: { productId: string; warehouseId: string }[]) {
  if (pairs.length === 0) return;
  await tx.$executeRaw`
    SELECT stock_alert_rebase(${tenantId}::uuid, ${pairs.map((p) => p.productId)}::uuid[],
      ${pairs.map((p) => p.warehouseId)}::uuid[])`;
}
