/**
 * Pure translation between this service's index definitions, documents and queries and Typesense's
 * collections, documents, search parameters and responses. See the README ("Search", Typesense)
 * for what maps to what and where the engines differ.
 */
import { createHash } from 'node:crypto';
import type { CollectionCreateSchema } from 'typesense/lib/Typesense/Collections';
import type { CollectionFieldSchema } from 'typesense/lib/Typesense/Collection';
import type {
  EngineFilter,
  EngineQuery,
  EngineResult,
  FacetStats,
  FieldType,
  FieldValue,
  HighlightResult,
  IndexDefinition,
  IndexedDocument,
  Scalar,
  SortKey,
} from './engine';
import { MAX_FACET_VALUES, MAX_PREFIX_EXPANSIONS } from './memory-index';
import { filtersWithout } from './filter-match';
import { DEFAULT_MATCHING } from './matching';
import { replacePhrases, stopPhrases } from './phrases';
import { escapeHtml, tokenize } from './text';
import type { TypesenseProtocol } from './typesense-version';

/** Where metadata travels in a Typesense document: a string field that is stored, not indexed. */
export const METADATA_FIELD = '__metadata';
/** The document's values as sent, returned with hits (indexed copies may be reshaped, see `schemaFields`). */
export const VALUES_FIELD = '__values';
/**
 * The filterable fields a document has a value for, and `*` so that no document lacks the field:
 * Typesense cannot filter on whether a field exists.
 */
export const PRESENT_FIELDS_FIELD = '__has';
const ALWAYS_PRESENT = '*';
/** A sortable copy of the id: Typesense cannot sort by `id`, and ties are broken by id. */
export const SORT_ID_FIELD = '__id';
/**
 * A single-valued copy of a sortable field that query sorts use: the field itself stays an array, so
 * filters still match every value; a document sorts by its first value, as in the embedded engine.
 */
export const sortCopyField = (field: string) => `__sort_${field}`;
/** Facet counts of a NUMBER field come from the original text, not from Typesense's 32-bit float. */
export const numberFacetField = (field: string) => `__text_${field}`;
/** Typesense looks for typo variants while it has fewer results than this. */
export const TYPO_TOKENS_THRESHOLD = 100;
/** Typesense sorts by at most three fields. */
export const MAX_TYPESENSE_SORT_FIELDS = 3;
/** With a distinct field, groups are counted exactly up to this many (v30; v29 estimates). */
export const GROUP_MAX_CANDIDATES = 10_000;

/** The alias that always points at the current collection of an index. */
export const aliasName = (definition: Pick<IndexDefinition, 'id'>) => `idx_${definition.id.replaceAll('-', '')}`;

const TYPESENSE_TYPES: Record<FieldType, string> = { STRING: 'string', NUMBER: 'float', BOOLEAN: 'bool' };
/** Booleans sort as 0 and 1: false first ascending, as the embedded engine orders them. */
const SORT_COPY_TYPES: Record<FieldType, string> = { STRING: 'string', NUMBER: 'float', BOOLEAN: 'int32' };

const sortFieldsOf = (definition: IndexDefinition) =>
  new Set(definition.rankingRules.flatMap((rule) => (typeof rule === 'object' ? [rule.field] : [])));

/** Fields Typesense must hold one value in (it sorts and groups single values): the first value is sent. */
const singleValued = (definition: IndexDefinition, field: string) =>
  sortFieldsOf(definition).has(field) || field === definition.distinctField;

const matchingOf = (definition: IndexDefinition) => definition.matching ?? DEFAULT_MATCHING;

/** STRING until a document shows a field's type: a later type changes the schema and rebuilds the collection. */
const typeOf = (field: IndexDefinition['fields'][number]): FieldType => field.type ?? 'STRING';

/**
 * The index fields, then every field a setting names that no document has shown yet: Typesense
 * refuses a search naming a field its schema lacks.
 */
function declaredFields(definition: IndexDefinition): IndexDefinition['fields'] {
  const known = new Set(definition.fields.map((field) => field.name));
  const named = new Set([
    ...definition.searchFields,
    ...definition.filterFields,
    ...definition.facetFields,
    ...sortFieldsOf(definition),
    ...definition.sortableFields,
    ...(definition.distinctField ? [definition.distinctField] : []),
  ]);
  return [...definition.fields, ...[...named].filter((name) => !known.has(name)).map((name) => ({ name, type: null }))];
}

/** Fields the query matches: Typesense searches string fields only. */
const queryFields = (definition: IndexDefinition) =>
  definition.searchFields.filter(
    (name) => typeOf(definition.fields.find((field) => field.name === name) ?? { name, type: null }) === 'STRING',
  );

/**
 * Every index field with its type and the flags it needs: `facet` for facet and distinct fields,
 * `sort` for the fields of sort rules, `index: false` for fields only displayed. Fields hold arrays
 * (a value may be one value or several), except single-valued sort and distinct fields.
 */
export function schemaFields(definition: IndexDefinition): CollectionFieldSchema[] {
  const sortFields = sortFieldsOf(definition);
  const indexed = new Set([
    ...definition.searchFields,
    ...definition.filterFields,
    ...definition.facetFields,
    ...sortFields,
    ...(definition.distinctField ? [definition.distinctField] : []),
  ]);
  const fields: CollectionFieldSchema[] = [];
  const { language, exactFields } = matchingOf(definition);
  // Stems are matched in the search fields that are not matched word for word.
  const stemmed = new Set(language ? queryFields(definition).filter((name) => !exactFields.includes(name)) : []);
  for (const field of declaredFields(definition)) {
    const type = typeOf(field);
    const facet = definition.facetFields.includes(field.name) || field.name === definition.distinctField;
    fields.push({
      name: field.name,
      type: `${TYPESENSE_TYPES[type]}${singleValued(definition, field.name) ? '' : '[]'}`,
      optional: true,
      ...(facet ? { facet: true } : {}),
      ...(sortFields.has(field.name) ? { sort: true } : {}),
      ...(indexed.has(field.name) ? {} : { index: false }),
      ...(stemmed.has(field.name) ? { stem: true, locale: language } : {}),
    } as CollectionFieldSchema);
    if (type === 'NUMBER' && definition.facetFields.includes(field.name)) {
      fields.push({ name: numberFacetField(field.name), type: 'string[]', optional: true, facet: true });
    }
    if (definition.sortableFields.includes(field.name)) {
      fields.push({
        name: sortCopyField(field.name),
        type: SORT_COPY_TYPES[type] as CollectionFieldSchema['type'],
        optional: true,
        sort: true,
      });
    }
  }
  return [
    ...fields,
    { name: PRESENT_FIELDS_FIELD, type: 'string[]', optional: true },
    { name: SORT_ID_FIELD, type: 'string', sort: true },
    { name: VALUES_FIELD, type: 'string', optional: true, index: false },
    { name: METADATA_FIELD, type: 'string', optional: true, index: false },
  ];
}

/** The collection's own tokenizer settings, when the index has any. */
function tokenizerSettings(definition: IndexDefinition) {
  const { tokenSeparators, symbolsToIndex } = matchingOf(definition);
  return {
    ...(tokenSeparators.length > 0 ? { token_separators: tokenSeparators } : {}),
    ...(symbolsToIndex.length > 0 ? { symbols_to_index: symbolsToIndex } : {}),
  };
}

/** Eight hex digits that change whenever the fields of the schema or its tokenizer settings do. */
export const schemaFingerprint = (definition: IndexDefinition) => {
  const tokenizer = tokenizerSettings(definition);
  const fields = JSON.stringify(schemaFields(definition));
  return createHash('sha256')
    .update(Object.keys(tokenizer).length > 0 ? fields + JSON.stringify(tokenizer) : fields)
    .digest('hex')
    .slice(0, 8);
};

/**
 * A collection per rebuild, named by the index version and the schema's fingerprint, so a rebuild
 * fills a new collection while searches use the old one, and a change of field types is noticed.
 */
export const collectionName = (definition: IndexDefinition) =>
  `${aliasName(definition)}_v${definition.version}_${schemaFingerprint(definition)}`;

/** Whether a collection was built with the schema this definition needs. */
export const collectionFits = (collection: string, definition: IndexDefinition) =>
  collection.startsWith(`${aliasName(definition)}_v`) && collection.endsWith(`_${schemaFingerprint(definition)}`);

/** The synonym set (v30) and the stopwords set of one collection, created before it and deleted with it. */
export const synonymSetName = (collection: string) => `${collection}_synonyms`;
export const stopwordSetName = (collection: string) => `${collection}_stopwords`;
/** Earlier releases named collections `<alias>_v<version>` (no fingerprint) and kept one stopwords set per index. */
const EARLIER_RELEASE_COLLECTION = /^(idx_[0-9a-f]{32})_v\d+$/;
export const builtByEarlierRelease = (collection: string) => EARLIER_RELEASE_COLLECTION.test(collection);
export const legacyStopwordSetName = (collection: string) => {
  const alias = EARLIER_RELEASE_COLLECTION.exec(collection)?.[1];
  return alias === undefined ? null : `${alias}_stopwords`;
};
/** The set Typesense v30 makes of a collection's synonyms when it upgrades a server that had them. */
export const migratedSynonymSetName = (collection: string) => `${collection}_synonyms_index`;

export function collectionSchema(
  definition: IndexDefinition,
  name: string,
  protocol: TypesenseProtocol,
): CollectionCreateSchema {
  const withSynonymSet = protocol.synonyms === 'synonym-sets' && definition.synonyms.length > 0;
  return {
    name,
    fields: schemaFields(definition),
    ...tokenizerSettings(definition),
    ...(withSynonymSet ? { synonym_sets: [synonymSetName(name)] } : {}),
  } as CollectionCreateSchema;
}

/** Synonyms as Typesense synonym items (one-way when `root` is set), for a set or a collection. */
export const toTypesenseSynonyms = (definition: IndexDefinition) =>
  definition.synonyms.map((synonym, i) => ({
    id: `synonym-${i}`,
    synonyms: synonym.synonyms,
    ...(synonym.root !== undefined ? { root: synonym.root } : {}),
  }));

const valuesOf = (value: FieldValue): Scalar[] =>
  value === null || value === undefined ? [] : Array.isArray(value) ? value : [value];

/** Documents as Typesense documents of the definition's collection (the schema is worked out once). */
export function toTypesenseDocuments(
  definition: IndexDefinition,
  documents: IndexedDocument[],
): Record<string, unknown>[] {
  const indexedFields = schemaFields(definition).filter((field) => field.index !== false);
  const facetFields = new Set(definition.facetFields);
  return documents.map((document) => {
    const indexed: Record<string, unknown> = {};
    for (const field of indexedFields) {
      const values = valuesOf(document.values[field.name] ?? null);
      if (values.length === 0) continue;
      indexed[field.name] = field.type.endsWith('[]') ? values : values[0];
      if (facetFields.has(field.name) && typeof values[0] === 'number') {
        indexed[numberFacetField(field.name)] = values.map(String);
      }
    }
    for (const field of definition.sortableFields) {
      const first = valuesOf(document.values[field] ?? null)[0];
      if (first !== undefined) indexed[sortCopyField(field)] = typeof first === 'boolean' ? Number(first) : first;
    }
    const present = definition.filterFields.filter((field) => valuesOf(document.values[field] ?? null).length > 0);
    return {
      id: document.id,
      [SORT_ID_FIELD]: document.id,
      ...indexed,
      [PRESENT_FIELDS_FIELD]: [ALWAYS_PRESENT, ...present],
      [VALUES_FIELD]: JSON.stringify(document.values),
      ...(document.metadata !== null && document.metadata !== undefined
        ? { [METADATA_FIELD]: JSON.stringify(document.metadata) }
        : {}),
    };
  });
}

const quote = (value: Scalar) => (typeof value === 'string' ? `\`${value.replaceAll('`', '')}\`` : String(value));

const RANGE_SYMBOLS = { gte: '>=', gt: '>', lt: '<', lte: '<=' } as const;

function toFilterExpression(filter: EngineFilter): string {
  if ('any' in filter) return `(${filter.any.map(toFilterExpression).join(' || ')})`;
  if ('all' in filter) return `(${filter.all.map(toFilterExpression).join(' && ')})`;
  const { field, operator, values } = filter;
  const has = `${PRESENT_FIELDS_FIELD}:=[${quote(field)}]`;
  switch (operator) {
    case 'in':
      return `${field}:=[${values.map(quote).join(',')}]`;
    // A document without the field passes; that `!=` lets it through is not something to rely on.
    case 'not_in':
      return `(${field}:!=[${values.map(quote).join(',')}] || ${PRESENT_FIELDS_FIELD}:!=[${quote(field)}])`;
    case 'exists':
      return has;
    case 'not_exists':
      return `${PRESENT_FIELDS_FIELD}:!=[${quote(field)}]`;
    default:
      return `${field}:${RANGE_SYMBOLS[operator]}${values[0]}`;
  }
}

export function toFilterBy(filters: EngineFilter[]): string | undefined {
  if (filters.length === 0) return undefined;
  return filters.map(toFilterExpression).join(' && ');
}

/** Longest `filter_by` of one delete request: it travels in the query string. */
export const MAX_DELETE_FILTER_LENGTH = 3_000;

/**
 * Deletes of documents by id: `filter_by` values of `id:[...]` lists, each short enough for a query
 * string, and the ids to delete one by one because a backtick cannot be quoted in a filter.
 */
export function deletionsOf(ids: string[]): { filters: string[]; oneByOne: string[] } {
  const filters: string[] = [];
  const oneByOne: string[] = [];
  let batch: string[] = [];
  let length = 0;
  const flush = () => {
    if (batch.length > 0) filters.push(`id:[${batch.join(',')}]`);
    batch = [];
    length = 0;
  };
  for (const id of ids) {
    if (id.includes('`')) {
      oneByOne.push(id);
      continue;
    }
    const quoted = `\`${id}\``;
    if (length + quoted.length + 1 > MAX_DELETE_FILTER_LENGTH) flush();
    batch.push(quoted);
    length += quoted.length + 1;
  }
  flush();
  return { filters, oneByOne };
}

/**
 * A rule's boost and bury as one `_eval` sort part: Typesense scores a document by the first listed
 * expression it matches (0 for none), so the buried come first at -1 (bury wins), the boosted at 1.
 */
export function toEvalSort(query: Pick<EngineQuery, 'boost' | 'bury'>): string | undefined {
  const entries: string[] = [];
  if (query.bury?.length) entries.push(`(${query.bury.map((filter) => toFilterBy([filter])).join(' || ')}):-1`);
  if (query.boost?.length) entries.push(`(${query.boost.map((filter) => toFilterBy([filter])).join(' || ')}):1`);
  return entries.length > 0 ? `_eval([${entries.join(',')}]):desc` : undefined;
}

/**
 * The sort: the query's sort keys (on the fields' sort copies), then `_text_match` for the built-in
 * rules (Typesense ranks text relevance its own way), placed where the first built-in rule is;
 * custom rules around it, documents without the field last; then a rule's boost and bury (`_eval`);
 * then the id for ties, as far as Typesense's three sort fields reach: what comes later gives way.
 * A wildcard search (`q=*`) that boosts leaves `_text_match` out: every document scores the same.
 */
export function toSortBy(
  definition: IndexDefinition,
  sort: SortKey[] = [],
  promoted: Pick<EngineQuery, 'boost' | 'bury'> & { wildcard?: boolean } = {},
): string | undefined {
  const evalSort = toEvalSort(promoted);
  // The query's sort comes first: relevance only orders documents with equal values.
  const parts = sort.map((key) => `${sortCopyField(key.field)}(missing_values: last):${key.direction}`);
  let textMatchPlaced = false;
  for (const rule of definition.rankingRules) {
    if (typeof rule === 'object') parts.push(`${rule.field}(missing_values: last):${rule.direction}`);
    else if (!textMatchPlaced) {
      if (!(evalSort && promoted.wildcard)) parts.push('_text_match:desc');
      textMatchPlaced = true;
    }
  }
  if (evalSort) parts.push(evalSort);
  parts.push(`${SORT_ID_FIELD}:asc`);
  return parts.slice(0, MAX_TYPESENSE_SORT_FIELDS).join(',');
}

/** Stop words of one word: the stopwords set holds these; stop phrases are cut out of the query here. */
export const singleStopWords = (definition: IndexDefinition) =>
  definition.stopWords.filter((stop) => tokenize(stop).length === 1);

/** Whether stop words are left out: a query of stop words only is searched as typed. */
export function leavesOutStopWords(definition: IndexDefinition, q: string) {
  const single = singleStopWords(definition);
  if (single.length === 0) return false;
  const stopWords = new Set(single.flatMap(tokenize));
  return tokenize(q).some((word) => !stopWords.has(word));
}

/**
 * The query without its stop phrases (stop words of several words, in a row), which a stopwords set
 * cannot express; as typed when it has none, or holds nothing else.
 */
export function withoutStopPhrases(definition: IndexDefinition, q: string): string {
  const phrases = definition.stopWords.filter((stop) => tokenize(stop).length > 1);
  if (phrases.length === 0) return q;
  const words = tokenize(q);
  const kept = replacePhrases(words, stopPhrases(phrases));
  if (kept.length === words.length || kept.length === 0) return q;
  return kept.join(' ') + (/[\s\p{P}]$/u.test(q) ? ' ' : '');
}

/** One search of a `multi_search` request (sent as POST, so long filters fit). */
export function toSearch(
  definition: IndexDefinition,
  collection: string,
  query: EngineQuery,
  protocol: TypesenseProtocol,
): Record<string, unknown> {
  const fields = queryFields(definition);
  const searchable = fields.length > 0 && query.q.trim() !== '';
  const rules = new Set(definition.rankingRules.filter((rule) => typeof rule === 'string'));
  const search: Record<string, unknown> = {
    collection,
    q: searchable ? withoutStopPhrases(definition, query.q) : '*',
  };
  if (fields.length > 0) {
    search.query_by = fields.join(',');
    // The `attribute` rule: earlier search fields weigh more; without it every field weighs the same.
    search.query_by_weights = fields.map((_, i) => (rules.has('attribute') ? Math.max(1, 15 - i) : 1)).join(',');
  }
  const matching = matchingOf(definition);
  // The last word is a prefix unless the query ends with a space or punctuation (as the embedded engine does).
  const prefix = !/[\s\p{P}]$/u.test(query.q);
  const exact = fields.map((name) => matching.exactFields.includes(name));
  const perField = exact.includes(true);
  Object.assign(search, {
    // Exact fields: no typos and no completion, field by field in the order of `query_by`.
    prefix: perField ? exact.map((isExact) => prefix && !isExact).join(',') : prefix,
    max_candidates: MAX_PREFIX_EXPANSIONS,
    num_typos: perField ? exact.map((isExact) => (isExact ? 0 : 2)).join(',') : 2,
    min_len_1typo: matching.minWordLengthOneTypo,
    min_len_2typo: matching.minWordLengthTwoTypos,
    enable_typos_for_numerical_tokens: matching.typosOnDigitWords,
    typo_tokens_threshold: TYPO_TOKENS_THRESHOLD,
    drop_tokens_threshold: query.threshold,
    prioritize_exact_match: rules.has('exactness'),
    prioritize_token_position: false,
    offset: query.offset,
    limit: query.limit,
  });
  if (fields.length > 0) {
    Object.assign(search, {
      highlight_full_fields: fields.join(','),
      highlight_start_tag: '<mark>',
      highlight_end_tag: '</mark>',
      enable_highlight_v1: false,
    });
  }
  const filterBy = toFilterBy(query.filters);
  if (filterBy) search.filter_by = filterBy;
  if (query.facets.length > 0) {
    const numberFacets = query.facets.filter((facet) => isNumberFacet(definition, facet)).map(numberFacetField);
    search.facet_by = [...query.facets, ...numberFacets].join(',');
    search.max_facet_values = MAX_FACET_VALUES;
  }
  search.sort_by = toSortBy(definition, query.sort, { boost: query.boost, bury: query.bury, wildcard: !searchable });
  if (query.pin && query.pin.length > 0) {
    search.pinned_hits = query.pin.map((pin) => `${pin.id}:${pin.position}`).join(',');
  }
  if (query.hide && query.hide.length > 0) search.hidden_hits = query.hide.join(',');
  // Pinned documents must pass the filters too, as in the embedded engine.
  if (search.pinned_hits !== undefined || search.hidden_hits !== undefined) search.filter_curated_hits = true;
  if (definition.distinctField) {
    Object.assign(search, {
      group_by: definition.distinctField,
      group_limit: 1,
      // Documents without the field are each their own group, as in the embedded engine.
      group_missing_values: false,
      ...(protocol.exactGroupCount ? { group_max_candidates: GROUP_MAX_CANDIDATES } : {}),
    });
  }
  if (leavesOutStopWords(definition, query.q)) search.stopwords = stopwordSetName(collection);
  return search;
}

/**
 * The searches of one query in a `multi_search`: the query itself, then, with disjunctive facets,
 * one hit-less search per facet whose own filters are left out, counting that facet alone.
 */
export function toSearches(
  definition: IndexDefinition,
  collection: string,
  query: EngineQuery,
  protocol: TypesenseProtocol,
): { searches: Record<string, unknown>[]; facetSearchFields: string[] } {
  const main = toSearch(definition, collection, query, protocol);
  const facetSearchFields = query.disjunctiveFacets
    ? query.facets.filter((field) => filtersWithout(query.filters, field).length < query.filters.length)
    : [];
  const facetSearches = facetSearchFields.map((field) => {
    const own = toSearch(
      definition,
      collection,
      { ...query, filters: filtersWithout(query.filters, field), facets: [field], limit: 0, offset: 0 },
      protocol,
    );
    if (own.filter_by === undefined) delete own.filter_by;
    return own;
  });
  const searches = [main, ...facetSearches, ...rangeSearches(definition, collection, query, protocol)];
  if (query.facetQuery) {
    const { field, q } = query.facetQuery;
    const others = query.disjunctiveFacets ? filtersWithout(query.filters, field) : query.filters;
    const valueSearch = toSearch(
      definition,
      collection,
      { ...query, filters: others, facets: [field], limit: 0, offset: 0 },
      protocol,
    );
    if (valueSearch.filter_by === undefined) delete valueSearch.filter_by;
    // A NUMBER facet's values are counted from its text copy, so that is the field searched.
    const searched = isNumberFacet(definition, field) ? numberFacetField(field) : field;
    searches.push({ ...valueSearch, facet_query: `${searched}:${q}` });
  }
  return { searches, facetSearchFields };
}

/**
 * Typesense's range facet bounds: `[from, to]` holds from ≤ value < to, and ranges must be
 * contiguous (as the schema of `facet_ranges` asks); an open end is the widest safe integer.
 */
const rangeBound = (value: number | null, open: number) => String(value ?? open);

/**
 * One hit-less search per field with ranges, `facet_by: field(r0:[from, to], ...)`: Typesense takes
 * letters and digits only in a range's label, so ranges go by their place and are named back.
 */
function rangeSearches(
  definition: IndexDefinition,
  collection: string,
  query: EngineQuery,
  protocol: TypesenseProtocol,
): Record<string, unknown>[] {
  return Object.entries(query.facetRanges ?? {}).map(([field, ranges]) => {
    const filters = query.disjunctiveFacets ? filtersWithout(query.filters, field) : query.filters;
    const search = toSearch(definition, collection, { ...query, filters, facets: [], limit: 0, offset: 0 }, protocol);
    if (search.filter_by === undefined) delete search.filter_by;
    const bounds = ranges.map(
      (range, i) =>
        `r${i}:[${rangeBound(range.from, -Number.MAX_SAFE_INTEGER)}, ${rangeBound(range.to, Number.MAX_SAFE_INTEGER)}]`,
    );
    return { ...search, facet_by: `${field}(${bounds.join(', ')})`, max_facet_values: ranges.length };
  });
}

const isNumberFacet = (definition: IndexDefinition, field: string) =>
  definition.facetFields.includes(field) &&
  definition.fields.find((candidate) => candidate.name === field)?.type === 'NUMBER';

/** An element's highlight (current format: one per array element, or one for a single value). */
interface TypesenseHighlight {
  snippet?: string;
  value?: string;
  matched_tokens?: string[];
}

interface TypesenseHit {
  document: Record<string, unknown>;
  highlight?: Record<string, TypesenseHighlight | TypesenseHighlight[]>;
}

export interface TypesenseSearchResult {
  found: number;
  hits?: TypesenseHit[];
  grouped_hits?: { group_key: unknown[]; hits: TypesenseHit[]; found?: number }[];
  facet_counts?: {
    field_name: string;
    counts: { value: string; count: number }[];
    stats?: Partial<FacetStats> & { total_values?: number };
  }[];
}

/** One entry of a `multi_search` response: a result, or the error of that search alone. */
export type TypesenseMultiSearchEntry = TypesenseSearchResult | { code: number; error: string };

/** A search that Typesense refused inside a `multi_search` (which itself answers 200). */
export class TypesenseSearchFailed extends Error {
  constructor(
    readonly httpStatus: number,
    message: string,
  ) {
    super(`Typesense refused the search (${httpStatus}): ${message}`);
    this.name = 'TypesenseSearchFailed';
  }
}

export function searchResultOf(entry: TypesenseMultiSearchEntry | undefined): TypesenseSearchResult {
  if (entry === undefined) throw new TypesenseSearchFailed(500, 'no result in the multi_search response');
  if ('error' in entry) throw new TypesenseSearchFailed(entry.code, entry.error);
  return entry;
}

/** Typesense marks matches in the raw text; escape around the marks so the result matches the embedded engine's. */
const escapeMarked = (marked: string) =>
  marked
    .split(/(<mark>|<\/mark>)/)
    .map((part) => (part === '<mark>' || part === '</mark>' ? part : escapeHtml(part)))
    .join('');

function toHighlight(text: string, highlight: TypesenseHighlight | undefined, words: number): HighlightResult {
  const matched = [...new Set((highlight?.matched_tokens ?? []).map((token) => token.toLowerCase()))];
  const marked = matched.length > 0 ? (highlight?.value ?? highlight?.snippet) : undefined;
  return {
    value: marked !== undefined ? escapeMarked(marked) : escapeHtml(text),
    matchLevel: matched.length === 0 ? 'none' : matched.length >= words ? 'full' : 'partial',
    matchedWords: matched,
  };
}

function toFacets(definition: IndexDefinition, result: TypesenseSearchResult) {
  const facets: EngineResult['facets'] = {};
  const facetsStats: EngineResult['facetsStats'] = {};
  const counts = new Map((result.facet_counts ?? []).map((facet) => [facet.field_name, facet]));
  for (const facet of result.facet_counts ?? []) {
    if (facet.field_name.startsWith('__')) continue;
    const number = isNumberFacet(definition, facet.field_name);
    const source = number ? counts.get(numberFacetField(facet.field_name)) : facet;
    facets[facet.field_name] = Object.fromEntries((source?.counts ?? []).map((count) => [count.value, count.count]));
    const stats = facet.stats;
    if (number && stats?.min !== undefined && stats.max !== undefined && stats.sum !== undefined) {
      if (stats.avg !== undefined) {
        facetsStats[facet.field_name] = { min: stats.min, max: stats.max, avg: stats.avg, sum: stats.sum };
      }
    }
  }
  return { facets, facetsStats };
}

/** The result of `toSearches`: the query's, with each disjunctive facet from its own search. */
export function fromSearchResults(
  definition: IndexDefinition,
  query: EngineQuery,
  facetSearchFields: string[],
  results: TypesenseSearchResult[],
): EngineResult {
  const result = fromSearchResult(definition, query, results[0]!);
  facetSearchFields.forEach((field, i) => {
    const own = toFacets(definition, results[i + 1]!);
    result.facets[field] = own.facets[field] ?? {};
    if (own.facetsStats[field]) result.facetsStats[field] = own.facetsStats[field];
    else delete result.facetsStats[field];
  });
  const rangeFields = Object.entries(query.facetRanges ?? {});
  if (rangeFields.length > 0) {
    result.facetRanges = Object.fromEntries(
      rangeFields.map(([field, ranges], i) => {
        const facet = results[facetSearchFields.length + 1 + i]?.facet_counts?.find((f) => f.field_name === field);
        const counts = new Map((facet?.counts ?? []).map((count) => [count.value, count.count]));
        return [field, ranges.map((range, r) => ({ ...range, count: counts.get(`r${r}`) ?? 0 }))];
      }),
    );
  }
  if (query.facetQuery) {
    const at = facetSearchFields.length + 1 + rangeFields.length;
    const counts = toFacets(definition, results[at]!).facets[query.facetQuery.field] ?? {};
    result.facetHits = Object.entries(counts)
      .map(([value, count]) => ({ value, count }))
      .sort((a, b) => b.count - a.count || (a.value < b.value ? -1 : a.value > b.value ? 1 : 0));
  }
  return result;
}

export function fromSearchResult(
  definition: IndexDefinition,
  query: EngineQuery,
  result: TypesenseSearchResult,
): EngineResult {
  const words = tokenize(query.q).length;
  const hits = result.grouped_hits
    ? result.grouped_hits.map((group) => group.hits[0]!).filter(Boolean)
    : (result.hits ?? []);
  return {
    count: result.found,
    ...toFacets(definition, result),
    hits: hits.map((hit) => {
      const sent = JSON.parse(String(hit.document[VALUES_FIELD] ?? '{}')) as Record<string, FieldValue>;
      const values: Record<string, FieldValue> = {};
      for (const field of definition.fields) values[field.name] = sent[field.name] ?? null;
      const rawMetadata = hit.document[METADATA_FIELD];
      const document: IndexedDocument = {
        id: String(hit.document.id),
        values,
        metadata: typeof rawMetadata === 'string' ? JSON.parse(rawMetadata) : null,
      };
      const highlight: Record<string, HighlightResult | HighlightResult[]> = {};
      for (const field of definition.searchFields) {
        const value = values[field];
        if (value === null || value === undefined) continue;
        const found = hit.highlight?.[field];
        const elements = Array.isArray(found) ? found : [found];
        highlight[field] = Array.isArray(value)
          ? value.map((item, i) => toHighlight(String(item), elements[i], words))
          : toHighlight(String(value), elements[0], words);
      }
      return { document, highlight };
    }),
  };
}
