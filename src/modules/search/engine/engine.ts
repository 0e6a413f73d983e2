/**
 * The port every search engine implements (the embedded engine and the Typesense adapter), and the
 * shapes that cross it. Documents reach an engine already mapped onto the index's fields.
 */
import type { DbOrTx } from '../../../kernel/db';
import type { MatchingSettings } from './matching';

export const FIELD_TYPES = ['STRING', 'NUMBER', 'BOOLEAN', 'GEOPOINT'] as const;
export type FieldType = (typeof FIELD_TYPES)[number];

export type Scalar = string | number | boolean;
/** The value of a GEOPOINT field, in degrees: latitude -90..90, longitude -180..180. */
export interface GeoPoint {
  lat: number;
  lng: number;
}
export type FieldValue = Scalar | Scalar[] | GeoPoint | null;

export const isGeoPoint = (value: FieldValue | undefined): value is GeoPoint =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** A field's scalar values as a list: none, one, or the array's elements; none for a point. */
export const valuesOf = (value: FieldValue | undefined): Scalar[] =>
  value === null || value === undefined || isGeoPoint(value) ? [] : Array.isArray(value) ? value : [value];

/** Whether a field has a value: a scalar, a non-empty array or a point. */
export const hasValue = (value: FieldValue | undefined) => isGeoPoint(value) || valuesOf(value).length > 0;

export const BUILT_IN_RANKING_RULES = ['words', 'typo', 'proximity', 'attribute', 'exactness'] as const;
export type BuiltInRankingRule = (typeof BUILT_IN_RANKING_RULES)[number];
export interface SortKey {
  field: string;
  direction: 'asc' | 'desc';
  /** A GEOPOINT field's sort: by the distance of its point from this one. */
  from?: GeoPoint;
}
export type RankingRule = BuiltInRankingRule | SortKey;
export const DEFAULT_RANKING_RULES: BuiltInRankingRule[] = ['words', 'typo', 'proximity', 'attribute', 'exactness'];

/** `root` set: one-way (searching the root also finds the synonyms); otherwise every word finds every other. */
export interface Synonym {
  root?: string;
  synonyms: string[];
}

/** What an engine needs to know of an index: its resolved fields and effective settings. */
export interface IndexDefinition {
  id: string;
  tenantId: string;
  alias: string;
  /** Raised by every committed change of the definition or the documents. */
  version: number;
  /** Last version that changed the definition or cleared the documents. */
  rebuildVersion: number;
  /** Index fields in order; `type` null while no document has shown it. */
  fields: { name: string; type: FieldType | null }[];
  searchFields: string[];
  filterFields: string[];
  facetFields: string[];
  distinctField: string | null;
  synonyms: Synonym[];
  stopWords: string[];
  rankingRules: RankingRule[];
  /** Fields a query may sort by. */
  sortableFields: string[];
  /** How words are matched; the defaults when left out. */
  matching?: MatchingSettings;
}

/** A document mapped onto the index's fields. `metadata` is returned with hits, never searched. */
export interface IndexedDocument {
  id: string;
  values: Record<string, FieldValue>;
  metadata: unknown;
}

export const FILTER_OPERATORS = [
  'in',
  'not_in',
  'gte',
  'gt',
  'lt',
  'lte',
  'exists',
  'not_exists',
  'geo_radius',
  'geo_bbox',
] as const;
export type FilterOperator = (typeof FILTER_OPERATORS)[number];

/**
 * A condition on one field. Values arrive already coerced to the field's type; `exists` and
 * `not_exists` take none. `not_in` holds for a document without the field. On a GEOPOINT field,
 * `geo_radius` takes `[lat, lng, meters]` (the point within that distance) and `geo_bbox`
 * `[south, west, north, east]` in degrees (the point inside the box; west above east crosses the
 * 180th meridian).
 */
export interface FieldFilter {
  field: string;
  operator: FilterOperator;
  values: Scalar[];
}

/** `any`: one of the filters must hold; `all`: every one. */
export type FilterGroup = { any: EngineFilter[] } | { all: EngineFilter[] };

export type EngineFilter = FieldFilter | FilterGroup;

/** A named range of a NUMBER field: `from` ≤ value < `to`, null for no bound. */
export interface FacetRange {
  label: string;
  from: number | null;
  to: number | null;
}

export interface FacetRangeCount extends FacetRange {
  count: number;
}

export interface EngineQuery {
  q: string;
  filters: EngineFilter[];
  facets: string[];
  limit: number;
  offset: number;
  /** Fewer hits than this for all query words: the last words are dropped until there are enough. */
  threshold: number;
  /** Sorts before relevance (the ranking rules decide among equal values); documents without the field last. */
  sort: SortKey[];
  /** Count each facet without the top-level filters on its own field (what a filter sidebar shows). */
  disjunctiveFacets: boolean;
  /** Values of this facet field matching `q` (each word, the last as a prefix, with typos), counted. */
  facetQuery?: { field: string; q: string };
  /** Named ranges per NUMBER facet field, counted like facets (disjunctively when asked). */
  facetRanges?: Record<string, FacetRange[]>;
  /** Documents placed at these 1-based positions when they pass the filters, whatever the query words. */
  pin?: { id: string; position: number }[];
  /** Documents never returned. */
  hide?: string[];
  /**
   * Documents matching any of these come before the others of equal rank (after the sort and the
   * ranking rules, before the id), and those matching any of `bury` after them; `bury` wins.
   */
  boost?: FieldFilter[];
  bury?: FieldFilter[];
}

export interface FacetHit {
  value: string;
  count: number;
}

export interface HighlightResult {
  value: string;
  matchLevel: 'none' | 'partial' | 'full';
  matchedWords: string[];
}

export interface EngineHit {
  document: IndexedDocument;
  highlight: Record<string, HighlightResult | HighlightResult[]>;
  /**
   * With a sort by distance: the distance in whole meters from the first such sort's point to the
   * document's point, null when the document has none.
   */
  geoDistanceMeters?: number | null;
}

export interface FacetStats {
  min: number;
  max: number;
  avg: number;
  sum: number;
}

export interface EngineResult {
  /** Matching documents (distinct groups when the index has a `distinct_field`), before paging. */
  count: number;
  hits: EngineHit[];
  facets: Record<string, Record<string, number>>;
  facetsStats: Record<string, FacetStats>;
  /** With a facet query: the matching values, most frequent first. */
  facetHits?: FacetHit[];
  /** With facet ranges: each range with its count, in the order asked. */
  facetRanges?: Record<string, FacetRangeCount[]>;
}

/**
 * A search engine. PostgreSQL holds every index's documents; an engine holds a searchable copy and is
 * told about each committed change. Each method is given the definition as of that change.
 */
export interface SearchEngine {
  readonly name: 'embedded' | 'typesense';
  /** Whether a search first brings the engine's copy up to the definition's version, applying any pending change. */
  readonly catchesUpOnSearch: boolean;
  /** Checks, before the service listens, that the engine can serve; rejects with the reason otherwise. */
  start?(): Promise<void>;
  /** Resolves when a server the engine depends on answers as ready now, rejects otherwise (for `/readyz`). */
  probe?(): Promise<void>;
  /**
   * The definition changed (or the index is new): the copy is rebuilt from every stored document.
   * `reader`: where an engine that reads the stored documents reads them (a caller's transaction).
   */
  definitionChanged(definition: IndexDefinition, reader?: DbOrTx): Promise<void>;
  /** These documents were inserted or replaced (a new schema rebuilds the copy, reading through `reader`). */
  documentsWritten(definition: IndexDefinition, documents: IndexedDocument[], reader?: DbOrTx): Promise<void>;
  /** These documents were deleted (ids the engine does not hold are ignored). */
  documentsDeleted(definition: IndexDefinition, ids: string[]): Promise<void>;
  /** Every document was deleted. */
  documentsCleared(definition: IndexDefinition): Promise<void>;
  /** The index is gone (its definition with it: only the id is left). */
  indexDeleted(definition: Pick<IndexDefinition, 'id'>): Promise<void>;
  /** Searches the index as of at least `definition.version`. */
  search(definition: IndexDefinition, query: EngineQuery): Promise<EngineResult>;
  close(): Promise<void>;
}
