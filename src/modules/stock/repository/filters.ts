/** The filters that inventory and ledger reads share, as SQL conditions. */
import { Prisma } from '../../../__generated__/prisma/client';
import type { InventoryItemState } from '../stock.types';

type Sql = Prisma.Sql;

/** Which lines a read is about; every given filter must hold. */
export interface LineFilter {
  ids?: string[];
  productIds?: string[];
  skus?: string[];
  warehouseIds?: string[];
  businessIds?: string[];
  /** Warehouse ids or position ids. */
  locationIds?: string[];
  /** Exactly this position (null: lines without a position). */
  positionId?: string | null;
  /** The warehouses this sales channel sells from. */
  channelId?: string;
  states?: InventoryItemState[];
  batchNumbers?: string[];
  serialNumbers?: string[];
  quantity?: Inequality;
}

export interface Inequality {
  eq?: number | null;
  gt?: number | null;
  gte?: number | null;
  lt?: number | null;
  lte?: number | null;
}

export const bigint = (value: number) => Prisma.sql`${String(value)}::bigint`;
/** Unix milliseconds as an exact timestamp (no floating point on the way). */
export const timestamp = (ms: number) =>
  Prisma.sql`(TIMESTAMPTZ 'epoch' + ${String(ms)}::bigint * INTERVAL '1 millisecond')`;

export function inequality(column: Sql, filter: Inequality | undefined, value: (n: number) => Sql = bigint): Sql[] {
  if (!filter) return [];
  const conditions: Sql[] = [];
  if (filter.eq != null) conditions.push(Prisma.sql`${column} = ${value(filter.eq)}`);
  if (filter.gt != null) conditions.push(Prisma.sql`${column} > ${value(filter.gt)}`);
  if (filter.gte != null) conditions.push(Prisma.sql`${column} >= ${value(filter.gte)}`);
  if (filter.lt != null) conditions.push(Prisma.sql`${column} < ${value(filter.lt)}`);
  if (filter.lte != null) conditions.push(Prisma.sql`${column} <= ${value(filter.lte)}`);
  return conditions;
}

/** Conditions on a table with tenant_id, product_id, warehouse_id and position_id columns (alias `alias`). */
export function stockConditions(alias: string, tenantId: string, filter: LineFilter): Sql[] {
  const a = (column: string) => Prisma.raw(`${alias}.${column}`);
  const conditions: Sql[] = [Prisma.sql`${a('tenant_id')} = ${tenantId}::uuid`];
  if (filter.productIds) conditions.push(Prisma.sql`${a('product_id')} = ANY(${filter.productIds}::uuid[])`);
  if (filter.skus) {
    conditions.push(
      Prisma.sql`${a('product_id')} IN (SELECT id FROM products WHERE tenant_id = ${tenantId}::uuid AND sku =
          ANY(${filter.skus}::text[]))`,
    );
  }
  if (filter.warehouseIds) conditions.push(Prisma.sql`${a('warehouse_id')} = ANY(${filter.warehouseIds}::uuid[])`);
  if (filter.businessIds) {
    conditions.push(
      Prisma.sql`${a('warehouse_id')} IN (SELECT id FROM warehouses WHERE tenant_id = ${tenantId}::uuid AND
          business_id = ANY(${filter.businessIds}::uuid[]))`,
    );
  }
  if (filter.locationIds) {
    conditions.push(
      Prisma.sql`(${a('warehouse_id')} = ANY(${filter.locationIds}::uuid[]) OR ${a('position_id')} =
          ANY(${filter.locationIds}::uuid[]))`,
    );
  }
  if (filter.channelId !== undefined) {
    conditions.push(
      Prisma.sql`${a('warehouse_id')} IN (SELECT warehouse_id FROM channel_warehouses
          WHERE tenant_id = ${tenantId}::uuid AND channel_id = ${filter.channelId}::uuid)`,
    );
  }
  if (filter.positionId !== undefined)
    conditions.push(Prisma.sql`${a('position_id')} IS NOT DISTINCT FROM ${filter.positionId}::uuid`);
  return conditions;
}
