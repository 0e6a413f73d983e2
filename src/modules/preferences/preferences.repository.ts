import { z } from 'zod';
import type { DbOrTx, Tx } from '../../kernel/db';
import type { SqlKeysetList } from '../../kernel/keyset';
import { parseRows, timestamp, uuid } from '../../kernel/rows';
import { Prisma } from '../../__generated__/prisma/client';

export interface ItemPreferenceRecord {
  id: string;
  productId: string;
  sku: string;
  warehouseId: string;
  businessId: string;
  minimumQuantity: number;
  optimalQuantity: number;
  maximumQuantity: number;
  reorderPoint: number;
  isBackorderAllowed: boolean;
  isRestrictedToSinglePosition: boolean;
  preorderDeadlineAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
}

export type PreferenceValues = Omit<ItemPreferenceRecord, 'sku' | 'createdAt' | 'updatedAt'>;

const PreferenceRow = z.object({
  id: uuid,
  productId: uuid,
  sku: z.string(),
  warehouseId: uuid,
  businessId: uuid,
  minimumQuantity: z.number(),
  optimalQuantity: z.number(),
  maximumQuantity: z.number(),
  reorderPoint: z.number(),
  isBackorderAllowed: z.boolean(),
  isRestrictedToSinglePosition: z.boolean(),
  preorderDeadlineAt: timestamp.nullable(),
  createdAt: timestamp,
  updatedAt: timestamp,
}) satisfies z.ZodType<ItemPreferenceRecord, unknown>;

const SELECT = Prisma.sql`
  SELECT f.id, f.product_id AS "productId", p.sku, f.warehouse_id AS "warehouseId", f.business_id AS "businessId",
         f.minimum_quantity::float8 AS "minimumQuantity", f.optimal_quantity::float8 AS "optimalQuantity",
         f.maximum_quantity::float8 AS "maximumQuantity", f.reorder_point::float8 AS "reorderPoint",
         f.is_backorder_allowed AS "isBackorderAllowed",
         f.is_restricted_to_single_position AS "isRestrictedToSinglePosition",
         f.preorder_deadline_at AS "preorderDeadlineAt", f.created_at AS "createdAt", f.updated_at AS "updatedAt"
    FROM item_preferences f JOIN products p ON p.id = f.product_id`;

export async function insertPreferences(tx: Tx, tenantId: string, rows: PreferenceValues[]) {
  for (const row of rows) {
    await tx.$executeRaw`
      INSERT INTO item_preferences (id, tenant_id, product_id, warehouse_id, business_id, minimum_quantity,
        optimal_quantity,
                                    maximum_quantity, reorder_point, is_backorder_allowed,
                                      is_restricted_to_single_position, preorder_deadline_at)
      VALUES (${row.id}::uuid, ${tenantId}::uuid, ${row.productId}::uuid, ${row.warehouseId}::uuid,
        ${row.businessId}::uuid,
              ${String(row.minimumQuantity)}::bigint, ${String(row.optimalQuantity)}::bigint,
                ${String(row.maximumQuantity)}::bigint,
              ${String(row.reorderPoint)}::bigint, ${row.isBackorderAllowed}, ${row.isRestrictedToSinglePosition},
              ${row.preorderDeadlineAt?.toISOString() ?? null}::timestamptz)`;
  }
}

/** Replaces every value of the preferences (all but sku and business, which identify them). */
export async function replacePreferences(
  tx: Tx,
  tenantId: string,
  rows: Omit<PreferenceValues, 'productId' | 'businessId'>[],
) {
  for (const row of rows) {
    await tx.$executeRaw`
      UPDATE item_preferences
         SET warehouse_id = ${row.warehouseId}::uuid, minimum_quantity = ${String(row.minimumQuantity)}::bigint,
             optimal_quantity = ${String(row.optimalQuantity)}::bigint, maximum_quantity =
               ${String(row.maximumQuantity)}::bigint,
             reorder_point = ${String(row.reorderPoint)}::bigint, is_backorder_allowed = ${row.isBackorderAllowed},
             is_restricted_to_single_position = ${row.isRestrictedToSinglePosition},
             preorder_deadline_at = ${row.preorderDeadlineAt?.toISOString() ?? null}::timestamptz, updated_at = now()
       WHERE tenant_id = ${tenantId}::uuid AND id = ${row.id}::uuid`;
  }
}

/** Deletes preferences; returns each one's id, product and warehouse. */
export async function deletePreferences(tx: Tx, tenantId: string, ids: string[]) {
  const rows = await tx.$queryRaw<unknown[]>`
    DELETE FROM item_preferences WHERE tenant_id = ${tenantId}::uuid AND id = ANY(${ids}::uuid[])
    RETURNING id, product_id AS "productId", warehouse_id AS "warehouseId"`;
  return parseRows(z.object({ id: uuid, productId: uuid, warehouseId: uuid }), rows);
}

export async function findPreferences(db: DbOrTx, tenantId: string, ids: readonly string[]) {
  const rows = await db.$queryRaw<unknown[]>`
    ${SELECT} WHERE f.tenant_id = ${tenantId}::uuid AND f.id = ANY(${[...ids]}::uuid[])`;
  return parseRows(PreferenceRow, rows);
}

/** The preferences of products at warehouses (whatever the business: a warehouse has one). */
export async function preferencesOfPairs(
  db: DbOrTx,
  tenantId: string,
  pairs: { productId: string; warehouseId: string }[],
) {
  if (pairs.length === 0) return [];
  const rows = await db.$queryRaw<unknown[]>`${SELECT}
    WHERE f.tenant_id = ${tenantId}::uuid AND (f.product_id, f.warehouse_id) IN (
      SELECT * FROM unnest(${pairs.map((p) => p.productId)}::uuid[], ${pairs.map((p) => p.warehouseId)}::uuid[]))`;
  return parseRows(PreferenceRow, rows);
}

export interface PreferenceFilter {
  skus?: string[];
  warehouseIds?: string[];
  businessIds?: string[];
}

function conditions(tenantId: string, filter: PreferenceFilter) {
  const list = [Prisma.sql`f.tenant_id = ${tenantId}::uuid`];
  if (filter.skus) list.push(Prisma.sql`p.sku = ANY(${filter.skus}::text[])`);
  if (filter.warehouseIds) list.push(Prisma.sql`f.warehouse_id = ANY(${filter.warehouseIds}::uuid[])`);
  if (filter.businessIds) list.push(Prisma.sql`f.business_id = ANY(${filter.businessIds}::uuid[])`);
  return list;
}

/** The preferences of a tenant in id (creation) order, narrowed by `filter`. */
export const preferenceList = (
  tenantId: string,
  filter: PreferenceFilter,
): SqlKeysetList<ItemPreferenceRecord, string> => ({
  select: SELECT,
  where: conditions(tenantId, filter),
  key: [Prisma.sql`f.id`],
  values: (id) => [Prisma.sql`${id}::uuid`],
  row: PreferenceRow,
  keyOf: (record) => record.id,
});

/** Positions (null: no position) where a product has units at a warehouse. */
export async function positionsHolding(tx: Tx, tenantId: string, productId: string, warehouseId: string) {
  const rows = await tx.$queryRaw<unknown[]>`
    SELECT DISTINCT position_id AS "positionId" FROM inventory_items
     WHERE tenant_id = ${tenantId}::uuid AND product_id = ${productId}::uuid AND warehouse_id = ${warehouseId}::uuid
       AND quantity > 0`;
  return parseRows(z.object({ positionId: uuid.nullable() }), rows).map((row) => row.positionId);
}
