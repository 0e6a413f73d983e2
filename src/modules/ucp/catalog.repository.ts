/** Storage of the tenants' catalog settings. SQL only. */
import type { Db } from '../../kernel/db';
import { CatalogMapping, type CatalogMappingData } from './catalog-settings.schemas';

export interface CatalogRow {
  tenantId: string;
  indexAlias: string;
  mapping: CatalogMappingData;
  updatedAt: Date;
}

const toRow = (row: { tenantId: string; indexAlias: string; mapping: unknown; updatedAt: Date }): CatalogRow => ({
  ...row,
  // Parsed at this boundary: a mapping stored before a field was added reads with its default.
  mapping: CatalogMapping.parse(row.mapping),
});

export async function findCatalog(db: Db, tenantId: string): Promise<CatalogRow | null> {
  const row = await db.ucpCatalog.findUnique({ where: { tenantId } });
  return row ? toRow(row) : null;
}

export async function upsertCatalog(db: Db, tenantId: string, indexAlias: string, mapping: CatalogMappingData) {
  const now = new Date();
  const row = await db.ucpCatalog.upsert({
    where: { tenantId },
    create: { tenantId, indexAlias, mapping, createdAt: now, updatedAt: now },
    update: { indexAlias, mapping, updatedAt: now },
  });
  return toRow(row);
}
