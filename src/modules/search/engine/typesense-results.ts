/**
 * Typesense's search responses as results of this service: hits with their documents as sent and
 * highlights as the embedded engine marks them, facet counts and stats, and refused searches.
 */
import {
  isGeoPoint,
  type EngineQuery,
  type EngineResult,
  type FacetStats,
  type FieldValue,
  type HighlightResult,
  type IndexDefinition,
  type IndexedDocument,
} from './engine';
import { escapeHtml, tokenize } from './text';
import { isNumberFacet, METADATA_FIELD, numberFacetField, VALUES_FIELD } from './typesense-mapping';

/** An element's highlight (current format: one per array element, or one for a single value). */
interface TypesenseHighlight {
  snippet?: string;
  value?: string;
  matched_tokens?: string[];
}

interface TypesenseHit {
  document: Record<string, unknown>;
  highlight?: Record<string, TypesenseHighlight | TypesenseHighlight[]>;
  /** With a sort by distance: meters from the sort's point, by GEOPOINT field. */
  geo_distance_meters?: Record<string, number>;
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
  // Typesense gives each hit's distance from the point of each sort by distance, by field.
  const byDistance = query.sort.find((key) => key.from !== undefined);
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
        if (value === null || value === undefined || isGeoPoint(value)) continue;
        const found = hit.highlight?.[field];
        const elements = Array.isArray(found) ? found : [found];
        highlight[field] = Array.isArray(value)
          ? value.map((item, i) => toHighlight(String(item), elements[i], words))
          : toHighlight(String(value), elements[0], words);
      }
      if (!byDistance) return { document, highlight };
      const meters = hit.geo_distance_meters?.[byDistance.field];
      return { document, highlight, geoDistanceMeters: typeof meters === 'number' ? Math.round(meters) : null };
    }),
  };
}
