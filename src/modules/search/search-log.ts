/**
 * Searches are stored for analytics in batches, off the request path: one INSERT per batch instead
 * of one per search. A batch waits at most `FLUSH_INTERVAL_MS`; what a crashed process had not
 * written yet is lost, which analytics tolerate.
 */
import type { Db } from '../../kernel/db';
import * as repository from './search.repository';

const FLUSH_INTERVAL_MS = 200;
const MAX_BATCH = 500;

export class SearchLog {
  private buffer: repository.SearchRecord[] = [];
  private timer: NodeJS.Timeout | undefined;
  private writing: Promise<void> = Promise.resolve();

  constructor(
    private readonly db: Db,
    private readonly onError: (error: unknown) => void,
  ) {}

  record(records: repository.SearchRecord[]) {
    this.buffer.push(...records);
    if (this.buffer.length >= MAX_BATCH) void this.flush();
    else this.timer ??= setTimeout(() => void this.flush(), FLUSH_INTERVAL_MS).unref();
  }

  /** Writes everything recorded so far; resolves once it is stored. */
  flush(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    const batch = this.buffer;
    this.buffer = [];
    this.writing = this.writing.then(async () => {
      if (batch.length === 0) return;
      try {
        await repository.insertSearches(this.db, batch);
      } catch (error) {
        this.onError(error);
      }
    });
    return this.writing;
  }
}
