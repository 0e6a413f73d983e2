/**
 * Query suggestions of a proxy key: the popular queries of its indexes' search logs that found results,
 * matching what is typed. Each process keeps every index's suggestions in memory, built from PostgreSQL
 * by one query, and rebuilds them every SEARCH_SUGGESTIONS_REFRESH_SECONDS in the background: a request
 * waits only for the first build of an index, which concurrent first requests share, and is otherwise
 * answered from what is kept while the rebuild runs. Suggestions come from the search log, not the
 * engine, so they are the same with the embedded engine and with Typesense.
 */
import { LRUCache } from 'lru-cache';
import type { Db } from '../../../kernel/db';
import { invalidField } from '../../../kernel/validation';
import type { Principal } from '../../../kernel/principal';
import type { IndexRows } from '../index-rows';
import { searchEngineOf, settingsOf } from '../search-engine-access';
import { MAX_SUGGESTIONS_PER_INDEX, SuggestionIndex } from './suggestion-index';
import { popularQueries } from './suggestions.repository';
import { DEFAULT_MIN_SEARCHES, SUGGESTIONS_WINDOW_DAYS, type SuggestionData } from './suggestions.schemas';

/** Suggestion queries kept per process over all indexes; the least recently asked indexes go first beyond it. */
const MAX_KEPT_QUERIES = 200_000;

const DAY_MS = 86_400_000;

export interface SuggestionsOptions {
  /** SEARCH_SUGGESTIONS_REFRESH_SECONDS. */
  refreshSeconds: number;
  /** SEARCH_ANALYTICS_RETENTION_DAYS: the window never reaches past what is kept. */
  retentionDays: number;
  /** Where a failed background rebuild is reported (the kept suggestions keep being served). */
  onBackgroundError: (error: unknown) => void;
  /** Reads an index's popular queries: the search log in PostgreSQL unless given (to observe the builds). */
  load?: typeof popularQueries;
}

export interface SuggestionsRequest {
  q: string;
  limit: number;
  index?: string;
}

export class SuggestionsService {
  /** By index id. */
  private readonly kept: LRUCache<string, SuggestionIndex>;

  constructor(
    private readonly db: Db,
    private readonly rows: IndexRows,
    private readonly options: SuggestionsOptions,
  ) {
    this.kept = new LRUCache<string, SuggestionIndex>({
      maxSize: MAX_KEPT_QUERIES,
      sizeCalculation: (suggestions) => suggestions.size + 1,
      ttl: options.refreshSeconds * 1000,
      // A stale entry is served while its rebuild runs, and stays when the rebuild fails.
      allowStale: true,
      noDeleteOnStaleGet: true,
      allowStaleOnFetchRejection: true,
      noDeleteOnFetchRejection: true,
      fetchMethod: (indexId, stale) => this.build(indexId, stale),
    });
  }

  /** The popular queries of one of the key's indexes that match `q`; same access rule as searching through the key. */
  async suggest(caller: Principal | null, key: string, request: SuggestionsRequest): Promise<SuggestionData[]> {
    const { settings: found } = await searchEngineOf(this.db, caller, key);
    const settings = settingsOf(found.settings);
    const aliases = settings.indexes.map((entry) => entry.alias);
    // A named index must be one the key searches; by default, the first of them a search would search.
    const candidates = request.index === undefined ? aliases : aliases.filter((alias) => alias === request.index);
    const index = await this.indexOf(found.tenantId, candidates);
    if (!index && request.index !== undefined) {
      throw invalidField('index', `${request.index} is not an index of this search engine`);
    }
    if (!index) return [];
    const suggestions = await this.kept.fetch(index.id);
    if (!suggestions) return [];
    return suggestions.suggest(request.q, {
      limit: request.limit,
      minSearches: settings.suggestions?.min_searches ?? DEFAULT_MIN_SEARCHES,
      deny: settings.suggestions?.deny ?? [],
    });
  }

  /** The first of these indexes that exists and is active (what a search through the key would search). */
  private async indexOf(tenantId: string, aliases: string[]) {
    for (const alias of aliases) {
      const index = await this.rows.find(tenantId, alias);
      if (index && index.isActive) return index;
    }
    return undefined;
  }

  /** Builds an index's suggestions from its search log; a failed rebuild keeps the stale ones and is reported. */
  private async build(indexId: string, stale: SuggestionIndex | undefined): Promise<SuggestionIndex> {
    const days = Math.min(SUGGESTIONS_WINDOW_DAYS, this.options.retentionDays);
    try {
      const since = new Date(Date.now() - days * DAY_MS);
      const load = this.options.load ?? popularQueries;
      return new SuggestionIndex(indexId, await load(this.db, indexId, since, MAX_SUGGESTIONS_PER_INDEX));
    } catch (error) {
      if (!stale) throw error;
      this.options.onBackgroundError(
        new Error(`the query suggestions of index ${indexId} were not rebuilt`, { cause: error }),
      );
      return stale;
    }
  }
}
