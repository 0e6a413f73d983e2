import { z } from 'zod';
import type { DbOrTx, Tx } from '../../kernel/db';
import { int8, int8OrNull, parseRows, timestamp, uuid } from '../../kernel/rows';
import * as stock from '../stock/stock.repository';
import type { LineIdentity } from '../stock/stock.repository';
import type { InventoryItemState } from '../stock/stock.types';

/** Units of one inventory line held by an order item or a reservation. */
export interface Allocation {
  id: string;
  reservationId: string | null;
  orderItemId: string | null;
  productId: string;
  warehouseId: string;
  positionId: string | null;
  batchNumber: string | null;
  serialNumber: string | null;
  expiresAt: Date | null;
  state: InventoryItemState;
  quantity: number;
}

/** An AVAILABLE line with what moving its units needs. */
export interface AvailableLine extends LineIdentity {
  id: string;
  quantity: number;
  attributes: stock.LineAttributes;
}

const ALLOCATION_COLUMNS = `id, reservation_id AS "reservationId", order_item_id AS "orderItemId", product_id AS "productId",
  warehouse_id AS "warehouseId", position_id AS "positionId", batch_number AS "batchNumber", serial_number AS "serialNumber",
  expires_at AS "expiresAt", state::text AS state, quantity`;

type RawAllocation = Omit<Allocation, 'quantity'> & { quantity: bigint };
const toAllocation = (row: RawAllocation): Allocation => ({ ...row, quantity: Number(row.quantity) });

/**
 * The AVAILABLE lines of a product at a warehouse, locked, in the order units are allocated from:
 * the database's `stock_available_lines` (sql/2-lines.sql), which the batched reservations use too.
 */
export async function lockAvailableLines(
  tx: Tx,
  tenantId: string,
  productId: string,
  warehouseId: string,
): Promise<AvailableLine[]> {
  const rows = await tx.$queryRaw<unknown[]>`
    SELECT id, product_id AS "productId", position_id AS "positionId", batch_number AS "batchNumber",
           serial_number AS "serialNumber", expires_at AS "expiresAt", quantity, cost_amount AS "costAmount",
           cost_currency AS "costCurrency", gtin, rfid, weight_amount AS "weightAmount", weight_unit AS "weightUnit"
      FROM stock_available_lines(${tenantId}::uuid, ARRAY[${productId}::uuid], ${warehouseId}::uuid)
     ORDER BY allocation_order`;
  return parseRows(AvailableLineRow, rows).map(({ quantity, ...line }) => ({
    id: line.id,
    productId: line.productId,
    warehouseId,
    positionId: line.positionId,
    batchNumber: line.batchNumber,
    serialNumber: line.serialNumber,
    expiresAt: line.expiresAt,
    state: 'AVAILABLE',
    reason: 'NONE',
    quantity,
    attributes: {
      costAmount: line.costAmount,
      costCurrency: line.costCurrency,
      gtin: line.gtin,
      rfid: line.rfid,
      weightAmount: line.weightAmount,
      weightUnit: line.weightUnit,
    },
  }));
}

const AvailableLineRow = z.object({
  id: uuid,
  productId: uuid,
  positionId: uuid.nullable(),
  batchNumber: z.string().nullable(),
  serialNumber: z.string().nullable(),
  expiresAt: timestamp.nullable(),
  quantity: int8,
  costAmount: int8OrNull,
  costCurrency: z.string().nullable(),
  gtin: z.array(z.string()).nullable(),
  rfid: z.string().nullable(),
  weightAmount: z.number().nullable(),
  weightUnit: z.string().nullable(),
});

/**
 * Takes `quantity` units off the line with this identity: a conditional update, so a line that
 * holds fewer units (changed by another write) is reported instead of going negative. A line left
 * empty is deleted. Returns the line's id, or null when it does not hold the units.
 */
export async function takeFromLine(
  tx: Tx,
  tenantId: string,
  identity: LineIdentity,
  quantity: number,
): Promise<string | null> {
  const [row] = await tx.$queryRaw<{ id: string; quantity: bigint }[]>`
    UPDATE inventory_items SET quantity = quantity - ${String(quantity)}::bigint, updated_at = now()
     WHERE tenant_id = ${tenantId}::uuid AND product_id = ${identity.productId}::uuid AND warehouse_id = ${identity.warehouseId}::uuid
       AND position_id IS NOT DISTINCT FROM ${identity.positionId}::uuid
       AND batch_number IS NOT DISTINCT FROM ${identity.batchNumber}::text
       AND serial_number IS NOT DISTINCT FROM ${identity.serialNumber}::text
       AND expires_at IS NOT DISTINCT FROM ${identity.expiresAt?.toISOString() ?? null}::timestamptz
       AND state = ${identity.state}::inventory_item_state AND reason = ${identity.reason}::inventory_item_reason
       AND quantity >= ${String(quantity)}::bigint
    RETURNING id, quantity`;
  if (!row) return null;
  if (Number(row.quantity) === 0) await tx.$executeRaw`DELETE FROM inventory_items WHERE id = ${row.id}::uuid`;
  return row.id;
}

/** Lines' attributes by id (to carry cost, barcodes and weight along when units change state). */
export async function lineAttributes(tx: Tx, tenantId: string, identity: LineIdentity): Promise<stock.LineAttributes> {
  const [row] = await tx.$queryRaw<
    {
      costAmount: bigint | null;
      costCurrency: string | null;
      gtin: string[] | null;
      rfid: string | null;
      weightAmount: number | null;
      weightUnit: string | null;
    }[]
  >`
    SELECT cost_amount AS "costAmount", cost_currency AS "costCurrency", gtin, rfid, weight_amount AS "weightAmount", weight_unit AS "weightUnit"
      FROM inventory_items
     WHERE tenant_id = ${tenantId}::uuid AND product_id = ${identity.productId}::uuid AND warehouse_id = ${identity.warehouseId}::uuid
       AND position_id IS NOT DISTINCT FROM ${identity.positionId}::uuid
       AND batch_number IS NOT DISTINCT FROM ${identity.batchNumber}::text
       AND serial_number IS NOT DISTINCT FROM ${identity.serialNumber}::text
       AND expires_at IS NOT DISTINCT FROM ${identity.expiresAt?.toISOString() ?? null}::timestamptz
       AND state = ${identity.state}::inventory_item_state AND reason = ${identity.reason}::inventory_item_reason`;
  if (!row) return {};
  return { ...row, costAmount: row.costAmount === null ? null : Number(row.costAmount) };
}

export async function insertAllocations(tx: Tx, tenantId: string, allocations: Allocation[]) {
  if (allocations.length === 0) return;
  const column = <T>(pick: (a: Allocation) => T) => allocations.map(pick);
  await tx.$executeRaw`
    INSERT INTO stock_allocations (id, tenant_id, reservation_id, order_item_id, product_id, warehouse_id, position_id,
                                   batch_number, serial_number, expires_at, state, quantity)
    SELECT v.id, ${tenantId}::uuid, v.reservation_id, v.order_item_id, v.product_id, v.warehouse_id, v.position_id,
           v.batch_number, v.serial_number, v.expires_at, v.state::inventory_item_state, v.quantity
      FROM unnest(${column((a) => a.id)}::uuid[], ${column((a) => a.reservationId)}::uuid[],
        ${column((a) => a.orderItemId)}::uuid[],
                  ${column((a) => a.productId)}::uuid[], ${column((a) => a.warehouseId)}::uuid[],
                    ${column((a) => a.positionId)}::uuid[],
                  ${column((a) => a.batchNumber)}::text[], ${column((a) => a.serialNumber)}::text[],
                  ${column((a) => a.expiresAt?.toISOString() ?? null)}::timestamptz[],
                    ${column((a) => a.state)}::text[],
                  ${column((a) => String(a.quantity))}::bigint[])
           AS v(id, reservation_id, order_item_id, product_id, warehouse_id, position_id, batch_number, serial_number,
             expires_at, state, quantity)`;
}

/** The allocations of some reservations or order items. */
export async function allocationsOf(
  tx: Tx,
  tenantId: string,
  holder: { reservationIds?: string[]; orderItemIds?: string[] },
) {
  const rows = await tx.$queryRawUnsafe<RawAllocation[]>(
    `SELECT ${ALLOCATION_COLUMNS} FROM stock_allocations
      WHERE tenant_id = $1::uuid AND (reservation_id = ANY($2::uuid[]) OR order_item_id = ANY($3::uuid[])) ORDER BY id`,
    tenantId,
    holder.reservationIds ?? [],
    holder.orderItemIds ?? [],
  );
  return rows.map(toAllocation);
}

export async function deleteAllocation(tx: Tx, id: string) {
  await tx.$executeRaw`DELETE FROM stock_allocations WHERE id = ${id}::uuid`;
}

export async function updateAllocation(tx: Tx, id: string, state: InventoryItemState, positionId: string | null) {
  await tx.$executeRaw`UPDATE stock_allocations SET state = ${state}::inventory_item_state, position_id = ${positionId}::uuid WHERE id = ${id}::uuid`;
}

/** The (product, warehouse) pairs the allocations of these reservations and order items touch. */
export async function pairsOf(
  tx: Tx,
  tenantId: string,
  holder: { reservationIds?: string[]; orderItemIds?: string[] },
) {
  return tx.$queryRaw<{ productId: string; warehouseId: string }[]>`
    SELECT DISTINCT product_id AS "productId", warehouse_id AS "warehouseId" FROM stock_allocations
     WHERE tenant_id = ${tenantId}::uuid
       AND (reservation_id = ANY(${holder.reservationIds ?? []}::uuid[]) OR order_item_id = ANY(${holder.orderItemIds ?? []}::uuid[]))`;
}

/**
 * Active reservations past their `expires_at` (transaction time) holding stock of any of these
 * products at these warehouses: what a write must release before it counts what is available.
 */
export async function expiredReservationsTouching(
  tx: Tx,
  tenantId: string,
  pairs: { productId: string; warehouseId: string }[],
) {
  const rows = await tx.$queryRaw<{ id: string }[]>`
    SELECT DISTINCT h.reservation_id AS id
      FROM expired_reservation_holdings(${tenantId}::uuid, ${pairs.map((p) => p.productId)}::uuid[], ${pairs.map((p) => p.warehouseId)}::uuid[]) AS h`;
  return rows.map((row) => row.id);
}

/**
 * Units sellable now per (product, warehouse): AVAILABLE lines plus what expired reservations
 * still hold. One statement, so one consistent snapshot; read without locks.
 */
export async function sellableNow(db: DbOrTx, tenantId: string, pairs: { productId: string; warehouseId: string }[]) {
  const [products, warehouses] = [pairs.map((p) => p.productId), pairs.map((p) => p.warehouseId)];
  const rows = await db.$queryRaw<{ productId: string; warehouseId: string; quantity: bigint }[]>`
    WITH pair AS (SELECT DISTINCT * FROM unnest(${products}::uuid[], ${warehouses}::uuid[]) AS t(product_id, warehouse_id)),
         held AS MATERIALIZED (SELECT * FROM expired_reservation_holdings(${tenantId}::uuid, ${products}::uuid[], ${warehouses}::uuid[]))
    SELECT pair.product_id AS "productId", pair.warehouse_id AS "warehouseId",
           (coalesce((SELECT sum(i.quantity) FROM inventory_items i
                       WHERE i.tenant_id = ${tenantId}::uuid AND i.product_id = pair.product_id AND i.warehouse_id = pair.warehouse_id
                         AND i.state = 'AVAILABLE'), 0)
          + coalesce((SELECT sum(h.quantity) FROM held h WHERE h.product_id = pair.product_id AND h.warehouse_id = pair.warehouse_id), 0))::bigint AS quantity
      FROM pair`;
  return new Map(rows.map((row) => [`${row.productId}:${row.warehouseId}`, Number(row.quantity)]));
}
