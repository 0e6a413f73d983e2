import { z } from 'zod';
import type { DbOrTx, Tx } from '../../kernel/db';
import type { AllocationStrategy } from './catalog.schemas';
import { modelKeysetSource, type KeysetDelegate } from '../../kernel/keyset';

/** The Prisma delegates of the catalog's tables, which all page the same way: by id (UUIDv7: creation order). */
type CatalogModel = 'product' | 'business' | 'warehouse' | 'position' | 'salesChannel';

/** The rows of one catalog table narrowed by `where`, as a keyset list in id (creation) order. */
export const listById = <Row extends { id: string }>(db: DbOrTx, model: CatalogModel, where: Record<string, unknown>) =>
  modelKeysetSource(db[model] as unknown as KeysetDelegate<Row>, where, 'id');

export const findProduct = (db: DbOrTx, tenantId: string, id: string) =>
  db.product.findFirst({ where: { tenantId, id } });
export const findBusiness = (db: DbOrTx, tenantId: string, id: string) =>
  db.business.findFirst({ where: { tenantId, id } });
export const findWarehouse = (db: DbOrTx, tenantId: string, id: string) =>
  db.warehouse.findFirst({ where: { tenantId, id } });
export const findPosition = (db: DbOrTx, tenantId: string, id: string) =>
  db.position.findFirst({ where: { tenantId, id } });
export const findSalesChannel = (db: DbOrTx, tenantId: string, id: string) =>
  db.salesChannel.findFirst({ where: { tenantId, id } });

/** The tenant's first `limit` businesses, warehouses and sales channels (with their warehouses), oldest first. */
export const firstLocations = async (db: DbOrTx, tenantId: string, limit: number) => ({
  businesses: await db.business.findMany({ where: { tenantId }, orderBy: { id: 'asc' }, take: limit }),
  warehouses: await db.warehouse.findMany({ where: { tenantId }, orderBy: { id: 'asc' }, take: limit }),
  channels: await db.salesChannel.findMany({
    where: { tenantId },
    orderBy: { id: 'asc' },
    take: limit,
    include: { warehouses: { orderBy: { priority: 'asc' }, select: { warehouseId: true } } },
  }),
});

export const productsByIds = (db: DbOrTx, tenantId: string, ids: readonly string[]) =>
  db.product.findMany({ where: { tenantId, id: { in: [...ids] } } });
export const businessesByIds = (db: DbOrTx, tenantId: string, ids: readonly string[]) =>
  db.business.findMany({ where: { tenantId, id: { in: [...ids] } } });
export const warehousesByIds = (db: DbOrTx, tenantId: string, ids: readonly string[]) =>
  db.warehouse.findMany({ where: { tenantId, id: { in: [...ids] } } });
export const positionsByIds = (db: DbOrTx, tenantId: string, ids: readonly string[]) =>
  db.position.findMany({ where: { tenantId, id: { in: [...ids] } } });
export const salesChannelsByIds = (db: DbOrTx, tenantId: string, ids: readonly string[]) =>
  db.salesChannel.findMany({ where: { tenantId, id: { in: [...ids] } } });

export const productsBySkus = (db: DbOrTx, tenantId: string, skus: readonly string[]) =>
  db.product.findMany({ where: { tenantId, sku: { in: [...skus] } } });

/** Positions of the given warehouses whose code is one of `codes`. */
export const positionsByCodes = (
  db: DbOrTx,
  tenantId: string,
  warehouseIds: readonly string[],
  codes: readonly string[],
) => db.position.findMany({ where: { tenantId, warehouseId: { in: [...warehouseIds] }, code: { in: [...codes] } } });

export const insertProduct = (
  db: DbOrTx,
  data: {
    id: string;
    tenantId: string;
    sku: string;
    name: string;
    gtin: string[];
    taxClass: string;
    weightGrams: number | null;
  },
) => db.product.create({ data });
export const insertBusiness = (db: DbOrTx, data: { id: string; tenantId: string; name: string }) =>
  db.business.create({ data });
export const insertWarehouse = (
  db: DbOrTx,
  data: {
    id: string;
    tenantId: string;
    businessId: string;
    name: string;
    latitude?: number;
    longitude?: number | null;
    countryCode?: string;
  },
) => db.warehouse.create({ data });
export const insertPosition = (db: DbOrTx, data: { id: string; tenantId: string; warehouseId: string; code: string }) =>
  db.position.create({ data });
export const insertSalesChannel = (
  db: DbOrTx,
  data: { id: string; tenantId: string; name: string; currency?: string; taxInclusive?: boolean },
) => db.salesChannel.create({ data });

/** Updates a row of the tenant; returns it, or null when the tenant has no such row. */
export async function updateRow<Row>(
  db: DbOrTx,
  model: CatalogModel,
  tenantId: string,
  id: string,
  data: Record<string, unknown>,
) {
  const table = db[model] as unknown as {
    updateMany(args: unknown): Promise<{ count: number }>;
    findFirst(args: unknown): Promise<Row | null>;
  };
  const { count } = await table.updateMany({ where: { tenantId, id }, data: { ...data, updatedAt: new Date() } });
  return count === 0 ? null : table.findFirst({ where: { tenantId, id } });
}

/** Deletes a row of the tenant; returns whether it existed. */
export async function deleteRow(db: DbOrTx, model: CatalogModel, tenantId: string, id: string) {
  const table = db[model] as unknown as { deleteMany(args: unknown): Promise<{ count: number }> };
  return (await table.deleteMany({ where: { tenantId, id } })).count > 0;
}

/** What still refers to a product, warehouse or position and so prevents its deletion. */
export async function stockReferences(
  db: DbOrTx,
  tenantId: string,
  column: 'product_id' | 'warehouse_id' | 'position_id',
  id: string,
) {
  // The column name comes from the fixed union above, never from input.
  const rows = await db.$queryRawUnsafe<unknown[]>(
    `SELECT EXISTS (SELECT 1 FROM inventory_items WHERE tenant_id = $1::uuid AND ${column} = $2::uuid) AS lines,
            EXISTS (SELECT 1 FROM stock_mutations WHERE tenant_id = $1::uuid AND ${column} = $2::uuid) AS ledger,
            EXISTS (SELECT 1 FROM incoming_stock WHERE tenant_id = $1::uuid AND ${column} = $2::uuid) AS incoming`,
    tenantId,
    id,
  );
  return z.object({ lines: z.boolean(), ledger: z.boolean(), incoming: z.boolean() }).parse(rows[0]);
}

export const businessHasWarehouses = async (db: DbOrTx, tenantId: string, businessId: string) =>
  (await db.warehouse.findFirst({ where: { tenantId, businessId }, select: { id: true } })) !== null;

/** The warehouse ids of each channel, in priority order. */
export async function warehouseIdsOfChannels(db: DbOrTx, tenantId: string, channelIds: readonly string[]) {
  const links = await db.channelWarehouse.findMany({
    where: { tenantId, channelId: { in: [...channelIds] } },
    orderBy: [{ channelId: 'asc' }, { priority: 'asc' }],
  });
  return channelIds.map((id) => links.filter((link) => link.channelId === id).map((link) => link.warehouseId));
}

export const setAllocationStrategy = (db: DbOrTx, tenantId: string, channelId: string, strategy: AllocationStrategy) =>
  db.salesChannel.updateMany({
    where: { tenantId, id: channelId },
    data: { allocationStrategy: strategy, updatedAt: new Date() },
  });

/** Replaces a channel's warehouses by `warehouseIds`, in that priority order. */
export async function replaceChannelWarehouses(tx: Tx, tenantId: string, channelId: string, warehouseIds: string[]) {
  await tx.channelWarehouse.deleteMany({ where: { tenantId, channelId } });
  await tx.channelWarehouse.createMany({
    data: warehouseIds.map((warehouseId, priority) => ({ tenantId, channelId, warehouseId, priority })),
  });
}

/** Locks the tenant's sales channel row for the rest of the transaction; false when there is none. */
export async function lockSalesChannel(tx: Tx, tenantId: string, id: string) {
  const rows = await tx.$queryRaw<unknown[]>`
    SELECT 1 FROM sales_channels WHERE tenant_id = ${tenantId}::uuid AND id = ${id}::uuid FOR UPDATE`;
  return rows.length === 1;
}
