/**
 * Searches are counted for analytics per (index, query, hour), off the request path: each process
 * adds up its searches in memory and writes the counts in batches, as upserts that add to the
 * stored counts, so the processes of a deployment merge theirs and a query searched a million times
 * in an hour is one row. A batch waits at most `FLUSH_INTERVAL_MS`; what a crashed process had not
 * written yet is lost, which analytics tolerate. Counts that cannot be stored cost only themselves:
 * they are dropped, counted in `dropped` and reported, never the counts around them.
 */
import type { Db } from '../../../kernel/db';
import { isStorableText } from '../../../kernel/validation';
import * as repository from './analytics.repository';
import { hourOf, type SearchReference } from './query-ids';

const FLUSH_INTERVAL_MS = 1000;
/** Rows (distinct index, hour and query) that make a batch write at once, and the most one statement writes. */
const MAX_BATCH = 1000;

/** One search of an index, as the search service answered it. */
export interface SearchRecord extends SearchReference {
  tenantId: string;
  indexId: string;
  /** The query as typed, trimmed and lowercased. */
  query: string;
  resultCount: number;
}

/** Counts of searches that were not stored, with what identifies them (never what was searched for) and why. */
export class SearchNotStored extends Error {
  /** Which index and hour, and how many searches: the report is logged, so it holds no query text. */
  readonly searches: { tenantId: string; indexId: string; hour: string; count: number };

  constructor(count: repository.SearchCount, reason: string, options?: ErrorOptions) {
    const searches = {
      tenantId: count.tenantId,
      indexId: count.indexId,
      hour: count.hour.toISOString(),
      count: count.searches,
    };
    super(
      `${searches.count} searches of index ${searches.indexId} (tenant ${searches.tenantId}) in the hour of ` +
        `${searches.hour} not stored: ${reason}`,
      options,
    );
    this.searches = searches;
  }
}

export class SearchLog {
  private pending = new Map<string, repository.SearchCount>();
  private timer: NodeJS.Timeout | undefined;
  private writing: Promise<void> = Promise.resolve();
  /** Whether a write is queued that has not taken the pending counts yet. */
  private queued = false;
  private droppedCount = 0;

  constructor(
    private readonly db: Db,
    private readonly onError: (error: unknown) => void,
  ) {}

  /** Searches dropped since the start because they could not be stored; each was reported. */
  get dropped() {
    return this.droppedCount;
  }

  record(records: SearchRecord[]) {
    for (const record of records) {
      // Text PostgreSQL refuses is dropped rather than rewritten to fit: analytics group searches by
      // their exact text, and a rewritten one would be a query nobody typed. The count keeps the loss visible.
      if (!isStorableText(record.query)) {
        this.drop({ ...this.countOf(record), searches: 1 }, 'its query holds U+0000 or an unpaired surrogate');
        continue;
      }
      const hour = hourOf(record.searchedAt);
      // The query comes last, so the key is unambiguous whatever the query holds.
      const key = `${record.indexId} ${hour.getTime()} ${record.query}`;
      const count = this.pending.get(key) ?? this.countOf(record);
      count.searches += 1;
      if (record.resultCount === 0) count.noResults += 1;
      count.resultCountSum += record.resultCount;
      this.pending.set(key, count);
    }
    if (this.pending.size >= MAX_BATCH) void this.flush();
    else if (this.pending.size > 0) this.timer ??= setTimeout(() => void this.flush(), FLUSH_INTERVAL_MS).unref();
  }

  /** Writes everything recorded so far; resolves once it is stored. */
  flush(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    // One write waits behind the one in progress and takes whatever was counted by the time it starts, so
    // searches made during a slow write merge into the next batch instead of queueing a batch each.
    if (!this.queued) {
      this.queued = true;
      this.writing = this.writing.then(async () => {
        this.queued = false;
        const counts = [...this.pending.values()];
        this.pending = new Map();
        for (let start = 0; start < counts.length; start += MAX_BATCH) {
          const batch = counts.slice(start, start + MAX_BATCH);
          try {
            await repository.addSearchCounts(this.db, batch);
          } catch (error) {
            if (!(await this.writeOneByOne(batch, counts.length - start, error))) return;
          }
        }
      });
    }
    return this.writing;
  }

  private countOf(record: SearchRecord): repository.SearchCount {
    return {
      tenantId: record.tenantId,
      indexId: record.indexId,
      hour: hourOf(record.searchedAt),
      queryKey: record.queryKey,
      query: record.query,
      searches: 0,
      noResults: 0,
      resultCountSum: 0,
    };
  }

  /**
   * After the database refused a batch for a row it holds, writes the batch's rows one at a time so
   * that only the refused ones are lost. A failure of the database itself (unreachable, restarting)
   * is no row's fault: the counts not written yet (`left`, in rows) are lost as a crash would lose
   * them, reported once, and not counted as dropped, since every row would fail alike. Returns
   * whether writing may go on.
   */
  private async writeOneByOne(batch: repository.SearchCount[], left: number, batchError: unknown) {
    if (repository.rowRefusal(batchError) === undefined) {
      this.onError(new Error(`search log: ${left} counts of searches not stored`, { cause: batchError }));
      return false;
    }
    for (const [i, count] of batch.entries()) {
      try {
        await repository.addSearchCounts(this.db, [count]);
      } catch (error) {
        const refusal = repository.rowRefusal(error);
        if (refusal === undefined) {
          this.onError(new Error(`search log: ${left - i} counts of searches not stored`, { cause: error }));
          return false;
        }
        this.drop(count, `the database refused it (${refusal})`, { cause: error });
      }
    }
    return true;
  }

  private drop(count: repository.SearchCount, reason: string, options?: ErrorOptions) {
    this.droppedCount += count.searches;
    this.onError(new SearchNotStored(count, reason, options));
  }
}
