/**
 * The catalog's read model: how the modules that write stock documents (stock itself, supply,
 * transfers, orders, preferences, broadcasts, MCP's tools) check the catalog ids and SKUs of their
 * input. Each read takes the caller's handle, its transaction when it has one, so that it sees the
 * caller's snapshot and takes no second connection; none checks a scope (the caller's operation
 * did). They return the catalog's rows as Prisma reads them; only the catalog writes them.
 */
import type { DbOrTx } from '../../kernel/db';
import * as bundles from './bundles.repository';
import * as repository from './catalog.repository';

/** The tenant's products with these SKUs (those that exist). */
export const productsBySkus = (db: DbOrTx, tenantId: string, skus: readonly string[]) =>
  repository.productsBySkus(db, tenantId, skus);

/** The tenant's businesses, warehouses and positions with these ids (those that exist; ids must be UUIDs). */
export const businessesByIds = (db: DbOrTx, tenantId: string, ids: readonly string[]) =>
  repository.businessesByIds(db, tenantId, ids);
export const warehousesByIds = (db: DbOrTx, tenantId: string, ids: readonly string[]) =>
  repository.warehousesByIds(db, tenantId, ids);
export const positionsByIds = (db: DbOrTx, tenantId: string, ids: readonly string[]) =>
  repository.positionsByIds(db, tenantId, ids);

/**
 * The tenant's first `limit` businesses, warehouses and sales channels (with the warehouses each
 * sells from, by priority), oldest first: where its stock is and through what it sells.
 */
export const firstLocations = (db: DbOrTx, tenantId: string, limit: number) =>
  repository.firstLocations(db, tenantId, limit);

/** One business, warehouse or sales channel of the tenant, or null (the id must be a UUID). */
export const findBusiness = (db: DbOrTx, tenantId: string, id: string) => repository.findBusiness(db, tenantId, id);
export const findWarehouse = (db: DbOrTx, tenantId: string, id: string) => repository.findWarehouse(db, tenantId, id);
export const findSalesChannel = (db: DbOrTx, tenantId: string, id: string) =>
  repository.findSalesChannel(db, tenantId, id);

/** Positions of the given warehouses whose code is one of `codes`. */
export const positionsByCodes = (
  db: DbOrTx,
  tenantId: string,
  warehouseIds: readonly string[],
  codes: readonly string[],
) => repository.positionsByCodes(db, tenantId, warehouseIds, codes);

/**
 * The components (with their SKUs) of those of `productIds` that are bundles, under their shared
 * definition locks: in the caller's transaction no definition of them changes before it ends.
 */
export const bundleComponents = (db: DbOrTx, tenantId: string, productIds: readonly string[]) =>
  bundles.componentsWithSkus(db, tenantId, productIds);
