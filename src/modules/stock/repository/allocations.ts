import { z } from 'zod';
import type { DbOrTx, Tx } from '../../../kernel/db';
import { int8, parseRows, timestamp, uuid, type RowModel } from '../../../kernel/rows';
import { INVENTORY_ITEM_STATES, type InventoryItemState } from '../stock.types';

/** Units of one inventory line held by an order item, a reservation or a transfer item. */
export interface Allocation {
  id: string;
  reservationId: string | null;
  orderItemId: string | null;
  transferItemId: string | null;
  productId: string;
  warehouseId: string;
  positionId: string | null;
  batchNumber: string | null;
  serialNumber: string | null;
  expiresAt: Date | null;
  state: InventoryItemState;
  quantity: number;
  /** The bundle whose component these units are, when its holder holds them for an item of a bundle. */
  bundleId?: string | null;
}

const ALLOCATION_COLUMNS = `id, reservation_id AS "reservationId", order_item_id AS "orderItemId",
  transfer_item_id AS "transferItemId",
  product_id AS "productId", warehouse_id AS "warehouseId", position_id AS "positionId", batch_number AS "batchNumber",
  serial_number AS "serialNumber", expires_at AS "expiresAt", state::text AS state, quantity, bundle_id AS "bundleId"`;

const AllocationRow: RowModel<Allocation> = z.object({
  id: uuid,
  reservationId: uuid.nullable(),
  orderItemId: uuid.nullable(),
  transferItemId: uuid.nullable(),
  productId: uuid,
  warehouseId: uuid,
  positionId: uuid.nullable(),
  batchNumber: z.string().nullable(),
  serialNumber: z.string().nullable(),
  expiresAt: timestamp.nullable(),
  state: z.enum(INVENTORY_ITEM_STATES),
  quantity: int8,
  bundleId: uuid.nullable().optional(),
});
const Pair = z.object({ productId: uuid, warehouseId: uuid });

export async function insertAllocations(tx: Tx, tenantId: string, allocations: Allocation[]) {
  if (allocations.length === 0) return;
  const column = <T>(pick: (a: Allocation) => T) => allocations.map(pick);
  await tx.$executeRaw`
    INSERT INTO stock_allocations (id, tenant_id, reservation_id, order_item_id, transfer_item_id, product_id,
                                   warehouse_id, position_id, batch_number, serial_number, expires_at, state, quantity,
                                   bundle_id)
    SELECT v.id, ${tenantId}::uuid, v.reservation_id, v.order_item_id, v.transfer_item_id, v.product_id, v.warehouse_id,
           v.position_id, v.batch_number, v.serial_number, v.expires_at, v.state::inventory_item_state, v.quantity,
           v.bundle_id
      FROM unnest(${column((a) => a.id)}::uuid[], ${column((a) => a.reservationId)}::uuid[],
        ${column((a) => a.orderItemId)}::uuid[], ${column((a) => a.transferItemId)}::uuid[],
                  ${column((a) => a.productId)}::uuid[], ${column((a) => a.warehouseId)}::uuid[],
                    ${column((a) => a.positionId)}::uuid[],
                  ${column((a) => a.batchNumber)}::text[], ${column((a) => a.serialNumber)}::text[],
                  ${column((a) => a.expiresAt?.toISOString() ?? null)}::timestamptz[],
                    ${column((a) => a.state)}::text[],
                  ${column((a) => String(a.quantity))}::bigint[], ${column((a) => a.bundleId ?? null)}::uuid[])
           AS v(id, reservation_id, order_item_id, transfer_item_id, product_id, warehouse_id, position_id,
             batch_number, serial_number, expires_at, state, quantity, bundle_id)`;
}

/** Who holds allocations: some reservations, order items or transfer items. */
export interface Holders {
  reservationIds?: string[];
  orderItemIds?: string[];
  transferItemIds?: string[];
}

/** The allocations of some reservations, order items or transfer items, each with its bundle (if any). */
export async function allocationsOf(tx: Tx, tenantId: string, holder: Holders) {
  const rows = await tx.$queryRawUnsafe<unknown[]>(
    `SELECT ${ALLOCATION_COLUMNS} FROM stock_allocations a
      WHERE tenant_id = $1::uuid AND (reservation_id = ANY($2::uuid[]) OR order_item_id = ANY($3::uuid[])
        OR transfer_item_id = ANY($4::uuid[])) ORDER BY id`,
    tenantId,
    holder.reservationIds ?? [],
    holder.orderItemIds ?? [],
    holder.transferItemIds ?? [],
  );
  return parseRows(AllocationRow, rows);
}

/**
 * Ends the reservations among `ids` that are still ACTIVE; returns the ids it ended, sorted. The
 * reservations module writes their rows (`reservations_end_active`, its reservation-rows.sql).
 */
export async function endActiveReservations(
  tx: Tx,
  tenantId: string,
  ids: string[],
  status: 'REMOVED' | 'EXPIRED',
): Promise<string[]> {
  const ended = parseRows(
    z.object({ id: uuid }),
    await tx.$queryRaw<unknown[]>`
      SELECT ended AS id
        FROM reservations_end_active(${tenantId}::uuid, ${ids}::uuid[], ${status}::reservation_status) AS ended`,
  );
  return ended.map((row) => row.id).sort();
}

export async function deleteAllocation(tx: Tx, id: string) {
  await tx.$executeRaw`DELETE FROM stock_allocations WHERE id = ${id}::uuid`;
}

export async function updateAllocation(tx: Tx, id: string, state: InventoryItemState, positionId: string | null) {
  await tx.$executeRaw`UPDATE stock_allocations SET state = ${state}::inventory_item_state, position_id =
      ${positionId}::uuid WHERE id = ${id}::uuid`;
}

/** The (product, warehouse) pairs the allocations of these holders touch. */
export async function pairsOf(tx: Tx, tenantId: string, holder: Holders) {
  const rows = await tx.$queryRaw<unknown[]>`
    SELECT DISTINCT product_id AS "productId", warehouse_id AS "warehouseId" FROM stock_allocations
     WHERE tenant_id = ${tenantId}::uuid
       AND (reservation_id = ANY(${holder.reservationIds ?? []}::uuid[])
         OR order_item_id = ANY(${holder.orderItemIds ?? []}::uuid[])
         OR transfer_item_id = ANY(${holder.transferItemIds ?? []}::uuid[]))`;
  return parseRows(Pair, rows);
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
  const rows = await tx.$queryRaw<unknown[]>`
    SELECT DISTINCT h.reservation_id AS id
      FROM expired_reservation_holdings(${tenantId}::uuid, ${pairs.map((p) => p.productId)}::uuid[],
        ${pairs.map((p) => p.warehouseId)}::uuid[]) AS h`;
  return parseRows(z.object({ id: uuid }), rows).map((row) => row.id);
}

/**
 * Units sellable now per (product, warehouse) through `channelId` (null: no channel): AVAILABLE
 * lines plus what expired reservations still hold, less the safety stock. One statement, so one
 * consistent snapshot; read without locks.
 */
export async function sellableNow(
  db: DbOrTx,
  tenantId: string,
  pairs: { productId: string; warehouseId: string }[],
  channelId: string | null,
) {
  const [products, warehouses] = [pairs.map((p) => p.productId), pairs.map((p) => p.warehouseId)];
  const rows = await db.$queryRaw<unknown[]>`
    WITH pair AS (SELECT DISTINCT * FROM unnest(${products}::uuid[], ${warehouses}::uuid[]) AS t(product_id,
      warehouse_id)),
         held AS MATERIALIZED (SELECT * FROM expired_reservation_holdings(${tenantId}::uuid, ${products}::uuid[],
           ${warehouses}::uuid[]))
    SELECT pair.product_id AS "productId", pair.warehouse_id AS "warehouseId",
           greatest(0, coalesce((SELECT sum(i.quantity) FROM inventory_items i
                       WHERE i.tenant_id = ${tenantId}::uuid AND i.product_id = pair.product_id AND i.warehouse_id =
                         pair.warehouse_id
                         AND i.state = 'AVAILABLE'), 0)
          + coalesce((SELECT sum(h.quantity) FROM held h WHERE h.product_id = pair.product_id AND h.warehouse_id =
            pair.warehouse_id), 0)
          - stock_safety_stock(${tenantId}::uuid, pair.product_id, pair.warehouse_id, ${channelId}::uuid)
          )::bigint AS quantity
      FROM pair`;
  const sellable = parseRows(Pair.extend({ quantity: int8 }), rows);
  return new Map(sellable.map((row) => [`${row.productId}:${row.warehouseId}`, row.quantity]));
}

/**
 * Units AVAILABLE per (product, warehouse) through the database's `stock_available_totals`
 * (../sql/3-allocate.sql), less the safety stock for `channelId` (null: no channel): what
 * `allocateFromLines` may take. Read under the pairs' stock locks.
 */
export async function availableTotals(
  tx: Tx,
  tenantId: string,
  pairs: { productId: string; warehouseId: string }[],
  channelId: string | null,
) {
  const rows = await tx.$queryRaw<unknown[]>`
    SELECT t.product_id AS "productId", g.warehouse_id AS "warehouseId",
           greatest(0, t.quantity - stock_safety_stock(${tenantId}::uuid, t.product_id, g.warehouse_id,
             ${channelId}::uuid))::bigint AS quantity
      FROM (SELECT u.w AS warehouse_id, array_agg(DISTINCT u.p) AS products
              FROM unnest(${pairs.map((p) => p.productId)}::uuid[],
                          ${pairs.map((p) => p.warehouseId)}::uuid[]) AS u(p, w)
             GROUP BY u.w) AS g
     CROSS JOIN LATERAL stock_available_totals(${tenantId}::uuid, g.products, g.warehouse_id) AS t`;
  const totals = parseRows(Pair.extend({ quantity: int8 }), rows);
  return new Map(totals.map((row) => [`${row.productId}:${row.warehouseId}`, row.quantity]));
}

/** Units of a product at a warehouse that one holder takes (one take of `allocateFromLines`). */
export interface Take {
  productId: string;
  warehouseId: string;
  quantity: number;
  holder: { reservationId?: string; orderItemId?: string; transferItemId?: string };
  /** The bundle of the item the units are taken for, when they are a component's. */
  bundleId?: string | null;
}

const TakenRow = z.object({
  take: z.number().int(),
  lineId: uuid,
  productId: uuid,
  warehouseId: uuid,
  positionId: uuid.nullable(),
  quantity: int8,
});

/**
 * The allocation walk, through the database's `stock_allocate` (../sql/3-allocate.sql), which the
 * batched reservations call too: moves the takes' units from the AVAILABLE lines (first expired,
 * first out) into `state` and writes their allocations. The caller holds the stock locks and has
 * checked `availableTotals`. Returns one row per take and line taken from, in walk order (`take` 1-based).
 */
export async function allocateFromLines(tx: Tx, tenantId: string, state: 'COMMITTED' | 'RESERVED', takes: Take[]) {
  if (takes.length === 0) return [];
  const column = <T>(pick: (take: Take) => T) => takes.map(pick);
  const rows = await tx.$queryRaw<unknown[]>`
    SELECT a.take, a.line_id AS "lineId", a.product_id AS "productId", a.warehouse_id AS "warehouseId",
           a.position_id AS "positionId", a.quantity
      FROM stock_allocate(${tenantId}::uuid, ${state}::inventory_item_state, ${column((t) => t.productId)}::uuid[],
             ${column((t) => t.warehouseId)}::uuid[], ${column((t) => String(t.quantity))}::bigint[],
             ${column((t) => t.holder.reservationId ?? null)}::uuid[],
             ${column((t) => t.holder.orderItemId ?? null)}::uuid[],
             ${column((t) => t.holder.transferItemId ?? null)}::uuid[],
             ${column((t) => t.bundleId ?? null)}::uuid[]) WITH ORDINALITY AS a
     ORDER BY a.ordinality`;
  return parseRows(TakenRow, rows);
}
