/** Inventory lines: reading them by id, adding units, correcting, deleting and taking units off. */
import { z } from 'zod';
import type { DbOrTx, Tx } from '../../../kernel/db';
import { uuidv7 } from '../../../kernel/ids';
import type { LineChangeRecord } from './ledger';
import { int8, int8OrNull, parseFirstRow, parseRows, timestamp, uuid, type RowModel } from '../../../kernel/rows';
import { Prisma } from '../../../__generated__/prisma/client';
import {
  INVENTORY_ITEM_REASONS,
  INVENTORY_ITEM_STATES,
  type InventoryItemReason,
  type InventoryItemState,
  type InventoryLine,
} from '../stock.types';

/** The columns of an InventoryLine; readers append WHERE (lines are `i`). */
export const LINE_SELECT = Prisma.sql`
  SELECT i.id, i.tenant_id AS "tenantId", i.product_id AS "productId", p.sku, i.warehouse_id AS "warehouseId",
         w.business_id AS "businessId", i.position_id AS "positionId", pos.code AS "positionCode",
         i.batch_number AS "batchNumber", i.serial_number AS "serialNumber", i.expires_at AS "expiresAt",
         i.state::text AS state, i.reason::text AS reason, i.quantity, i.cost_amount AS "costAmount",
         i.cost_currency AS "costCurrency", coalesce(i.gtin, '{}') AS gtin, i.rfid, i.weight_amount AS "weightAmount",
         i.weight_unit AS "weightUnit", i.created_at AS "createdAt", i.updated_at AS "updatedAt"
    FROM inventory_items i
    JOIN products p ON p.id = i.product_id
    JOIN warehouses w ON w.id = i.warehouse_id
    LEFT JOIN positions pos ON pos.id = i.position_id`;

const state = z.enum(INVENTORY_ITEM_STATES);
const reason = z.enum(INVENTORY_ITEM_REASONS);

/** A row of LINE_SELECT. */
export const LineRow: RowModel<InventoryLine> = z.object({
  id: uuid,
  tenantId: uuid,
  productId: uuid,
  sku: z.string(),
  warehouseId: uuid,
  businessId: uuid,
  positionId: uuid.nullable(),
  positionCode: z.string().nullable(),
  batchNumber: z.string().nullable(),
  serialNumber: z.string().nullable(),
  expiresAt: timestamp.nullable(),
  state,
  reason,
  quantity: int8,
  costAmount: int8OrNull,
  costCurrency: z.string().nullable(),
  gtin: z.array(z.string()),
  rfid: z.string().nullable(),
  weightAmount: z.number().nullable(),
  weightUnit: z.string().nullable(),
  createdAt: timestamp,
  updatedAt: timestamp,
});

/** Lines of the tenant by id (in no particular order); `forUpdate` locks them. */
export async function findLines(
  db: DbOrTx,
  tenantId: string,
  ids: readonly string[],
  options: { forUpdate?: boolean } = {},
) {
  if (ids.length === 0) return [];
  const rows = await db.$queryRaw<unknown[]>`${LINE_SELECT}
    WHERE i.tenant_id = ${tenantId}::uuid AND i.id = ANY(${[...ids]}::uuid[])
    ${options.forUpdate ? Prisma.sql`FOR UPDATE OF i` : Prisma.empty}`;
  return parseRows(LineRow, rows);
}

/** The identity of a line: lines with equal identities are one line. */
export interface LineIdentity {
  productId: string;
  warehouseId: string;
  positionId: string | null;
  batchNumber: string | null;
  serialNumber: string | null;
  expiresAt: Date | null;
  state: InventoryItemState;
  reason: InventoryItemReason;
}

/** The attributes of a line that are not part of its identity; undefined: leave as it is. */
export interface LineAttributes {
  costAmount?: number | null;
  costCurrency?: string | null;
  gtin?: string[] | null;
  rfid?: string | null;
  weightAmount?: number | null;
  weightUnit?: string | null;
}

export const identityKey = (identity: LineIdentity) =>
  JSON.stringify([
    identity.productId,
    identity.warehouseId,
    identity.positionId,
    identity.batchNumber,
    identity.serialNumber,
    identity.expiresAt?.getTime() ?? null,
    identity.state,
    identity.reason,
  ]);

export interface LineAddition extends LineIdentity {
  id: string;
  quantity: number;
  attributes: LineAttributes;
}

/**
 * Adds quantities to lines, in order, each through the database's `stock_add_to_line`
 * (../sql/2-lines.sql): a line with the same identity gets the quantity added and the given
 * attributes; otherwise the line is created. Returns the id of each addition's line.
 */
export async function addToLines(tx: Tx, tenantId: string, additions: LineAddition[]): Promise<string[]> {
  if (additions.length === 0) return [];
  const column = <T>(pick: (addition: LineAddition) => T) => additions.map(pick);
  const rows = await tx.$queryRaw<unknown[]>`
    SELECT stock_add_to_line(${tenantId}::uuid, v.id, v.product_id, v.warehouse_id, v.position_id, v.batch_number,
             v.serial_number, v.expires_at, v.state::inventory_item_state, v.reason::inventory_item_reason, v.quantity,
             v.cost_amount, v.cost_currency,
             CASE WHEN v.gtin IS NULL THEN NULL ELSE ARRAY(SELECT jsonb_array_elements_text(v.gtin::jsonb)) END,
             v.rfid, v.weight_amount, v.weight_unit)::text AS id
      FROM unnest(${column((a) => a.id)}::uuid[], ${column((a) => a.productId)}::uuid[],
                  ${column((a) => a.warehouseId)}::uuid[], ${column((a) => a.positionId)}::uuid[],
                  ${column((a) => a.batchNumber)}::text[], ${column((a) => a.serialNumber)}::text[],
                  ${column((a) => a.expiresAt?.toISOString() ?? null)}::timestamptz[],
                  ${column((a) => a.state)}::text[], ${column((a) => a.reason)}::text[],
                  ${column((a) => String(a.quantity))}::bigint[],
                  ${column((a) =>
                    a.attributes.costAmount == null ? null : String(a.attributes.costAmount),
                  )}::bigint[],
                  ${column((a) => a.attributes.costCurrency ?? null)}::text[],
                  ${column((a) => (a.attributes.gtin == null ? null : JSON.stringify(a.attributes.gtin)))}::text[],
                  ${column((a) => a.attributes.rfid ?? null)}::text[],
                  ${column((a) => a.attributes.weightAmount ?? null)}::float8[],
                  ${column((a) => a.attributes.weightUnit ?? null)}::text[]) WITH ORDINALITY
           AS v(id, product_id, warehouse_id, position_id, batch_number, serial_number, expires_at, state, reason,
                quantity, cost_amount, cost_currency, gtin, rfid, weight_amount, weight_unit, n)
     ORDER BY v.n`;
  return parseRows(z.object({ id: uuid }), rows).map((row) => row.id);
}

/**
 * Puts `quantity` units of a product on hand at a location, as AVAILABLE units without batch,
 * serial number or expiry (a restock, a transfer's arrival), and returns the ledger change that
 * records it.
 */
export async function putOnHand(
  tx: Tx,
  tenantId: string,
  at: { productId: string; warehouseId: string; positionId: string | null; quantity: number },
): Promise<LineChangeRecord> {
  const { productId, warehouseId, positionId, quantity } = at;
  const [lineId] = await addToLines(tx, tenantId, [
    {
      id: uuidv7(),
      productId,
      warehouseId,
      positionId,
      batchNumber: null,
      serialNumber: null,
      expiresAt: null,
      state: 'AVAILABLE',
      reason: 'NONE',
      quantity,
      attributes: {},
    },
  ]);
  return { id: uuidv7(), lineId: lineId!, productId, warehouseId, positionId, delta: quantity };
}

/** The condition that a line of the tenant has this identity (lines are unaliased). */
const hasIdentity = (tenantId: string, identity: LineIdentity) => Prisma.sql`
  tenant_id = ${tenantId}::uuid AND product_id = ${identity.productId}::uuid
  AND warehouse_id = ${identity.warehouseId}::uuid AND position_id IS NOT DISTINCT FROM ${identity.positionId}::uuid
  AND batch_number IS NOT DISTINCT FROM ${identity.batchNumber}::text
  AND serial_number IS NOT DISTINCT FROM ${identity.serialNumber}::text
  AND expires_at IS NOT DISTINCT FROM ${identity.expiresAt?.toISOString() ?? null}::timestamptz
  AND state = ${identity.state}::inventory_item_state AND reason = ${identity.reason}::inventory_item_reason`;

const IdAndQuantity = z.object({ id: uuid, quantity: int8 });

/** Another line of the tenant with the given identity, locked; null when there is none. */
export async function findLineByIdentity(tx: Tx, tenantId: string, identity: LineIdentity, exceptId: string) {
  const rows = await tx.$queryRaw<unknown[]>`
    SELECT id, quantity FROM inventory_items WHERE ${hasIdentity(tenantId, identity)} AND id <> ${exceptId}::uuid
       FOR UPDATE`;
  return parseFirstRow(IdAndQuantity, rows) ?? null;
}

/** Sets a line's identity, quantity and the given attributes. */
export async function updateLine(
  tx: Tx,
  id: string,
  identity: LineIdentity,
  quantity: number,
  attributes: LineAttributes,
) {
  const set = (column: string, value: unknown, cast = '') =>
    Prisma.sql`, ${Prisma.raw(column)} = ${value}${Prisma.raw(cast)}`;
  await tx.$executeRaw`
    UPDATE inventory_items
       SET position_id = ${identity.positionId}::uuid, batch_number = ${identity.batchNumber}::text,
           serial_number = ${identity.serialNumber}::text, expires_at =
             ${identity.expiresAt?.toISOString() ?? null}::timestamptz,
           state = ${identity.state}::inventory_item_state, reason = ${identity.reason}::inventory_item_reason,
           quantity = ${String(quantity)}::bigint, updated_at = now()
           ${
             attributes.costAmount !== undefined
               ? set('cost_amount', attributes.costAmount === null ? null : String(attributes.costAmount), '::bigint')
               : Prisma.empty
           }
           ${
             attributes.costCurrency !== undefined
               ? set('cost_currency', attributes.costCurrency, '::text')
               : Prisma.empty
           }
           ${attributes.gtin !== undefined ? set('gtin', attributes.gtin, '::text[]') : Prisma.empty}
           ${attributes.rfid !== undefined ? set('rfid', attributes.rfid, '::text') : Prisma.empty}
           ${
             attributes.weightAmount !== undefined
               ? set('weight_amount', attributes.weightAmount, '::float8')
               : Prisma.empty
           }
           ${attributes.weightUnit !== undefined ? set('weight_unit', attributes.weightUnit, '::text') : Prisma.empty}
     WHERE id = ${id}::uuid`;
}

const IdentityAndQuantity = z.object({
  productId: uuid,
  warehouseId: uuid,
  positionId: uuid.nullable(),
  batchNumber: z.string().nullable(),
  serialNumber: z.string().nullable(),
  expiresAt: timestamp.nullable(),
  state,
  reason,
  quantity: int8,
});

/** Adds to the quantity of a line and sets the given attributes (a line merged into it). */
export async function addToLine(tx: Tx, id: string, quantity: number, attributes: LineAttributes) {
  const rows = await tx.$queryRaw<unknown[]>`
    SELECT product_id AS "productId", warehouse_id AS "warehouseId", position_id AS "positionId",
           batch_number AS "batchNumber", serial_number AS "serialNumber", expires_at AS "expiresAt",
           state::text AS state, reason::text AS reason, quantity
      FROM inventory_items WHERE id = ${id}::uuid`;
  const line = parseFirstRow(IdentityAndQuantity, rows)!;
  await updateLine(tx, id, line, line.quantity + quantity, attributes);
}

const DeletedLine = z.object({
  id: uuid,
  productId: uuid,
  warehouseId: uuid,
  positionId: uuid.nullable(),
  quantity: int8,
});

/** Deletes lines by id; returns what each held. */
export async function deleteLines(tx: Tx, tenantId: string, ids: string[]) {
  const rows = await tx.$queryRaw<unknown[]>`
    DELETE FROM inventory_items WHERE tenant_id = ${tenantId}::uuid AND id = ANY(${ids}::uuid[])
    RETURNING id, product_id AS "productId", warehouse_id AS "warehouseId", position_id AS "positionId", quantity`;
  return parseRows(DeletedLine, rows);
}

/** An AVAILABLE line with what moving its units needs. */
export interface AvailableLine extends LineIdentity {
  id: string;
  quantity: number;
  attributes: LineAttributes;
}

/**
 * The AVAILABLE lines of a product at a warehouse, locked, in the order units are allocated from:
 * the database's `stock_available_lines` (../sql/2-lines.sql), which the batched reservations use too.
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
  const rows = await tx.$queryRaw<unknown[]>`
    UPDATE inventory_items SET quantity = quantity - ${String(quantity)}::bigint, updated_at = now()
     WHERE ${hasIdentity(tenantId, identity)} AND quantity >= ${String(quantity)}::bigint
    RETURNING id, quantity`;
  const row = parseFirstRow(IdAndQuantity, rows);
  if (!row) return null;
  if (row.quantity === 0) await tx.$executeRaw`DELETE FROM inventory_items WHERE id = ${row.id}::uuid`;
  return row.id;
}

/** A line's attributes (to carry cost, barcodes and weight along when units change state). */
export async function lineAttributes(tx: Tx, tenantId: string, identity: LineIdentity): Promise<LineAttributes> {
  const rows = await tx.$queryRaw<unknown[]>`
    SELECT cost_amount AS "costAmount", cost_currency AS "costCurrency", gtin, rfid, weight_amount AS "weightAmount",
           weight_unit AS "weightUnit"
      FROM inventory_items WHERE ${hasIdentity(tenantId, identity)}`;
  return parseFirstRow(Attributes, rows) ?? {};
}

const Attributes = z.object({
  costAmount: int8OrNull,
  costCurrency: z.string().nullable(),
  gtin: z.array(z.string()).nullable(),
  rfid: z.string().nullable(),
  weightAmount: z.number().nullable(),
  weightUnit: z.string().nullable(),
});
