/**
 * Pure translation between this service's index definitions, documents and queries and Typesense's
 * collections, documents, search parameters and responses. See the README ("Search", Typesense)
 * for what maps to what and where the engines differ.
 */
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
} from './engine';
import { MAX_FACET_VALUES, MAX_PREFIX_EXPANSIONS } from './memory-index';

/** Where metadata travels in a Typesense document: a string field that is stored, not indexed. */
export const METADATA_FIELD = '__metadata';
/** Typesense looks for typo variants while it has fewer results than this. */
export const TYPO_TOKENS_THRESHOLD = 100;
/** Typesense sorts by at most three fields. */
export const MAX_TYPESENSE_SORT_FIELDS = 3;

/** The alias that always points at the current collection of an index. */
export const aliasName = (definition: Pick<IndexDefinition, 'id'>) => `idx_${definition.id.replaceAll('-', '')}`;
/** A collection per rebuild, so a rebuild fills a new collection while searches use the old one. */
export const collectionName = (definition: Pick<IndexDefinition, 'id' | 'version'>) =>
  `${aliasName(definition)}_v${definition.version}`;
export const stopwordSetName = (definition: Pick<IndexDefinition, 'id'>) => `${aliasName(definition)}_stopwords`;

const TYPESENSE_TYPES: Record<FieldType, CollectionFieldSchema['type']> = {
  STRING: 'string*',
  NUMBER: 'float',
  BOOLEAN: 'bool',
};

export function collectionSchema(definition: IndexDefinition): CollectionCreateSchema {
  const sortFields = new Set(definition.rankingRules.flatMap((rule) => (typeof rule === 'object' ? [rule.field] : [])));
  const fields: CollectionFieldSchema[] = definition.fields
    .filter((field) => field.type !== null)
    .map((field) => ({
      name: field.name,
      type: TYPESENSE_TYPES[field.type!],
      optional: true,
      // Typesense filters and groups (distinct) on facet fields only.
      facet:
        definition.facetFields.includes(field.name) ||
        definition.filterFields.includes(field.name) ||
        field.name === definition.distinctField,
      ...(sortFields.has(field.name) ? { sort: true } : {}),
    }));
  return {
    name: collectionName(definition),
    fields: [
      ...fields,
      { name: METADATA_FIELD, type: 'string', optional: true, index: false },
      // Fields no document has shown yet take the type Typesense detects.
      { name: '.*', type: 'auto', optional: true },
    ],
  } as CollectionCreateSchema;
}

export function toTypesenseDocument(document: IndexedDocument): Record<string, unknown> {
  const values = Object.fromEntries(Object.entries(document.values).filter(([, value]) => value !== null));
  return {
    ...values,
    id: document.id,
    ...(document.metadata !== null && document.metadata !== undefined
      ? { [METADATA_FIELD]: JSON.stringify(document.metadata) }
      : {}),
  };
}

/** Synonyms as Typesense synonym objects (one-way when `root` is set). */
export const toTypesenseSynonyms = (definition: IndexDefinition) =>
  definition.synonyms.map((synonym, i) => ({
    id: `synonym-${i}`,
    synonyms: synonym.synonyms,
    ...(synonym.root !== undefined ? { root: synonym.root } : {}),
  }));

const quote = (value: Scalar) => (typeof value === 'string' ? `\`${value.replaceAll('`', '')}\`` : String(value));

export function toFilterBy(filters: EngineFilter[]): string | undefined {
  if (filters.length === 0) return undefined;
  const operators = { gte: '>=', gt: '>', lt: '<', lte: '<=' } as const;
  return filters
    .map((filter) =>
      filter.operator === 'in'
        ? `${filter.field}:=[${filter.values.map(quote).join(',')}]`
        : `${filter.field}:${operators[filter.operator]}${filter.values[0]}`,
    )
    .join(' && ');
}

/**
 * The sort: `_text_match` stands for the built-in rules (Typesense ranks text relevance its own
 * way), placed where the first built-in rule is; custom `<field>:asc|desc` rules around it.
 */
export function toSortBy(definition: IndexDefinition): string | undefined {
  const parts: string[] = [];
  let textMatchPlaced = false;
  for (const rule of definition.rankingRules) {
    if (typeof rule === 'object') parts.push(`${rule.field}:${rule.direction}`);
    else if (!textMatchPlaced) {
      parts.push('_text_match:desc');
      textMatchPlaced = true;
    }
  }
  if (!parts.some((part) => part !== '_text_match:desc')) return undefined;
  return parts.slice(0, MAX_TYPESENSE_SORT_FIELDS).join(',');
}

export function toSearchParams(definition: IndexDefinition, query: EngineQuery): Record<string, unknown> {
  const searchable = definition.searchFields.length > 0;
  const rules = new Set(
    definition.rankingRules.filter((rule): rule is Exclude<typeof rule, object> => typeof rule === 'string'),
  );
  const params: Record<string, unknown> = {
    q: searchable && query.q.trim() !== '' ? query.q : '*',
    ...(searchable ? { query_by: definition.searchFields.join(',') } : {}),
    // The `attribute` rule: earlier search fields weigh more.
    ...(searchable && rules.has('attribute')
      ? { query_by_weights: definition.searchFields.map((_, i) => Math.max(1, 15 - i)).join(',') }
      : {}),
    prefix: true,
    max_candidates: MAX_PREFIX_EXPANSIONS,
    num_typos: 2,
    min_len_1typo: 5,
    min_len_2typo: 9,
    typo_tokens_threshold: TYPO_TOKENS_THRESHOLD,
    drop_tokens_threshold: query.threshold,
    prioritize_exact_match: rules.has('exactness'),
    prioritize_token_position: false,
    offset: query.offset,
    limit: query.limit,
    highlight_full_fields: searchable ? definition.searchFields.join(',') : undefined,
    highlight_start_tag: '<mark>',
    highlight_end_tag: '</mark>',
    enable_highlight_v1: false,
  };
  const filterBy = toFilterBy(query.filters);
  if (filterBy) params.filter_by = filterBy;
  if (query.facets.length > 0) {
    params.facet_by = query.facets.join(',');
    params.max_facet_values = MAX_FACET_VALUES;
  }
  const sortBy = toSortBy(definition);
  if (sortBy) params.sort_by = sortBy;
  if (definition.distinctField) {
    params.group_by = definition.distinctField;
    params.group_limit = 1;
  }
  if (definition.stopWords.length > 0) params.stopwords = stopwordSetName(definition);
  for (const key of Object.keys(params)) if (params[key] === undefined) delete params[key];
  return params;
}

interface TypesenseHighlight {
  snippet?: string;
  value?: string;
  snippets?: string[];
  values?: string[];
  matched_tokens?: string[] | string[][];
}

interface TypesenseHit {
  document: Record<string, unknown>;
  highlight?: Record<string, TypesenseHighlight>;
}

export interface TypesenseSearchResponse {
  found: number;
  hits?: TypesenseHit[];
  grouped_hits?: { group_key: unknown[]; hits: TypesenseHit[]; found?: number }[];
  facet_counts?: {
    field_name: string;
    counts: { value: string; count: number }[];
    stats?: Partial<FacetStats> & { total_values?: number };
  }[];
}

const escapeHtml = (text: string) =>
  text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

/** Typesense marks matches in the raw text; escape around the marks so the result matches the embedded engine's. */
const escapeMarked = (marked: string) =>
  marked
    .split(/(<mark>|<\/mark>)/)
    .map((part) => (part === '<mark>' || part === '</mark>' ? part : escapeHtml(part)))
    .join('');

function toHighlight(
  text: string,
  highlight: TypesenseHighlight | undefined,
  words: number,
  marked?: string,
): HighlightResult {
  const matched = [
    ...new Set(((highlight?.matched_tokens ?? []) as (string | string[])[]).flat().map((token) => token.toLowerCase())),
  ];
  const value = marked ?? highlight?.value ?? highlight?.snippet;
  return {
    value: value !== undefined ? escapeMarked(value) : escapeHtml(text),
    matchLevel: matched.length === 0 ? 'none' : matched.length >= words ? 'full' : 'partial',
    matchedWords: matched,
  };
}

export function fromSearchResponse(
  definition: IndexDefinition,
  query: EngineQuery,
  response: TypesenseSearchResponse,
): EngineResult {
  const words = query.q.trim() === '' ? 0 : query.q.trim().split(/\s+/).length;
  const hits = response.grouped_hits
    ? response.grouped_hits.map((group) => group.hits[0]!).filter(Boolean)
    : (response.hits ?? []);
  const facets: EngineResult['facets'] = {};
  const facetsStats: EngineResult['facetsStats'] = {};
  for (const facet of response.facet_counts ?? []) {
    facets[facet.field_name] = Object.fromEntries(facet.counts.map((count) => [count.value, count.count]));
    const stats = facet.stats;
    const type = definition.fields.find((field) => field.name === facet.field_name)?.type;
    if (
      type === 'NUMBER' &&
      stats &&
      stats.min !== undefined &&
      stats.max !== undefined &&
      stats.sum !== undefined &&
      stats.avg !== undefined
    ) {
      facetsStats[facet.field_name] = { min: stats.min, max: stats.max, avg: stats.avg, sum: stats.sum };
    }
  }
  return {
    count: response.found,
    facets,
    facetsStats,
    hits: hits.map((hit) => {
      const values: Record<string, FieldValue> = {};
      for (const field of definition.fields)
        values[field.name] = (hit.document[field.name] as FieldValue | undefined) ?? null;
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
        highlight[field] = Array.isArray(value)
          ? value.map((item, i) => toHighlight(String(item), found, words, found?.values?.[i] ?? found?.snippets?.[i]))
          : toHighlight(String(value), found, words);
      }
      return { document, highlight };
    }),
  };
}
