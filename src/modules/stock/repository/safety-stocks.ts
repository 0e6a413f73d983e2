/** Safety stocks: units of a product kept back at a warehouse (see ../sql/2-safety.sql). */
import { z } from 'zod';
import type { DbOrTx, Tx } from '../../../kernel/db';
import { int8, parseFirstRow, parseRows, timestamp, uuid, type RowModel } from '../../../kernel/rows';
import type { SafetyStockRecord } from '../stock.types';

const SafetyStockRow: RowModel<SafetyStockRecord> = z.object({
  id: uuid,
  productId: uuid,
  sku: z.string(),
  warehouseId: uuid,
  channelId: uuid.nullable(),
  quantity: int8,
  updatedAt: timestamp,
});

const SELECT = `
  SELECT s.id, s.product_id AS "productId", p.sku, s.warehouse_id AS "warehouseId", s.channel_id AS "channelId",
         s.quantity, s.updated_at AS "updatedAt"
    FROM safety_stocks s JOIN products p ON p.id = s.product_id`;

/** Sets the safety stock of a product at a warehouse for a channel (null: every channel); returns the row. */
export async function upsertSafetyStock(
  tx: Tx,
  tenantId: string,
  row: { id: string; productId: string; warehouseId: string; channelId: string | null; quantity: number },
) {
  const rows = await tx.$queryRawUnsafe<unknown[]>(
    `WITH s AS (
       INSERT INTO safety_stocks (id, tenant_id, product_id, warehouse_id, channel_id, quantity)
       VALUES ($1::uuid, $2::uuid, $3::uuid, $4::uuid, $5::uuid, $6::bigint)
       ON CONFLICT (tenant_id, warehouse_id, product_id, channel_id)
       DO UPDATE SET quantity = EXCLUDED.quantity, updated_at = now()
       RETURNING *)
     ${SELECT.replace('FROM safety_stocks s', 'FROM s')}`,
    row.id,
    tenantId,
    row.productId,
    row.warehouseId,
    row.channelId,
    String(row.quantity),
  );
  return parseFirstRow(SafetyStockRow, rows)!;
}

/** The tenant's safety stocks, by SKU, warehouse and channel (the row for every channel first). */
export async function safetyStocks(db: DbOrTx, tenantId: string, filter: { skus?: string[]; warehouseIds?: string[] }) {
  const rows = await db.$queryRawUnsafe<unknown[]>(
    `${SELECT}
      WHERE s.tenant_id = $1::uuid AND ($2::text[] IS NULL OR p.sku = ANY($2::text[]))
        AND ($3::uuid[] IS NULL OR s.warehouse_id = ANY($3::uuid[]))
      ORDER BY p.sku, s.warehouse_id, s.channel_id NULLS FIRST`,
    tenantId,
    filter.skus ?? null,
    filter.warehouseIds ?? null,
  );
  return parseRows(SafetyStockRow, rows);
}
