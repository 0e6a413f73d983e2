/**
 * The batched reservations: many reservations of the same SKUs at one warehouse in one statement
 * (the database's `reserve_stock_batch`, ../sql/4-reserve-batch.sql).
 */
import { z } from 'zod';
import type { DbOrTx } from '../../../kernel/db';
import { int8OrNull, parseRows, timestamp, uuid } from '../../../kernel/rows';

/** One reservation of `reserveStockBatch`: its SKUs are resolved by the database. */
export interface BatchedReservation {
  id: string;
  businessId: string;
  warehouseId: string;
  channelId: string;
  customer: { name: string; email?: string | null; phone?: string | null };
  notes: string | null;
  expiresAt: Date;
  /** Whether `id` was chosen by the client (only then can it be taken). */
  checkId: boolean;
  items: { id: string; sku: string; quantity: number }[];
  actor: { type: string; id: string };
  references: unknown;
}

/**
 * What `reserveStockBatch` did with one reservation; INVALID: a business, warehouse, channel or SKU is not the
 * tenant's.
 */
export type BatchReserveOutcome =
  | { outcome: 'RESERVED'; createdAt: Date; productIds: string[] }
  | { outcome: 'TAKEN' | 'EXPIRED' | 'BUNDLE' | 'INVALID' }
  | { outcome: 'SHORT'; itemIndex: number; requested: number; available: number };

/** One row of `reserve_stock_batch`: the outcome of the reservation at `ordinal` (1-based). */
const BatchOutcomeRow = z.object({
  ordinal: z.number().int(),
  outcome: z.string(),
  item_index: z.number().int().nullable(),
  requested: int8OrNull,
  available: int8OrNull,
  created_at: timestamp.nullable(),
  product_ids: z.array(uuid).nullable(),
});

/**
 * Reservations of one tenant at one warehouse in one statement (the `reserve_stock_batch` database
 * function), in order, each all or none: the stock locks of their SKUs (ascending), each SKU's
 * summed quantity checked against what the earlier ones left, the reservations and their items,
 * the moves from AVAILABLE to RESERVED lines, the allocations, one ALLOCATION ledger row per item
 * and line moved from, and their broadcasts. One outcome per reservation; nothing is written for
 * one that is not RESERVED, and nothing at all (no lock taken) when the outcome is EXPIRED. An
 * item of a bundle is its components' units (their ledger rows name the bundle after the
 * reservation); BUNDLE: one of its components is short (the general path names which).
 */
export async function reserveStockBatch(
  db: DbOrTx,
  tenantId: string,
  reservations: BatchedReservation[],
): Promise<BatchReserveOutcome[]> {
  const requests = reservations.map((reservation, n) => ({
    n,
    id: reservation.id,
    check_id: reservation.checkId,
    business_id: reservation.businessId,
    warehouse_id: reservation.warehouseId,
    channel_id: reservation.channelId,
    customer: reservation.customer,
    notes: reservation.notes,
    expires_at: reservation.expiresAt.toISOString(),
    item_ids: reservation.items.map((item) => item.id),
    skus: reservation.items.map((item) => item.sku),
    quantities: reservation.items.map((item) => item.quantity),
    actor_type: reservation.actor.type,
    actor_id: reservation.actor.id,
    references: reservation.references,
  }));
  const rows = parseRows(
    BatchOutcomeRow,
    await db.$queryRaw<unknown[]>`
      SELECT * FROM reserve_stock_batch(${tenantId}::uuid, ${JSON.stringify(requests)}::jsonb)`,
  );
  if (rows.length !== reservations.length)
    throw new Error(`reserve_stock_batch answered ${rows.length} of ${reservations.length} reservations`);
  return rows
    .sort((a, b) => a.ordinal - b.ordinal)
    .map((row) => {
      switch (row.outcome) {
        case 'RESERVED':
          return { outcome: 'RESERVED', createdAt: row.created_at!, productIds: row.product_ids! };
        case 'SHORT':
          return {
            outcome: 'SHORT',
            itemIndex: row.item_index! - 1,
            requested: row.requested!,
            available: row.available!,
          };
        case 'TAKEN':
        case 'EXPIRED':
        case 'BUNDLE':
        case 'INVALID':
          return { outcome: row.outcome };
        default:
          throw new Error(`reserve_stock_batch returned "${row.outcome}"`);
      }
    });
}
