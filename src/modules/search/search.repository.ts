/** Storage of indexes, documents and search settings. SQL only. */
import { Prisma, type SearchIndex } from '../../__generated__/prisma/client';
import { z } from 'zod';
import type { Db, DbOrTx, Tx } from '../../kernel/db';
import type { SqlKeysetList } from '../../kernel/keyset';
import { int8, parseFirstRow, parseRows, timestamp, uuid } from '../../kernel/rows';
import type { FieldType } from './engine/engine';
import type { FieldMapping, IndexSettings, IndexState } from './definition';
import type { MerchandisingRule } from './rules';

export interface IndexRow extends IndexState {
  name: string;
  rules: MerchandisingRule[];
  sourceId: string | null;
  sourceType: string;
  isActive: boolean;
  processedVersion: number;
  lastProcessedAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
}

export function toIndexRow(row: SearchIndex): IndexRow {
  return {
    id: row.id,
    tenantId: row.tenantId,
    alias: row.alias,
    name: row.name,
    sourceId: row.sourceId,
    sourceType: row.sourceType,
    fields: row.fields as unknown as FieldMapping[],
    searchFields: row.searchFields,
    displayFields: row.displayFields,
    filters: row.filters as unknown as { key: string }[],
    facetFields: row.facetFields,
    distinctField: row.distinctField,
    synonyms: row.synonyms as unknown as IndexSettings['synonyms'],
    stopWords: row.stopWords,
    rankingRules: row.rankingRules,
    sortableFields: row.sortableFields ?? [],
    matching: (row.matching ?? {}) as IndexSettings['matching'],
    rules: row.rules as unknown as MerchandisingRule[],
    seenFieldTypes: row.seenFieldTypes as Record<string, FieldType>,
    isActive: row.isActive,
    version: Number(row.version),
    rebuildVersion: Number(row.rebuildVersion),
    processedVersion: Number(row.processedVersion),
    lastProcessedAt: row.lastProcessedAt,
    createdAt: row.createdAt,
    updatedAt: row.updatedAt,
  };
}

/** The columns of an index definition that create and replace write. */
export interface IndexDefinitionData {
  name: string;
  sourceId: string | null;
  sourceType: string;
  settings: IndexSettings;
  isActive: boolean;
}

const definitionColumns = (data: IndexDefinitionData) => ({
  name: data.name,
  sourceId: data.sourceId,
  sourceType: data.sourceType,
  fields: data.settings.fields as unknown as Prisma.InputJsonValue,
  searchFields: data.settings.searchFields,
  displayFields: data.settings.displayFields,
  filters: data.settings.filters as unknown as Prisma.InputJsonValue,
  facetFields: data.settings.facetFields,
  distinctField: data.settings.distinctField,
  synonyms: data.settings.synonyms as unknown as Prisma.InputJsonValue,
  stopWords: data.settings.stopWords,
  rankingRules: data.settings.rankingRules,
  sortableFields: data.settings.sortableFields,
  matching: data.settings.matching as Prisma.InputJsonValue,
  isActive: data.isActive,
});

export const findIndex = async (db: DbOrTx, tenantId: string, alias: string) => {
  const row = await db.searchIndex.findFirst({ where: { tenantId, alias } });
  return row ? toIndexRow(row) : null;
};

export const findIndexById = async (db: DbOrTx, id: string) => {
  const row = await db.searchIndex.findUnique({ where: { id } });
  return row ? toIndexRow(row) : null;
};

export const aliasExistsInAnyTenant = async (db: Db, alias: string) =>
  (await db.searchIndex.findFirst({ where: { alias }, select: { id: true } })) !== null;

/** Aliases of the tenant equal to `base` or `base-<n>`, for picking a free one. */
export const aliasesLike = async (db: DbOrTx, tenantId: string, base: string) =>
  (await db.searchIndex.findMany({ where: { tenantId, alias: { startsWith: base } }, select: { alias: true } })).map(
    (r) => r.alias,
  );

export const INDEX_SORT_COLUMNS = {
  name: 'name',
  alias: 'alias',
  created_at: 'created_at',
  updated_at: 'updated_at',
} as const;
export type IndexSortKey = keyof typeof INDEX_SORT_COLUMNS;
export interface IndexSort {
  key: IndexSortKey;
  descending: boolean;
}

/** Cursor key: the sort column's value (text, or a timestamp in ISO form) and the id. */
export type IndexKey = [value: string, id: string];

const sortValue = (sort: IndexSort, key: IndexKey) =>
  sort.key === 'created_at' || sort.key === 'updated_at' ? Prisma.sql`${key[0]}::timestamptz` : Prisma.sql`${key[0]}`;

export const indexKeyOf = (sort: IndexSort, row: IndexRow): IndexKey => [
  sort.key === 'created_at'
    ? row.createdAt.toISOString()
    : sort.key === 'updated_at'
      ? row.updatedAt.toISOString()
      : row[sort.key],
  row.id,
];

/**
 * An index row as the list query selects it. The JSON columns hold what the index schemas
 * validated on write, so they are taken as stored.
 */
export const IndexListRow = z
  .object({
    id: uuid,
    tenantId: uuid,
    alias: z.string(),
    name: z.string(),
    sourceId: z.string().nullable(),
    sourceType: z.string(),
    fields: z.custom<FieldMapping[]>(Array.isArray),
    searchFields: z.array(z.string()).nullable(),
    displayFields: z.array(z.string()).nullable(),
    filters: z.custom<{ key: string }[]>(Array.isArray),
    facetFields: z.array(z.string()).nullable(),
    distinctField: z.string().nullable(),
    synonyms: z.custom<IndexSettings['synonyms']>(Array.isArray),
    stopWords: z.array(z.string()).nullable(),
    rankingRules: z.array(z.string()).nullable(),
    sortableFields: z.array(z.string()).nullable(),
    matching: z.custom<IndexSettings['matching']>((value) => typeof value === 'object' && value !== null),
    rules: z.custom<MerchandisingRule[]>(Array.isArray),
    seenFieldTypes: z.custom<Record<string, FieldType>>((value) => typeof value === 'object' && value !== null),
    isActive: z.boolean(),
    version: int8,
    rebuildVersion: int8,
    processedVersion: int8,
    lastProcessedAt: timestamp.nullable(),
    createdAt: timestamp,
    updatedAt: timestamp,
  })
  .transform((row): IndexRow => ({
    ...row,
    searchFields: row.searchFields ?? [],
    displayFields: row.displayFields ?? [],
    facetFields: row.facetFields ?? [],
    stopWords: row.stopWords ?? [],
    rankingRules: row.rankingRules ?? [],
    sortableFields: row.sortableFields ?? [],
  }));

/** The columns `IndexListRow` parses; the counters as float8, which Prisma and pg both hand over as numbers. */
export const INDEX_COLUMNS = `
  id, tenant_id AS "tenantId", alias, name, source_id AS "sourceId", source_type AS "sourceType",
  fields, search_fields AS "searchFields", display_fields AS "displayFields", filters, facet_fields AS "facetFields",
  distinct_field AS "distinctField", synonyms, stop_words AS "stopWords", ranking_rules AS "rankingRules",
  sortable_fields AS "sortableFields", matching, rules, seen_field_types AS "seenFieldTypes", is_active AS "isActive",
  version::float8 AS version, rebuild_version::float8 AS "rebuildVersion",
  processed_version::float8 AS "processedVersion", last_processed_at AS "lastProcessedAt", created_at AS "createdAt",
  updated_at AS "updatedAt"`;

/** The indexes of a tenant sorted by `sort`, then by id. */
export function indexList(tenantId: string, sort: IndexSort): SqlKeysetList<IndexRow, IndexKey> {
  return {
    select: Prisma.sql`SELECT ${Prisma.raw(INDEX_COLUMNS)} FROM search_indexes`,
    where: [Prisma.sql`tenant_id = ${tenantId}::uuid`],
    key: [Prisma.raw(`"${INDEX_SORT_COLUMNS[sort.key]}"`), Prisma.sql`id`],
    values: (key) => [sortValue(sort, key), Prisma.sql`${key[1]}::uuid`],
    descending: sort.descending,
    row: IndexListRow,
    keyOf: (row) => indexKeyOf(sort, row),
  };
}

export const insertIndex = async (db: DbOrTx, id: string, tenantId: string, alias: string, data: IndexDefinitionData) =>
  toIndexRow(
    await db.searchIndex.create({
      data: { id, tenantId, alias, ...definitionColumns(data), seenFieldTypes: {}, version: 1, rebuildVersion: 1 },
    }),
  );

/**
 * Locks the index row for a write and reads it in the same statement; everything written to the
 * index is serialised behind this lock.
 */
export async function lockIndex(tx: Tx, tenantId: string, alias: string): Promise<IndexRow | null> {
  return (
    parseFirstRow(
      IndexListRow,
      await tx.$queryRaw<unknown[]>`
        SELECT ${Prisma.raw(INDEX_COLUMNS)} FROM search_indexes
         WHERE tenant_id = ${tenantId}::uuid AND alias = ${alias} FOR UPDATE`,
    ) ?? null
  );
}

/** Replaces the definition; the next version rebuilds every copy. Keeps the seen types that still apply. */
export const replaceIndexDefinition = async (
  tx: Tx,
  index: IndexRow,
  data: IndexDefinitionData,
  seenFieldTypes: Record<string, FieldType>,
) =>
  toIndexRow(
    await tx.searchIndex.update({
      where: { id: index.id },
      data: {
        ...definitionColumns(data),
        seenFieldTypes,
        version: { increment: 1 },
        rebuildVersion: index.version + 1,
        updatedAt: new Date(),
      },
    }),
  );

/** Replaces the merchandising rules at the index's next version; no copy is rebuilt for it. */
export const replaceRules = async (tx: Tx, index: IndexRow, rules: MerchandisingRule[]) =>
  toIndexRow(
    await tx.searchIndex.update({
      where: { id: index.id },
      data: { rules: rules as unknown as Prisma.InputJsonValue, version: { increment: 1 }, updatedAt: new Date() },
    }),
  );

/** Forgets the index's recorded deletions: after a rebuild no copy needs them. */
export const forgetDeletions = (tx: Tx, indexId: string) =>
  tx.searchDocumentDeletion.deleteMany({ where: { indexId } });

export const deleteIndex = async (db: Db, tenantId: string, alias: string) => {
  const rows = await db.searchIndex.findMany({ where: { tenantId, alias }, select: { id: true } });
  await db.searchIndex.deleteMany({ where: { tenantId, alias } });
  return rows[0]?.id ?? null;
};

/** Upserts documents at the index's next version; returns that version. */
export async function writeDocuments(
  tx: Tx,
  index: IndexRow,
  documents: { id: string; data: unknown }[],
  seenFieldTypes: Record<string, FieldType>,
) {
  const version = index.version + 1;
  // One statement: the index's version moves with the documents, in one round trip.
  await tx.$executeRaw`
    WITH moved AS (
      UPDATE search_indexes SET version = ${version}, seen_field_types = ${JSON.stringify(seenFieldTypes)}::jsonb
       WHERE id = ${index.id}::uuid
    )
    INSERT INTO search_documents (index_id, id, data, version, updated_at)
    SELECT ${index.id}::uuid, d.id, d.data, ${version}, now()
      FROM jsonb_to_recordset(${JSON.stringify(documents)}::jsonb) AS d(id text, data jsonb)
    ON CONFLICT (index_id, id) DO UPDATE SET data = EXCLUDED.data, version = EXCLUDED.version, updated_at =
      EXCLUDED.updated_at`;
  return version;
}

/** Deletes every document; the next version rebuilds every copy. Returns that version. */
export async function clearDocuments(tx: Tx, index: IndexRow) {
  const version = index.version + 1;
  await tx.searchIndex.update({
    where: { id: index.id },
    data: { version, rebuildVersion: version, seenFieldTypes: {} },
  });
  await tx.searchDocument.deleteMany({ where: { indexId: index.id } });
  await tx.searchDocumentDeletion.deleteMany({ where: { indexId: index.id } });
  return version;
}

/**
 * Deletes these documents at the index's next version and records their ids for processes catching
 * up. Returns the ids that existed and the version, which stays put when none did.
 */
export async function deleteDocuments(tx: Tx, index: IndexRow, ids: string[]) {
  const deleted = parseRows(
    z.object({ id: z.string() }),
    await tx.$queryRaw<unknown[]>`
      DELETE FROM search_documents WHERE index_id = ${index.id}::uuid AND id = ANY(${ids}::text[]) RETURNING id`,
  ).map((row) => row.id);
  if (deleted.length === 0) return { deleted, version: index.version };
  const version = index.version + 1;
  await tx.searchIndex.update({ where: { id: index.id }, data: { version } });
  await tx.$executeRaw`
    INSERT INTO search_document_deletions (index_id, id, version)
    SELECT ${index.id}::uuid, unnest(${deleted}::text[]), ${version}
    ON CONFLICT (index_id, id) DO UPDATE SET version = EXCLUDED.version`;
  return { deleted, version };
}

/** Ids of documents deleted after `sinceVersion`. */
export const readDeletions = async (tx: Tx, indexId: string, sinceVersion: number) =>
  (
    await tx.searchDocumentDeletion.findMany({
      where: { indexId, version: { gt: sinceVersion } },
      select: { id: true },
    })
  ).map((row) => row.id);

/** The stored documents with these ids (those that exist). */
export const findDocuments = async (db: DbOrTx, indexId: string, ids: string[]): Promise<StoredDocument[]> =>
  (await db.searchDocument.findMany({ where: { indexId, id: { in: ids } }, select: { id: true, data: true } })).map(
    (row) => ({ id: row.id, data: row.data }),
  );

/** Records that the engine has applied `version`; never moves backwards. */
export const markProcessed = (db: Db, indexId: string, version: number) =>
  db.$executeRaw`
    UPDATE search_indexes SET processed_version = ${version}, last_processed_at = now()
     WHERE id = ${indexId}::uuid AND processed_version < ${version}`;

export interface StoredDocument {
  id: string;
  data: unknown;
}

/** One chunk of an index's documents in id order, optionally only those written after a version. */
export const readDocuments = async (
  tx: Tx,
  indexId: string,
  options: { afterId?: string; sinceVersion?: number; limit: number },
): Promise<StoredDocument[]> =>
  parseRows(
    z.object({ id: z.string(), data: z.unknown() }),
    await tx.$queryRaw<unknown[]>`
      SELECT id, data FROM search_documents
       WHERE index_id = ${indexId}::uuid
         ${options.afterId !== undefined ? Prisma.sql`AND id > ${options.afterId}` : Prisma.empty}
         ${options.sinceVersion !== undefined ? Prisma.sql`AND version > ${options.sinceVersion}` : Prisma.empty}
       ORDER BY id
       LIMIT ${options.limit}`,
  );

// Search settings of a proxy key.

export const saveSearchSettings = (db: Db, proxyKey: string, tenantId: string, settings: unknown) =>
  db.searchSettings.upsert({
    where: { proxyKey },
    create: { proxyKey, tenantId, settings: settings as Prisma.InputJsonValue },
    update: { settings: settings as Prisma.InputJsonValue, updatedAt: new Date() },
  });

export const findIndexesByAlias = async (db: Db, tenantId: string, aliases: string[]) =>
  (await db.searchIndex.findMany({ where: { tenantId, alias: { in: aliases } } })).map(toIndexRow);

export const findIndexIdsByAlias = async (db: Db, tenantId: string, aliases: string[]) =>
  (await db.searchIndex.findMany({ where: { tenantId, alias: { in: aliases } }, select: { id: true } })).map(
    (row) => row.id,
  );

export interface IndexSize {
  id: string;
  documents: number;
  /** Index versions written but not applied to the engine yet. */
  lag: number;
}

/** Per index (at most `limit`, largest first): documents stored and changes the engine has not caught up with. */
export async function indexSizes(db: Db, limit: number) {
  return db.$queryRaw<IndexSize[]>`
    SELECT i.id::text AS id, (SELECT count(*) FROM search_documents d WHERE d.index_id = i.id)::int AS documents,
           greatest(i.version - i.processed_version, 0)::float8 AS lag
      FROM search_indexes i ORDER BY documents DESC, i.id LIMIT ${limit}`;
}

/** The ids of all a tenant's indexes. */
export const indexIdsOfTenant = async (db: DbOrTx, tenantId: string) =>
  parseRows(
    z.object({ id: uuid }),
    await db.$queryRaw<unknown[]>`SELECT id::text AS id FROM search_indexes WHERE tenant_id = ${tenantId}::uuid`,
  ).map((row) => row.id);
