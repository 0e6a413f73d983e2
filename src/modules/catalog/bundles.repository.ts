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
 * Serialises the tenant's bundle definitions: with two definitions in flight, neither could see
 * that the other makes its component a bundle (a bundle inside a bundle).
 */
export async function lockBundleDefinitions(tx: Tx, tenantId: string) {
  await tx.$queryRaw`SELECT 1 AS locked FROM pg_advisory_xact_lock(hashtextextended(${`bundles:${tenantId}`}, 0))`;
}

/** Locks the product row; false when the tenant has no such product. */
export async function lockProduct(tx: Tx, tenantId: string, id: string) {
  const rows = await tx.$queryRaw<unknown[]>`
    SELECT 1 FROM products WHERE tenant_id = ${tenantId}::uuid AND id = ${id}::uuid FOR UPDATE`;
  return rows.length === 1;
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
