/**
 * The query suggestions of one search index: its popular queries as a small in-memory index of the
 * embedded engine, so a typed prefix finds them with the engine's own tokenizer, prefix completion of
 * the last word and typo budget. Pure: built from the rows of the search log, searched synchronously.
 */
import type { IndexDefinition } from '../engine/engine';
import { MemoryIndex } from '../engine/memory-index';
import { tokenize } from '../engine/text';
import type { PopularQuery } from './suggestions.repository';

/** Popular queries kept per index (the most searched with results); the memory of a process is bounded by it. */
export const MAX_SUGGESTIONS_PER_INDEX = 10_000;

export interface Suggestion {
  /** The query as searched (trimmed and lowercased). */
  query: string;
  /** Searches of it that found results, within the window. */
  count: number;
  /** Their average result count, rounded. */
  hits: number;
}

export interface SuggestOptions {
  limit: number;
  /** Queries searched with results fewer times than this are not suggested. */
  minSearches: number;
  /** Words (or phrases) that a suggested query never contains as whole words. */
  deny: string[];
}

/** Deny lists whose hidden queries are kept per built index; more distinct lists are computed again. */
const MAX_KEPT_DENY_LISTS = 32;

const definitionOf = (indexId: string): IndexDefinition => ({
  id: indexId,
  tenantId: '',
  alias: 'suggestions',
  version: 0,
  rebuildVersion: 0,
  fields: [
    { name: 'query', type: 'STRING' },
    { name: 'searches', type: 'NUMBER' },
    { name: 'hits', type: 'NUMBER' },
  ],
  searchFields: ['query'],
  filterFields: ['searches'],
  facetFields: [],
  distinctField: null,
  synonyms: [],
  stopWords: [],
  // Fewer typos first (what was typed before what resembles it), then the most searched.
  rankingRules: ['words', 'typo', { field: 'searches', direction: 'desc' }],
  sortableFields: ['searches'],
});

/** A deny list as word sequences by their first word, in the form the engine compares words (lowercase, no accents). */
export function denyListOf(deny: string[]): Map<string, string[][]> {
  const byFirstWord = new Map<string, string[][]>();
  for (const entry of deny) {
    const words = tokenize(entry);
    if (words.length === 0) continue;
    const entries = byFirstWord.get(words[0]!) ?? [];
    entries.push(words);
    byFirstWord.set(words[0]!, entries);
  }
  return byFirstWord;
}

/** Whether the words of a query hold one of the denied word sequences, whole words in a row. */
export function isDenied(words: string[], denied: Map<string, string[][]>): boolean {
  return words.some((word, start) =>
    (denied.get(word) ?? []).some((entry) => entry.every((next, offset) => words[start + offset] === next)),
  );
}

export class SuggestionIndex {
  private readonly index: MemoryIndex;
  private readonly queries: { query: string; words: string[] }[];
  /** Per deny list (as JSON), the queries it hides. */
  private readonly hidden = new Map<string, string[]>();

  constructor(indexId: string, popular: PopularQuery[]) {
    this.index = new MemoryIndex(definitionOf(indexId));
    this.index.upsert(
      popular.map((row) => ({
        id: row.query,
        values: { query: row.query, searches: row.searches, hits: row.hits },
        metadata: null,
      })),
    );
    this.queries = popular.map((row) => ({ query: row.query, words: tokenize(row.query) }));
  }

  get size() {
    return this.index.size;
  }

  /** The popular queries matching `q` as typed so far, most relevant first. A `q` without words matches none. */
  suggest(q: string, { limit, minSearches, deny }: SuggestOptions): Suggestion[] {
    if (tokenize(q).length === 0) return [];
    const result = this.index.search({
      q,
      filters: minSearches > 1 ? [{ field: 'searches', operator: 'gte', values: [minSearches] }] : [],
      facets: [],
      limit,
      offset: 0,
      // Every typed word must match: a suggestion completes what was typed.
      threshold: 0,
      sort: [],
      disjunctiveFacets: false,
      hide: this.hiddenBy(deny),
    });
    return result.hits.map(({ document: { values } }) => ({
      query: values.query as string,
      count: values.searches as number,
      hits: values.hits as number,
    }));
  }

  private hiddenBy(deny: string[]): string[] {
    if (deny.length === 0) return [];
    const key = JSON.stringify(deny);
    let hidden = this.hidden.get(key);
    if (!hidden) {
      const denied = denyListOf(deny);
      hidden = this.queries.filter(({ words }) => isDenied(words, denied)).map(({ query }) => query);
      if (this.hidden.size >= MAX_KEPT_DENY_LISTS) this.hidden.clear();
      this.hidden.set(key, hidden);
    }
    return hidden;
  }
}
