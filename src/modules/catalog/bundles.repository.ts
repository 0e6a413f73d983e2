/** Bundles: their component rows and the product flag, read and written in the caller's transaction. */
import { z } from 'zod';
import type { DbOrTx, Tx } from '../../kernel/db';

export interface BundleComponentRow {
  bundleId: string;
  componentId: string;
  quantity: bigint;
}

const ComponentRow = z.object({ bundleId: z.string(), componentId: z.string(), quantity: z.bigint() });

/** The components of each bundle of `bundleIds`, in the order last set. */
export async function componentsOf(
  db: DbOrTx,
  tenantId: string,
  bundleIds: readonly string[],
): Promise<BundleComponentRow[]> {
  if (bundleIds.length === 0) return [];
  const rows = await db.bundleComponent.findMany({
    where: { tenantId, bundleId: { in: [...bundleIds] } },
    orderBy: [{ bundleId: 'asc' }, { position: 'asc' }],
    select: { bundleId: true, componentId: true, quantity: true },
  });
  return rows.map((row) => ComponentRow.parse(row));
}

/** Whether the product is a component of any bundle. */
export const isComponent = async (db: DbOrTx, tenantId: string, productId: string) =>
  (await db.bundleComponent.findFirst({ where: { tenantId, componentId: productId }, select: { bundleId: true } })) !==
  null;

/**
 * Locks the product rows (ascending id, so two writers cannot deadlock); the ids of those that
 * exist. Every bundle definition locks its bundle and its components: two definitions that could
 * together put a bundle inside a bundle share a product, so one waits for the other.
 */
export async function lockProducts(tx: Tx, tenantId: string, ids: string[]) {
  const rows = await tx.$queryRaw<{ id: string }[]>`
    SELECT id::text FROM products WHERE tenant_id = ${tenantId}::uuid AND id = ANY(${ids}::uuid[])
     ORDER BY id FOR UPDATE`;
  return new Set(rows.map((row) => row.id));
}

/** Replaces a bundle's components (none: a plain product again) and sets the product's flag. */
export async function replaceComponents(
  tx: DbOrTx,
  tenantId: string,
  bundleId: string,
  components: { componentId: string; quantity: number }[],
) {
  await tx.bundleComponent.deleteMany({ where: { tenantId, bundleId } });
  await tx.bundleComponent.createMany({
    data: components.map((component, position) => ({
      tenantId,
      bundleId,
      componentId: component.componentId,
      quantity: BigInt(component.quantity),
      position,
    })),
  });
  await tx.product.updateMany({
    where: { tenantId, id: bundleId },
    data: { isBundle: components.length > 0, updatedAt: new Date() },
  });
}

/**
 * Takes the bundle definition locks of the products (`bundle_definition_lock`, ./sql/bundle-definitions.sql)
 * to the end of the transaction: shared, for a write that reads whether they are bundles; exclusive,
 * for the definition of one.
 */
export async function lockDefinitions(tx: DbOrTx, tenantId: string, productIds: readonly string[], exclusive: boolean) {
  await tx.$executeRaw`SELECT bundle_definition_lock(${tenantId}::uuid, ${[...productIds]}::uuid[], ${exclusive})`;
}

/**
 * The components (with their SKUs) of those of `productIds` that are bundles, in the order last set.
 * Read under the products' shared definition locks, in one statement (`bundle_components_locked`):
 * in a transaction, no definition of them changes before it ends (outside one, the read is of a
 * committed definition).
 */
export async function componentsWithSkus(db: DbOrTx, tenantId: string, productIds: readonly string[]) {
  if (productIds.length === 0) return [];
  const rows = await db.$queryRaw<unknown[]>`
    SELECT bundle_id AS "bundleId", component_id AS "componentId", sku, quantity
      FROM bundle_components_locked(${tenantId}::uuid, ${[...productIds]}::uuid[])`;
  return rows.map((row) => ComponentRow.extend({ sku: z.string() }).parse(row));
}

/** The ids of the tenant's warehouses. */
export const warehouseIdsOf = async (tx: DbOrTx, tenantId: string) =>
  (await tx.warehouse.findMany({ where: { tenantId }, select: { id: true }, orderBy: { id: 'asc' } })).map(
    (warehouse) => warehouse.id,
  );
