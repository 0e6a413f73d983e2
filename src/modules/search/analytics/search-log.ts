/**
 * Searches are stored for analytics in batches, off the request path: one INSERT per batch instead
 * of one per search. A batch waits at most `FLUSH_INTERVAL_MS`; what a crashed process had not
 * written yet is lost, which analytics tolerate. One search that cannot be stored costs only
 * itself: it is dropped, counted in `dropped` and reported, never the searches around it.
 */
import type { Db } from '../../kernel/db';
import { isStorableText } from '../../kernel/validation';
import * as repository from './search.repository';

const FLUSH_INTERVAL_MS = 200;
const MAX_BATCH = 500;

/** A search that was not stored, with what identifies it (never its batch) and why. */
export class SearchNotStored extends Error {
  /** What identifies the search, not what was searched for: the report is logged. */
  readonly search: Pick<repository.SearchRecord, 'id' | 'tenantId' | 'indexId'>;

  constructor(
    { id, tenantId, indexId }: SearchNotStored['search'],
    readonly reason: string,
    options?: ErrorOptions,
  ) {
    super(`search ${id} of index ${indexId} (tenant ${tenantId}) not stored: ${reason}`, options);
    this.search = { id, tenantId, indexId };
  }
}

const isStorable = (record: repository.SearchRecord) =>
  [record.query, record.sessionId, record.userId].every((text) => text === null || isStorableText(text));

export class SearchLog {
  private buffer: repository.SearchRecord[] = [];
  private timer: NodeJS.Timeout | undefined;
  private writing: Promise<void> = Promise.resolve();
  private droppedCount = 0;

  constructor(
    private readonly db: Db,
    private readonly onError: (error: unknown) => void,
  ) {}

  /** Searches dropped since the start because they could not be stored; each was reported. */
  get dropped() {
    return this.droppedCount;
  }

  record(records: repository.SearchRecord[]) {
    // Text PostgreSQL refuses is dropped rather than rewritten to fit: analytics group searches by
    // their exact text, and a rewritten one would be a query nobody typed. The count keeps the loss visible.
    for (const record of records) {
      if (isStorable(record)) this.buffer.push(record);
      else this.drop(record, 'its query, session id or user id holds U+0000 or an unpaired surrogate');
    }
    if (this.buffer.length >= MAX_BATCH) void this.flush();
    else if (this.buffer.length > 0) this.timer ??= setTimeout(() => void this.flush(), FLUSH_INTERVAL_MS).unref();
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
        await this.writeOneByOne(batch, error);
      }
    });
    return this.writing;
  }

  /**
   * After the database refused a batch for a row it holds, writes the batch's searches one at a
   * time so that only the refused ones are lost. A failure of the database itself (unreachable,
   * restarting) is no row's fault: the searches not written yet are lost as a crash would lose
   * them, reported once for the batch, and not counted as dropped, since every row would fail alike.
   */
  private async writeOneByOne(batch: repository.SearchRecord[], batchError: unknown) {
    if (repository.rowRefusal(batchError) === undefined) return this.onError(batchError);
    for (const [i, record] of batch.entries()) {
      try {
        await repository.insertSearches(this.db, [record]);
      } catch (error) {
        const refusal = repository.rowRefusal(error);
        if (refusal === undefined) {
          return this.onError(new Error(`search log: ${batch.length - i} searches not stored`, { cause: error }));
        }
        this.drop(record, `the database refused it (${refusal})`, { cause: error });
      }
    }
  }

  private drop(record: repository.SearchRecord, reason: string, options?: ErrorOptions) {
    this.droppedCount += 1;
    this.onError(new SearchNotStored(record, reason, options));
  }
}
