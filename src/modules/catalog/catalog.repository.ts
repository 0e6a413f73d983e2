import type { DbOrTx, Tx } from '../../kernel/db';
import type { KeysetQuery } from '../../kernel/pagination';
import type { Product as ProductRow } from '../../__generated__/prisma/client';

/** Either the client or a transaction: reads work on both. */

/** The Prisma delegates of the catalog's tables, which all page the same way: by id (UUIDv7: creation order). */
type CatalogModel = 'product' | 'business' | 'warehouse' | 'position' | 'salesChannel';

interface IdPagedDelegate<Row> {
  findMany(args: unknown): Promise<Row[]>;
  findFirst(args: unknown): Promise<Row | null>;
}

const delegate = <Row>(db: DbOrTx, model: CatalogModel) => db[model] as unknown as IdPagedDelegate<Row>;

/** A page of rows of one catalog table in id order, narrowed by `where`. */
export const listById = <Row>(db: DbOrTx, model: CatalogModel, where: Record<string, unknown>, query: KeysetQuery<string>) =>
  delegate<Row>(db, model).findMany({
    where: {
      ...where,
      ...(query.after !== undefined ? { id: { gt: query.after } } : {}),
      ...(query.before !== undefined ? { id: { lt: query.before } } : {}),
    },
    orderBy: { id: query.backwards ? 'desc' : 'asc' },
    take: query.take,
  });

/** Whether a row matching `where` lies before or after `id`. */
export const existsBesideId = async (db: DbOrTx, model: CatalogModel, where: Record<string, unknown>, direction: 'before' | 'after', id: string) =>
  (await delegate<{ id: string }>(db, model).findFirst({
    where: { ...where, id: direction === 'before' ? { lt: id } : { gt: id } },
    select: { id: true },
  })) !== null;

/** Products of a tenant in id order (UUIDv7: creation order). */
export const listProducts = (db: DbOrTx, tenantId: string, query: KeysetQuery<string>) =>
  listById<ProductRow>(db, 'product', { tenantId }, query);

export const findProduct = (db: DbOrTx, tenantId: string, id: string) => db.product.findFirst({ where: { tenantId, id } });
export const findBusiness = (db: DbOrTx, tenantId: string, id: string) => db.business.findFirst({ where: { tenantId, id } });
export const findWarehouse = (db: DbOrTx, tenantId: string, id: string) => db.warehouse.findFirst({ where: { tenantId, id } });
export const findPosition = (db: DbOrTx, tenantId: string, id: string) => db.position.findFirst({ where: { tenantId, id } });
export const findSalesChannel = (db: DbOrTx, tenantId: string, id: string) => db.salesChannel.findFirst({ where: { tenantId, id } });

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
export const positionsByCodes = (db: DbOrTx, tenantId: string, warehouseIds: readonly string[], codes: readonly string[]) =>
  db.position.findMany({ where: { tenantId, warehouseId: { in: [...warehouseIds] }, code: { in: [...codes] } } });

export const insertProduct = (db: DbOrTx, data: { id: string; tenantId: string; sku: string; name: string; gtin: string[] }) =>
  db.product.create({ data });
export const insertBusiness = (db: DbOrTx, data: { id: string; tenantId: string; name: string }) => db.business.create({ data });
export const insertWarehouse = (db: DbOrTx, data: { id: string; tenantId: string; businessId: string; name: string }) =>
  db.warehouse.create({ data });
export const insertPosition = (db: DbOrTx, data: { id: string; tenantId: string; warehouseId: string; code: string }) =>
  db.position.create({ data });
export const insertSalesChannel = (db: DbOrTx, data: { id: string; tenantId: string; name: string }) => db.salesChannel.create({ data });

/** Updates a row of the tenant; returns it, or null when the tenant has no such row. */
export async function updateRow<Row>(db: DbOrTx, model: CatalogModel, tenantId: string, id: string, data: Record<string, unknown>) {
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
export async function stockReferences(db: DbOrTx, column: 'product_id' | 'warehouse_id' | 'position_id', id: string) {
  // The column name comes from the fixed union above, never from input.
  const [row] = await db.$queryRawUnsafe<{ lines: boolean; ledger: boolean; incoming: boolean }[]>(
    `SELECT EXISTS (SELECT 1 FROM inventory_items WHERE ${column} = $1::uuid) AS lines,
            EXISTS (SELECT 1 FROM stock_mutations WHERE ${column} = $1::uuid) AS ledger,
            EXISTS (SELECT 1 FROM incoming_stock WHERE ${column} = $1::uuid) AS incoming`,
    id,
  );
  return row!;
}

export const businessHasWarehouses = async (db: DbOrTx, businessId: string) =>
  (await db.warehouse.findFirst({ where: { businessId }, select: { id: true } })) !== null;
