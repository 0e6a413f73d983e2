import { parse as parseCsv } from 'csv-parse/sync';
import type { CursorCodec } from '../../kernel/cursor';
import { isUniqueViolation, writeTransaction, type Db, type Tx } from '../../kernel/db';
import { AppError, badRequest, idTaken, notFound, type FieldProblem } from '../../kernel/errors';
import { fieldUnder, invalidField, invalidInput, unstorableTextProblems } from '../../kernel/validation';
import { uuidv7 } from '../../kernel/ids';
import { sqlKeysetSource } from '../../kernel/keyset';
import { paginate, type PageArguments } from '../../kernel/pagination';
import { requireScope } from '../../kernel/scopes';
import type { Principal } from '../../kernel/principal';
import {
  effectiveDisplayFields,
  effectiveFacetFields,
  effectiveRankingRules,
  effectiveSearchFields,
  effectiveSortableFields,
  fieldNames,
  filterableFields,
  documentIdOf,
  DOCUMENT_ID_RULE,
  fieldType,
  ID_KEY,
  mapDocument,
  mapStoredDocument,
  mergeDocument,
  parseRankingRule,
  resolveDefinition,
  typeIn,
  type IndexSettings,
} from './definition';
import type { ChangeDelivery } from './delivery/change-delivery';
import type { DocumentSelection } from './document-selection';
import type { FieldFilter, FieldType, IndexedDocument, SearchEngine } from './engine/engine';
import { passesFilters } from './engine/filter-match';
import { boostProblems } from './rule-boosts';
import type { MerchandisingRule } from './rules';
import { toEngineFilter } from './search-query';
import { matchingRecord, matchingSettingsOf } from './matching-settings';
import * as repository from './search.repository';
import {
  ALIAS_PATTERN,
  INDEX_SORTS,
  MAX_DOCUMENTS_PER_REQUEST,
  type IndexInputData,
  type RuleInputData,
  type IndexRecord,
} from './search.schemas';

/** Writes to one index wait for each other; a big batch may take a while. */
const WRITE_TIMEOUT_MS = 60_000;
/** Documents read at a time when a delete by filter looks through an index. */
const READ_CHUNK = 5_000;

export function toIndexRecord(row: repository.IndexRow): IndexRecord {
  const pending = row.processedVersion < row.version;
  return {
    id: row.id,
    name: row.name,
    alias: row.alias,
    state: row.isActive ? 'LIVE' : 'INACTIVE',
    source: { id: row.sourceId, type: row.sourceType },
    fields: row.fields.map((field) => ({ ...field, type: fieldType(row, field.to) })),
    search_fields: effectiveSearchFields(row),
    display_fields: effectiveDisplayFields(row),
    filters: row.filters.map((filter) => ({
      key: filter.key,
      type: fieldType(row, filter.key),
      is_processed: !pending,
    })),
    facet_fields: effectiveFacetFields(row),
    distinct_field: row.distinctField,
    synonyms: row.synonyms,
    stop_words: row.stopWords,
    ranking_rules: effectiveRankingRules(row),
    sortable_fields: effectiveSortableFields(row),
    ...matchingRecord(row),
    available_fields: fieldNames(row, row.seenFieldTypes).map((key) => ({ key, type: fieldType(row, key) })),
    is_active: row.isActive,
    has_pending_updates: pending,
    last_processed_at: row.lastProcessedAt?.toISOString() ?? null,
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
  };
}

/** An alias from a name: "Products (NL)" → "products-nl". */
export function aliasFromName(name: string): string {
  const slug = name
    .normalize('NFKD')
    .replace(/\p{M}/gu, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 56)
    .replace(/-+$/, '');
  return ALIAS_PATTERN.test(slug) ? slug : 'index';
}

/** Checks the definition against itself: names it refers to must be index fields (when fields are declared). */
function settingsOf(input: IndexInputData): { settings: IndexSettings; problems: FieldProblem[] } {
  const problems: FieldProblem[] = [];
  const settings: IndexSettings = {
    fields: (input.fields ?? []).map((field) => ({
      from: field.from,
      to: field.to ?? field.from,
      type: field.type ?? null,
      label: field.label ?? null,
    })),
    searchFields: input.search_fields ?? [],
    displayFields: input.display_fields ?? [],
    filters: (input.filters ?? []).map((filter) => ({ key: filter.key })),
    facetFields: input.facet_fields ?? [],
    distinctField: input.distinct_field ?? null,
    synonyms: (input.synonyms ?? []).map((synonym) =>
      synonym.root !== undefined ? { root: synonym.root, synonyms: synonym.synonyms } : { synonyms: synonym.synonyms },
    ),
    stopWords: input.stop_words ?? [],
    rankingRules: input.ranking_rules ?? [],
    sortableFields: input.sortable_fields ?? [],
    matching: matchingSettingsOf(input),
  };
  settings.fields.forEach((field, i) => {
    if (
      !/^[A-Za-z0-9_][A-Za-z0-9_-]{0,63}$/.test(field.to) ||
      [ID_KEY, 'metadata', 'objectID', 'click_url'].includes(field.to)
    ) {
      problems.push({
        field: `fields[${i}].to`,
        message:
          'must be a field name (letters, digits, hyphens, underscores; not a reserved name); set `to` when `from` ' +
          'is not one',
      });
    } else if (settings.fields.findIndex((other) => other.to === field.to) !== i) {
      problems.push({ field: `fields[${i}].to`, message: `${field.to} is mapped twice` });
    }
  });
  if (settings.fields.length > 0) {
    const known = new Set(settings.fields.map((field) => field.to));
    const check = (names: string[], where: (i: number) => string) =>
      names.forEach((name, i) => {
        if (!known.has(name)) problems.push({ field: where(i), message: `${name} is not one of the index's fields` });
      });
    check(settings.searchFields, (i) => `search_fields[${i}]`);
    check(settings.displayFields, (i) => `display_fields[${i}]`);
    check(
      settings.filters.map((f) => f.key),
      (i) => `filters[${i}].key`,
    );
    check(settings.facetFields, (i) => `facet_fields[${i}]`);
    check(settings.sortableFields, (i) => `sortable_fields[${i}]`);
    if (settings.searchFields.length === 0)
      check(settings.matching.exactFields ?? [], (i) => `matching.exact_fields[${i}]`);
    if (settings.distinctField) check([settings.distinctField], () => 'distinct_field');
    settings.rankingRules.forEach((rule, i) => {
      const parsed = parseRankingRule(rule);
      if (typeof parsed === 'object') check([parsed.field], () => `ranking_rules[${i}]`);
    });
  }
  if (settings.searchFields.length > 0) {
    const searched = new Set(settings.searchFields);
    (settings.matching.exactFields ?? []).forEach((name, i) => {
      if (!searched.has(name))
        problems.push({ field: `matching.exact_fields[${i}]`, message: `${name} is not one of the search_fields` });
    });
  }
  return { settings, problems };
}

const definitionOf = (input: IndexInputData) => {
  const { settings, problems } = settingsOf(input);
  if (problems.length > 0) throw invalidInput(problems);
  return {
    name: input.name,
    sourceId: input.source?.id ?? null,
    sourceType: input.source?.type ?? 'API',
    settings,
    isActive: input.is_active ?? true,
  };
};

export type IndexSortName = (typeof INDEX_SORTS)[number];

/** Search indexes of a tenant and their documents. */
export class IndexService {
  constructor(
    private readonly db: Db,
    private readonly cursors: CursorCodec,
    private readonly engine: SearchEngine,
    private readonly delivery: ChangeDelivery,
    private readonly onBackgroundError: (error: unknown) => void,
  ) {}

  /**
   * The ids of all the tenant's indexes, read in the caller's transaction (the tenant's deletion,
   * which must drop the engine's copies of them).
   */
  idsOfTenant(tx: Tx, tenantId: string): Promise<string[]> {
    return repository.indexIdsOfTenant(tx, tenantId);
  }

  /** Lists the tenant's indexes in the given order. */
  async list(principal: Principal, sortName: IndexSortName, page: PageArguments) {
    requireScope(principal, 'indexes:read');
    const { tenantId } = principal;
    const sort: repository.IndexSort = {
      key: sortName.replace(/^-/, '') as repository.IndexSortKey,
      descending: sortName.startsWith('-'),
    };
    const result = await paginate(
      this.cursors,
      `indexes:${tenantId}:${sortName}`,
      page,
      sqlKeysetSource(this.db, repository.indexList(tenantId, sort)),
    );
    return { ...result, items: result.items.map(toIndexRecord) };
  }

  /** Fetches one index by alias; another tenant's index is not found. */
  async get(principal: Principal, alias: string): Promise<IndexRecord> {
    requireScope(principal, 'indexes:read');
    return toIndexRecord(await this.find(principal.tenantId, alias));
  }

  /** Creates an index; the alias is generated from the name when not given. */
  async create(principal: Principal, input: IndexInputData): Promise<IndexRecord> {
    requireScope(principal, 'indexes:write');
    const data = definitionOf(input);
    const { tenantId } = principal;
    let row: repository.IndexRow | undefined;
    for (let attempt = 0; !row; attempt++) {
      const alias = input.alias ?? (await this.freeAlias(tenantId, aliasFromName(input.name)));
      try {
        row = await writeTransaction(this.db, async (tx) => {
          const inserted = await repository.insertIndex(tx, uuidv7(), tenantId, alias, data);
          await this.delivery.recordChange(tx, inserted.id);
          return inserted;
        });
      } catch (error) {
        if (!isUniqueViolation(error)) throw error;
        // A generated alias can be taken by a concurrent create: pick again.
        if (input.alias !== undefined || attempt >= 3) throw idTaken(`an index with alias "${alias}" already exists`);
      }
    }
    const created = row;
    await this.delivery.afterCommit(created.id, created.version, () =>
      this.engine.definitionChanged(resolveDefinition(created)),
    );
    return toIndexRecord((await repository.findIndexById(this.db, row.id)) ?? row);
  }

  /**
   * Replaces the whole definition (fields left out return to their defaults). The engine rebuilds
   * the index after the response; `has_pending_updates` is true until it has.
   */
  async replace(principal: Principal, alias: string, input: IndexInputData): Promise<void> {
    requireScope(principal, 'indexes:write');
    if (input.alias !== undefined && input.alias !== alias) {
      throw invalidField('alias', 'must equal the alias in the path');
    }
    const data = definitionOf(input);
    const row = await writeTransaction(
      this.db,
      async (tx) => {
        const index = await repository.lockIndex(tx, principal.tenantId, alias);
        if (!index) throw notFound(`no index with alias "${alias}"`);
        // A field whose mapping did not change keeps the type its stored values were checked against.
        const seen: Record<string, FieldType> = {};
        for (const name of new Set([...Object.keys(index.seenFieldTypes), ...index.fields.map((field) => field.to)])) {
          const before = index.fields.find((field) => field.to === name);
          const after = data.settings.fields.find((field) => field.to === name);
          const type = before?.type ?? typeIn(index.seenFieldTypes, name);
          if (before?.from === after?.from && type) seen[name] = type;
        }
        // Every copy is rebuilt from this version on, so no process needs the deletions recorded before it.
        await repository.forgetDeletions(tx, index.id);
        const replaced = await repository.replaceIndexDefinition(tx, index, data, seen);
        await this.delivery.recordChange(tx, index.id);
        return replaced;
      },
      { timeout: WRITE_TIMEOUT_MS, maxWait: WRITE_TIMEOUT_MS },
    );
    void this.delivery
      .afterCommit(row.id, row.version, () => this.engine.definitionChanged(resolveDefinition(row)))
      .catch(this.onBackgroundError);
  }

  /** Deletes an index with its documents, searches and clicks. */
  async remove(principal: Principal, alias: string): Promise<void> {
    requireScope(principal, 'indexes:write');
    const row = await repository.findIndex(this.db, principal.tenantId, alias);
    if (!row) throw notFound(`no index with alias "${alias}"`);
    // Recorded before the deletion, so that a process stopping right after it still leaves its copy
    // to drop, and again after it, in case a delivery under way meanwhile took the first record.
    await this.delivery.recordChange(this.db, row.id);
    if (!(await repository.deleteIndex(this.db, principal.tenantId, alias)))
      throw notFound(`no index with alias "${alias}"`);
    await this.delivery.recordChange(this.db, row.id);
    await this.delivery.afterCommit(row.id, row.version, () => this.engine.indexDeleted(row));
  }

  /** Upserts documents by id, all or none: one that does not fit the index's fields rejects the batch. */
  async upsertDocuments(principal: Principal, alias: string, documents: unknown[]): Promise<void> {
    requireScope(principal, 'indexes:write');
    await this.writeDocuments(principal.tenantId, alias, async () => documents);
  }

  /** Upserts the rows of a CSV document (first line: column names) into a CSV_INTEGRATION index. */
  async upsertCsv(principal: Principal, alias: string, csv: string): Promise<void> {
    requireScope(principal, 'indexes:write');
    const index = await this.find(principal.tenantId, alias);
    if (index.sourceType !== 'CSV_INTEGRATION') {
      throw new AppError(
        'UNSUPPORTED_MEDIA_TYPE',
        'text/csv is accepted for indexes whose source.type is CSV_INTEGRATION',
      );
    }
    let rows: Record<string, string>[];
    try {
      rows = parseCsv(csv, { columns: true, bom: true, skip_empty_lines: true, trim: true });
    } catch (error) {
      throw badRequest(`the CSV body is malformed: ${(error as Error).message}`, [
        { field: '', message: 'is not valid CSV' },
      ]);
    }
    if (rows.length === 0 || rows.length > MAX_DOCUMENTS_PER_REQUEST) {
      throw badRequest(`the CSV body must have 1 to ${MAX_DOCUMENTS_PER_REQUEST} rows`, [
        { field: '', message: `must have 1 to ${MAX_DOCUMENTS_PER_REQUEST} rows` },
      ]);
    }
    const unstorable = unstorableTextProblems(rows);
    if (unstorable.length > 0) throw invalidInput(unstorable);
    // Empty cells are missing values.
    const documents = rows.map((row) => Object.fromEntries(Object.entries(row).filter(([, value]) => value !== '')));
    await this.writeDocuments(principal.tenantId, alias, async () => documents);
  }

  /** Deletes every document of the index. */
  async clearDocuments(principal: Principal, alias: string): Promise<void> {
    requireScope(principal, 'indexes:write');
    const row = await writeTransaction(
      this.db,
      async (tx) => {
        const index = await repository.lockIndex(tx, principal.tenantId, alias);
        if (!index) throw notFound(`no index with alias "${alias}"`);
        const version = await repository.clearDocuments(tx, index);
        await this.delivery.recordChange(tx, index.id);
        return { ...index, version, rebuildVersion: version, seenFieldTypes: {} };
      },
      { timeout: WRITE_TIMEOUT_MS, maxWait: WRITE_TIMEOUT_MS },
    );
    await this.delivery.afterCommit(row.id, row.version, () => this.engine.documentsCleared(resolveDefinition(row)));
  }

  /** The merchandising rules of an index, in the order they are tried. */
  async getRules(principal: Principal, alias: string): Promise<MerchandisingRule[]> {
    requireScope(principal, 'indexes:read');
    return (await this.find(principal.tenantId, alias)).rules;
  }

  /**
   * Replaces the merchandising rules. Their filter conditions must name filterable fields of the
   * index; the change raises the index's version like any other, without rebuilding a copy.
   */
  async replaceRules(principal: Principal, alias: string, input: RuleInputData[]): Promise<MerchandisingRule[]> {
    requireScope(principal, 'indexes:write');
    const row = await writeTransaction(this.db, async (tx) => {
      const index = await repository.lockIndex(tx, principal.tenantId, alias);
      if (!index) throw notFound(`no index with alias "${alias}"`);
      const filterable = Object.assign(new Set(filterableFields(index)), { what: 'a filterable field' });
      const problems: FieldProblem[] = [];
      input.forEach((rule, i) =>
        (rule.filters ?? []).forEach((filter, j) => {
          const translated = toEngineFilter(index, filter, `[${i}].filters[${j}]`, filterable);
          if (translated.problem) problems.push(translated.problem);
        }),
      );
      input.forEach((rule, i) => problems.push(...boostProblems(index, rule, `[${i}]`)));
      if (problems.length > 0) throw invalidInput(problems);
      const replaced = await repository.replaceRules(
        tx,
        index,
        input.map((rule) => ({
          id: rule.id,
          query: rule.query ?? null,
          filters: rule.filters ?? [],
          pin: rule.pin ?? [],
          hide: rule.hide ?? [],
          // Stored only when given, so that rules without them read back as before.
          ...(rule.replace_query !== undefined ? { replace_query: rule.replace_query } : {}),
          ...(rule.data !== undefined ? { data: rule.data } : {}),
          ...(rule.active_from !== undefined ? { active_from: new Date(rule.active_from).toISOString() } : {}),
          ...(rule.active_to !== undefined ? { active_to: new Date(rule.active_to).toISOString() } : {}),
          ...(rule.boost !== undefined ? { boost: rule.boost } : {}),
          ...(rule.bury !== undefined ? { bury: rule.bury } : {}),
        })),
      );
      await this.delivery.recordChange(tx, index.id);
      return replaced;
    });
    // Rules apply at query time, so the engine's copy only needs to move to the new version, as after an empty write.
    await this.delivery.afterCommit(row.id, row.version, () =>
      this.engine.documentsWritten(resolveDefinition(row), []),
    );
    return row.rules;
  }

  /** One stored document as it was written. */
  async getDocument(principal: Principal, alias: string, id: string): Promise<Record<string, unknown>> {
    requireScope(principal, 'indexes:read');
    const index = await this.find(principal.tenantId, alias);
    const [stored] = await repository.findDocuments(this.db, index.id, [id]);
    if (!stored) throw notFound(`no document with id "${id}" in index "${alias}"`);
    return stored.data as Record<string, unknown>;
  }

  /** Deletes one document; an id the index does not hold is not found. */
  async deleteDocument(principal: Principal, alias: string, id: string): Promise<void> {
    requireScope(principal, 'indexes:write');
    if ((await this.deleteSelected(principal.tenantId, alias, { ids: [id], filters: [] })) === 0)
      throw notFound(`no document with id "${id}" in index "${alias}"`);
  }

  /**
   * Deletes the documents a selection names (by id, by filters on index fields, or both) in one
   * change; returns how many were deleted. Filters are checked before anything is deleted.
   */
  async deleteDocuments(principal: Principal, alias: string, selection: DocumentSelection): Promise<number> {
    requireScope(principal, 'indexes:write');
    return this.deleteSelected(principal.tenantId, alias, selection);
  }

  /**
   * Merges fields into stored documents by id (a field given as null is removed), all or none: an
   * id the index does not hold fails the whole request, and the merged documents must fit the index
   * as an upsert's would.
   */
  async patchDocuments(principal: Principal, alias: string, patches: Record<string, unknown>[]): Promise<void> {
    requireScope(principal, 'indexes:write');
    await this.writeDocuments(principal.tenantId, alias, async (tx, index) => {
      const problems: FieldProblem[] = [];
      const firstAt = new Map<string, number>();
      const ids = patches.map((patch, i) => {
        const id = documentIdOf(patch[ID_KEY]);
        if (id === undefined) problems.push({ field: `[${i}].${ID_KEY}`, message: DOCUMENT_ID_RULE });
        else if (firstAt.has(id))
          problems.push({
            field: `[${i}].${ID_KEY}`,
            message: `repeats the id of the document at [${firstAt.get(id)}]`,
          });
        else firstAt.set(id, i);
        return id!;
      });
      if (problems.length > 0) throw invalidInput(problems);
      const stored = new Map(
        (await repository.findDocuments(tx, index.id, ids)).map((document) => [document.id, document.data]),
      );
      const missing = ids.filter((id) => !stored.has(id));
      if (missing.length > 0) {
        throw notFound(
          `no document with id ${missing
            .slice(0, 5)
            .map((id) => `"${id}"`)
            .join(', ')}` +
            `${missing.length > 5 ? ` and ${missing.length - 5} more` : ''} in index "${alias}"; nothing was changed`,
        );
      }
      return patches.map((patch, i) => mergeDocument(stored.get(ids[i]!) as Record<string, unknown>, patch));
    });
  }

  private async deleteSelected(tenantId: string, alias: string, selection: DocumentSelection) {
    const { row, deleted } = await writeTransaction(
      this.db,
      async (tx) => {
        const index = await repository.lockIndex(tx, tenantId, alias);
        if (!index) throw notFound(`no index with alias "${alias}"`);
        const fields = Object.assign(new Set(fieldNames(index, index.seenFieldTypes)), { what: 'a field' });
        const problems: FieldProblem[] = [];
        const filters: FieldFilter[] = [];
        for (const filter of selection.filters) {
          const translated = toEngineFilter(index, filter, filter.parameter, fields);
          if (translated.problem) problems.push({ field: filter.parameter, message: translated.problem.message });
          else filters.push(translated.filter);
        }
        if (problems.length > 0) throw invalidInput(problems);
        const ids = filters.length === 0 ? selection.ids! : await this.idsPassing(tx, index, selection.ids, filters);
        const result = ids.length > 0 ? await repository.deleteDocuments(tx, index, ids) : { deleted: [], version: 0 };
        if (result.deleted.length > 0) await this.delivery.recordChange(tx, index.id);
        return { row: { ...index, version: result.version }, deleted: result.deleted };
      },
      { timeout: WRITE_TIMEOUT_MS, maxWait: WRITE_TIMEOUT_MS },
    );
    if (deleted.length > 0) {
      await this.delivery.afterCommit(row.id, row.version, () =>
        this.engine.documentsDeleted(resolveDefinition(row), deleted),
      );
    }
    return deleted.length;
  }

  /** Ids of the stored documents (among `ids`, when given) whose values pass every filter. */
  private async idsPassing(tx: Tx, index: repository.IndexRow, ids: string[] | undefined, filters: FieldFilter[]) {
    const passing: string[] = [];
    const check = (documents: repository.StoredDocument[]) => {
      for (const stored of documents) {
        const document = mapStoredDocument(stored.data, index, index.seenFieldTypes);
        if (document && passesFilters(document.values, filters)) passing.push(stored.id);
      }
    };
    if (ids) {
      check(await repository.findDocuments(tx, index.id, ids));
      return passing;
    }
    for (let afterId: string | undefined; ;) {
      const chunk = await repository.readDocuments(tx, index.id, { afterId, limit: READ_CHUNK });
      check(chunk);
      if (chunk.length < READ_CHUNK) return passing;
      afterId = chunk.at(-1)!.id;
    }
  }

  /**
   * Writes the source documents `documentsOf` gives (read under the index's lock) after mapping each
   * onto the index's fields, all or none.
   */
  private async writeDocuments(
    tenantId: string,
    alias: string,
    documentsOf: (tx: Tx, index: repository.IndexRow) => Promise<unknown[]>,
  ) {
    const { row, mapped } = await writeTransaction(
      this.db,
      async (tx) => {
        const index = await repository.lockIndex(tx, tenantId, alias);
        if (!index) throw notFound(`no index with alias "${alias}"`);
        const documents = await documentsOf(tx, index);
        const seen = { ...index.seenFieldTypes };
        const problems: FieldProblem[] = [];
        const mapped: IndexedDocument[] = [];
        const firstAt = new Map<string, number>();
        documents.forEach((document, i) => {
          const result = mapDocument(document, index, seen);
          if (result.problems) {
            for (const problem of result.problems)
              problems.push({ field: fieldUnder(`[${i}]`, problem.field), message: problem.message });
            return;
          }
          const earlier = firstAt.get(result.document.id);
          if (earlier !== undefined)
            problems.push({ field: `[${i}].id`, message: `repeats the id of the document at [${earlier}]` });
          firstAt.set(result.document.id, i);
          mapped.push(result.document);
        });
        if (problems.length > 0) throw invalidInput(problems);
        const version = await repository.writeDocuments(
          tx,
          index,
          mapped.map((document, i) => ({ id: document.id, data: documents[i] })),
          seen,
        );
        await this.delivery.recordChange(tx, index.id);
        return { row: { ...index, version, seenFieldTypes: seen }, mapped };
      },
      { timeout: WRITE_TIMEOUT_MS, maxWait: WRITE_TIMEOUT_MS },
    );
    await this.delivery.afterCommit(row.id, row.version, () =>
      this.engine.documentsWritten(resolveDefinition(row), mapped),
    );
  }

  private async find(tenantId: string, alias: string) {
    const row = await repository.findIndex(this.db, tenantId, alias);
    if (!row) throw notFound(`no index with alias "${alias}"`);
    return row;
  }

  private async freeAlias(tenantId: string, base: string) {
    const taken = new Set(await repository.aliasesLike(this.db, tenantId, base));
    if (!taken.has(base)) return base;
    for (let n = 2; ; n++) if (!taken.has(`${base}-${n}`)) return `${base}-${n}`;
  }
}
