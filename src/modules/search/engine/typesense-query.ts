/**
 * Queries as Typesense searches: the `multi_search` entries of one query (the query itself, its
 * disjunctive facets, facet ranges and facet query), the sort, and stop words.
 */
import type { EngineQuery, IndexDefinition, SortKey } from './engine';
import { MAX_FACET_VALUES } from './facet-counts';
import { MAX_PREFIX_EXPANSIONS } from './memory-index';
import { filtersWithout } from './filter-match';
import { replacePhrases, stopPhrases } from './phrases';
import { tokenize } from './text';
import {
  GROUP_MAX_CANDIDATES,
  isGeoField,
  isNumberFacet,
  matchingOf,
  MAX_TYPESENSE_SORT_FIELDS,
  numberFacetField,
  queryFields,
  SORT_ID_FIELD,
  sortCopyField,
  stopwordSetName,
  TYPO_TOKENS_THRESHOLD,
} from './typesense-mapping';
import { toEvalSort, toFilterBy } from './typesense-filters';
import type { TypesenseProtocol } from './typesense-version';

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
  // A sort by distance sorts the geopoint field itself, which Typesense measures from the point given.
  const parts = sort.map((key) =>
    key.from
      ? `${key.field}(${key.from.lat}, ${key.from.lng}):${key.direction}`
      : `${sortCopyField(key.field)}(missing_values: last):${key.direction}`,
  );
  let textMatchPlaced = false;
  for (const rule of definition.rankingRules) {
    if (typeof rule === 'object') {
      if (!isGeoField(definition, rule.field)) parts.push(`${rule.field}(missing_values: last):${rule.direction}`);
    } else if (!textMatchPlaced) {
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
  if (definition.distinctField && !isGeoField(definition, definition.distinctField)) {
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
