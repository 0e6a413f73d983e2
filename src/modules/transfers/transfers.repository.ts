import { z } from 'zod';
import type { DbOrTx, Tx } from '../../kernel/db';
import { int8, parseRows, timestamp, uuid } from '../../kernel/rows';

export type TransferStatus = 'REQUESTED' | 'SHIPPED' | 'PARTIALLY_RECEIVED' | 'RECEIVED' | 'CANCELLED';

export interface TransferItemRecord {
  id: string;
  productId: string;
  sku: string;
  quantity: number;
  receivedQuantity: number;
}

export interface TransferRecord {
  id: string;
  fromWarehouseId: string;
  toWarehouseId: string;
  status: TransferStatus;
  shippedAt: Date | null;
  receivedAt: Date | null;
  createdAt: Date;
  items: TransferItemRecord[];
}

const TransferRow = z.object({
  id: uuid,
  fromWarehouseId: uuid,
  toWarehouseId: uuid,
  status: z.enum(['REQUESTED', 'SHIPPED', 'PARTIALLY_RECEIVED', 'RECEIVED', 'CANCELLED']),
  shippedAt: timestamp.nullable(),
  receivedAt: timestamp.nullable(),
  createdAt: timestamp,
  items: z.array(z.object({ id: uuid, productId: uuid, sku: z.string(), quantity: int8, receivedQuantity: int8 })),
}) satisfies z.ZodType<TransferRecord, unknown>;

export async function insertTransfer(
  tx: Tx,
  tenantId: string,
  transfer: {
    id: string;
    fromWarehouseId: string;
    toWarehouseId: string;
    items: { id: string; productId: string; quantity: number }[];
  },
) {
  await tx.$executeRaw`
    INSERT INTO transfers (id, tenant_id, from_warehouse_id, to_warehouse_id)
    VALUES (${transfer.id}::uuid, ${tenantId}::uuid, ${transfer.fromWarehouseId}::uuid,
            ${transfer.toWarehouseId}::uuid)`;
  await tx.$executeRaw`
    INSERT INTO transfer_items (id, tenant_id, transfer_id, product_id, quantity)
    SELECT v.id, ${tenantId}::uuid, ${transfer.id}::uuid, v.product_id, v.quantity
      FROM unnest(${transfer.items.map((i) => i.id)}::uuid[], ${transfer.items.map((i) => i.productId)}::uuid[],
                  ${transfer.items.map((i) => String(i.quantity))}::bigint[]) AS v(id, product_id, quantity)`;
}

/** The tenant's transfers with these ids, with their items in creation (input) order. */
export async function findTransfers(
  db: DbOrTx,
  tenantId: string,
  ids: readonly string[],
  options: { forUpdate?: boolean } = {},
): Promise<TransferRecord[]> {
  if (options.forUpdate) {
    await db.$queryRaw`SELECT 1 FROM transfers WHERE tenant_id = ${tenantId}::uuid AND id = ANY(${[...ids]}::uuid[])
      FOR UPDATE`;
  }
  const rows = await db.$queryRaw<unknown[]>`
    SELECT t.id, t.from_warehouse_id AS "fromWarehouseId", t.to_warehouse_id AS "toWarehouseId",
           t.status::text AS status, t.shipped_at AS "shippedAt", t.received_at AS "receivedAt",
           t.created_at AS "createdAt",
           coalesce((SELECT json_agg(json_build_object('id', i.id, 'productId', i.product_id, 'sku', p.sku,
                                                       'quantity', i.quantity, 'receivedQuantity', i.received_quantity)
                                     ORDER BY i.id)
                       FROM transfer_items i JOIN products p ON p.id = i.product_id
                      WHERE i.tenant_id = t.tenant_id AND i.transfer_id = t.id), '[]') AS items
      FROM transfers t WHERE t.tenant_id = ${tenantId}::uuid AND t.id = ANY(${[...ids]}::uuid[])`;
  return parseRows(TransferRow, rows);
}

/** Whether the tenant has a transfer with this id. */
export async function transferExists(db: DbOrTx, tenantId: string, id: string) {
  const rows = await db.$queryRaw<
    unknown[]
  >`SELECT 1 FROM transfers WHERE tenant_id = ${tenantId}::uuid AND id = ${id}::uuid`;
  return rows.length > 0;
}

export async function setTransferStatus(tx: Tx, tenantId: string, id: string, status: TransferStatus) {
  await tx.$executeRaw`
    UPDATE transfers SET status = ${status}::transfer_status, updated_at = now(),
           shipped_at = CASE WHEN ${status} = 'SHIPPED' THEN now() ELSE shipped_at END,
           received_at = CASE WHEN ${status} = 'RECEIVED' THEN now() ELSE received_at END
     WHERE tenant_id = ${tenantId}::uuid AND id = ${id}::uuid`;
}

export async function addReceived(tx: Tx, tenantId: string, itemId: string, quantity: number) {
  await tx.$executeRaw`
    UPDATE transfer_items SET received_quantity = received_quantity + ${String(quantity)}::bigint
     WHERE tenant_id = ${tenantId}::uuid AND id = ${itemId}::uuid`;
}
