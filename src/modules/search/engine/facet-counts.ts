/**
 * Facets of the embedded engine's matches: the most frequent values of each facet field with their
 * counts and a NUMBER field's stats, a facet query's matching values, and facet ranges, counted
 * without a field's own filters when faceting is disjunctive.
 */
import {
  isGeoPoint,
  valuesOf,
  type EngineQuery,
  type EngineResult,
  type FacetHit,
  type FacetStats,
  type FieldType,
  type IndexedDocument,
  type Scalar,
} from './engine';
import { slotFilter } from './column-filters';
import { MISSING, type FieldColumns } from './field-columns';
import { countRanges } from './facet-ranges';
import { filtersWithout } from './filter-match';
import type { TextMatcher } from './matching';
import { facetValueMatches } from './text';

/** Values listed per facet, most frequent first. */
export const MAX_FACET_VALUES = 100;

/** Counts facets over documents of one index. */
export class FacetCounter {
  constructor(
    /** Documents by slot. */
    private readonly documents: (IndexedDocument | undefined)[],
    private readonly types: Map<string, FieldType | null>,
    private readonly matcher: TextMatcher,
    /** The documents' values by field. */
    private readonly columns: FieldColumns,
  ) {}

  /**
   * The facets of `filtered`, the matches that pass the query's filters; `candidates` are the
   * matches before filtering, counted under fewer filters for a disjunctive facet.
   */
  count(candidates: number[], filtered: number[], query: EngineQuery) {
    const { facets, facetsStats } = query.disjunctiveFacets
      ? this.disjunctiveFacetsOf(candidates, filtered, query)
      : this.facetsOf(filtered, query.facets);
    const facetHits = query.facetQuery && this.facetHitsOf(candidates, filtered, query, query.facetQuery);
    const facetRanges = query.facetRanges && this.facetRangesOf(candidates, filtered, query, query.facetRanges);
    return { facets, facetsStats, facetHits, facetRanges };
  }

  /** The matches a facet of `field` is counted over: without the field's own filters when disjunctive. */
  private slotsFor(field: string, candidates: number[], filtered: number[], query: EngineQuery, disjunctive: boolean) {
    const others = disjunctive ? filtersWithout(query.filters, field) : query.filters;
    return others.length === query.filters.length
      ? filtered
      : candidates.filter(slotFilter(others, this.documents, this.columns));
  }

  /** Each field's ranges counted over the matches (without the field's own filters when disjunctive). */
  private facetRangesOf(
    candidates: number[],
    filtered: number[],
    query: EngineQuery,
    ranges: NonNullable<EngineQuery['facetRanges']>,
  ) {
    const counted: NonNullable<EngineResult['facetRanges']> = {};
    for (const [field, fieldRanges] of Object.entries(ranges)) {
      const slots = this.slotsFor(field, candidates, filtered, query, query.disjunctiveFacets);
      counted[field] = countRanges(
        slots.map((slot) => this.documents[slot]!.values[field]),
        fieldRanges,
      );
    }
    return counted;
  }

  /** Values of a facet that match the facet query, counted over the matches (disjunctively when asked). */
  private facetHitsOf(
    candidates: number[],
    filtered: number[],
    query: EngineQuery,
    facetQuery: { field: string; q: string },
  ): FacetHit[] {
    const slots = this.slotsFor(facetQuery.field, candidates, filtered, query, query.disjunctiveFacets);
    const counts = new Map<string, number>();
    for (const slot of slots) {
      for (const value of new Set(valuesOf(this.documents[slot]!.values[facetQuery.field]).map(String)))
        counts.set(value, (counts.get(value) ?? 0) + 1);
    }
    return [...counts]
      .filter(([value]) => facetValueMatches(value, facetQuery.q, this.matcher))
      .map(([value, count]) => ({ value, count }))
      .sort((a, b) => b.count - a.count || (a.value < b.value ? -1 : a.value > b.value ? 1 : 0))
      .slice(0, MAX_FACET_VALUES);
  }

  /** Each facet counted over the matches of every filter but those about its own field alone. */
  private disjunctiveFacetsOf(candidates: number[], filtered: number[], query: EngineQuery) {
    const facets: EngineResult['facets'] = {};
    const facetsStats: EngineResult['facetsStats'] = {};
    for (const field of query.facets) {
      const one = this.facetsOf(this.slotsFor(field, candidates, filtered, query, true), [field]);
      Object.assign(facets, one.facets);
      Object.assign(facetsStats, one.facetsStats);
    }
    return { facets, facetsStats };
  }

  private facetsOf(slots: number[], fields: string[]) {
    const facets: Record<string, Record<string, number>> = {};
    const facetsStats: Record<string, FacetStats> = {};
    for (const field of fields) {
      const { codes, values, ids } = this.columns.of(this.documents, field);
      // Counted by value id; `seen` keeps the order values were first met, which ties are listed in.
      const countOf = new Int32Array(values.length);
      const seen: number[] = [];
      let min = Infinity;
      let max = -Infinity;
      let sum = 0;
      let n = 0;
      const count = (id: number, value: Scalar) => {
        if (countOf[id] === 0) seen.push(id);
        countOf[id]! += 1;
        if (typeof value === 'number') {
          if (value < min) min = value;
          if (value > max) max = value;
          sum += value;
          n += 1;
        }
      };
      for (const slot of slots) {
        const code = codes[slot]!;
        if (code >= 0) count(code, values[code]!);
        else if (code !== MISSING) {
          const value = this.documents[slot]!.values[field];
          if (Array.isArray(value)) for (const item of new Set(value)) count(ids.get(item)!, item);
          // A point is no facet value.
          else if (value !== null && value !== undefined && !isGeoPoint(value)) count(ids.get(value)!, value);
        }
      }
      const counts = new Map<Scalar, number>();
      for (const id of seen) counts.set(values[id]!, countOf[id]!);
      facets[field] = Object.fromEntries(topValues(counts));
      if (this.types.get(field) === 'NUMBER' && n > 0) facetsStats[field] = { min, max, avg: sum / n, sum };
    }
    return { facets, facetsStats };
  }
}

/**
 * The most frequent values, at most MAX_FACET_VALUES, by count and then by value as text. Values
 * are grouped by count, and each group's texts sorted natively (by code unit, as `<` compares).
 */
function topValues(counts: Map<Scalar, number>): [string, number][] {
  const byCount = new Map<number, string[]>();
  for (const [value, count] of counts) {
    const texts = byCount.get(count);
    if (texts) texts.push(String(value));
    else byCount.set(count, [String(value)]);
  }
  const top: [string, number][] = [];
  for (const count of [...byCount.keys()].sort((a, b) => b - a)) {
    for (const text of byCount.get(count)!.sort()) {
      if (top.length === MAX_FACET_VALUES) return top;
      top.push([text, count]);
    }
  }
  return top;
}
