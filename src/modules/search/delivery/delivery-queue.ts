/**
 * Deliveries to a search engine that holds one shared copy (Typesense), from a queue in
 * PostgreSQL: the transaction of every change records its index there (`recordChange`), and a
 * delivery sends the engine what changed since the version it holds, read from PostgreSQL. So a
 * delivery can be repeated, a failed one is simply tried again (with a growing wait), and one
 * delivery catches up with every change committed before it read the index.
 *
 * The writing process delivers at once, unless the index is waiting for a retry; every process
 * also runs a worker that delivers what is due. A transaction-scoped advisory lock per index keeps
 * two processes from delivering one index at the same time, so the engine gets its changes in
 * order. The delivery reads everything through that transaction: it needs one connection, however
 * many documents a rebuild reads.
 */
import type { Db, DbOrTx, Tx } from '../../../kernel/db';
import { startPoller, type Poller } from '../../../kernel/poller';
import { mapStoredDocument, resolveDefinition } from '../definition';
import type { IndexedDocument, SearchEngine } from '../engine/engine';
import * as indexes from '../search.repository';
import type { ChangeDelivery } from './change-delivery';
import * as repository from './delivery.repository';
import { retryDelayMs, type RetrySchedule } from './retry-delay';

/** Documents read and sent at a time. */
const SEND_CHUNK = 1_000;
/** Due indexes looked up per round of the worker. */
const DUE_BATCH = 20;
/** How long each process waits after a worker pass before it looks for due deliveries again. */
export const POLL_INTERVAL_MS = 500;
/**
 * A delivery holds its lock in a transaction for as long as it runs, and rebuilding a large index
 * takes a while. Past this the transaction ends and the delivery is tried again at a later pass.
 */
const DELIVERY_TIMEOUT_MS = 10 * 60_000;

export type DeliveryOutcome = 'delivered' | 'failed' | 'skipped';

/** A delivery that failed; it is tried again after `retryInMs`. */
export class SearchDeliveryFailed extends Error {
  constructor(
    readonly indexId: string,
    readonly attempts: number,
    readonly retryInMs: number,
    options: ErrorOptions,
  ) {
    super(
      `search: delivering the changes of index ${indexId} to the search engine failed (${attempts} in a row); ` +
        `trying again in ${(retryInMs / 1000).toFixed(1)} s`,
      options,
    );
    this.name = 'SearchDeliveryFailed';
  }
}

export class DeliveryQueue implements ChangeDelivery {
  /** Per index, the delivery this process runs now. */
  private readonly running = new Map<string, Promise<DeliveryOutcome>>();
  /** Per index, the delivery that starts when the running one ends, shared by everyone who asked meanwhile. */
  private readonly next = new Map<string, Promise<DeliveryOutcome>>();

  constructor(
    private readonly db: Db,
    private readonly engine: SearchEngine,
    private readonly schedule: RetrySchedule,
    private readonly onFailure: (error: unknown) => void,
  ) {}

  recordChange(tx: DbOrTx, indexId: string) {
    return repository.recordChange(tx, indexId);
  }

  /** Delivers at once, so a healthy engine has the change when the write answers; a failure is retried, not thrown. */
  async afterCommit(indexId: string) {
    await this.deliver(indexId);
  }

  /**
   * Delivers the index's pending changes if a delivery is due and no other process is delivering
   * it. A delivery of the index running in this process may have read it before the caller's
   * change: the caller then gets the one that follows it.
   */
  deliver(indexId: string): Promise<DeliveryOutcome> {
    const queued = this.next.get(indexId);
    if (queued) return queued;
    const delivery = (this.running.get(indexId) ?? Promise.resolve()).then(() => {
      this.next.delete(indexId);
      const attempt = this.attempt(indexId).finally(() => {
        if (this.running.get(indexId) === attempt) this.running.delete(indexId);
      });
      this.running.set(indexId, attempt);
      return attempt;
    });
    this.next.set(indexId, delivery);
    return delivery;
  }

  /** Delivers the indexes that are due, a batch at a time; returns how many were delivered. */
  async deliverDue(stopping: () => boolean = () => false): Promise<number> {
    let delivered = 0;
    for (;;) {
      let progress = 0;
      for (const indexId of await repository.dueIndexIds(this.db, DUE_BATCH)) {
        if (stopping()) return delivered;
        if ((await this.deliver(indexId)) === 'delivered') progress += 1;
      }
      delivered += progress;
      // Indexes that failed again or are being delivered elsewhere wait for a later pass.
      if (progress === 0) return delivered;
    }
  }

  /** The background worker of this process: delivers what is due every `intervalMs`. */
  startWorker(logError: (error: unknown) => void, intervalMs = POLL_INTERVAL_MS): Poller {
    return startPoller(
      async (stopping) => {
        await this.deliverDue(stopping);
      },
      intervalMs,
      logError,
    );
  }

  /** One try, never rejecting: its failure is recorded with the time of the next try, and reported. */
  private async attempt(indexId: string): Promise<DeliveryOutcome> {
    let failure: SearchDeliveryFailed | undefined;
    try {
      const claimed = await this.db.$transaction(
        async (tx) => {
          const claim = await repository.claimDelivery(tx, indexId);
          if (!claim) return false;
          try {
            await repository.completeDelivery(tx, indexId, await this.send(tx, indexId));
          } catch (error) {
            // Recorded in the same transaction, under the lock. When PostgreSQL itself failed, the
            // transaction is lost with the record, and the delivery is due again at the next pass.
            const attempts = claim.attempts + 1;
            const retryInMs = retryDelayMs(attempts, this.schedule);
            await repository.recordFailure(tx, indexId, retryInMs, reasonOf(error)).catch(() => {
              throw error;
            });
            failure = new SearchDeliveryFailed(indexId, attempts, retryInMs, { cause: error });
          }
          return true;
        },
        { timeout: DELIVERY_TIMEOUT_MS, maxWait: 10_000 },
      );
      if (failure) this.onFailure(failure);
      return failure ? 'failed' : claimed ? 'delivered' : 'skipped';
    } catch (error) {
      this.onFailure(error);
      return 'failed';
    }
  }

  /**
   * Sends the engine what changed since the version it holds, as stored now; returns the version
   * it then holds (null: the index is deleted, and so is its copy). A change of the definition or
   * a clear rebuilds the copy from every document; otherwise the documents deleted since go first,
   * then those written since.
   */
  private async send(tx: Tx, indexId: string): Promise<number | null> {
    const row = await indexes.findIndexById(tx, indexId);
    if (!row) {
      await this.engine.indexDeleted({ id: indexId });
      return null;
    }
    const since = row.processedVersion;
    if (since >= row.version) return row.version;
    const definition = resolveDefinition(row);
    if (row.rebuildVersion > since) {
      await this.engine.definitionChanged(definition, tx);
      return row.version;
    }
    const deleted = await indexes.readDeletions(tx, indexId, since);
    if (deleted.length > 0) await this.engine.documentsDeleted(definition, deleted);
    let written = 0;
    for (let afterId: string | undefined; ;) {
      const chunk = await indexes.readDocuments(tx, indexId, { afterId, sinceVersion: since, limit: SEND_CHUNK });
      const documents = chunk
        .map((stored) => mapStoredDocument(stored.data, row, row.seenFieldTypes))
        .filter((document): document is IndexedDocument => document !== null);
      // A change without documents (merchandising rules) still checks that the copy exists and fits.
      if (documents.length > 0 || (written === 0 && deleted.length === 0 && chunk.length < SEND_CHUNK)) {
        await this.engine.documentsWritten(definition, documents, tx);
      }
      written += documents.length;
      if (chunk.length < SEND_CHUNK) return row.version;
      afterId = chunk.at(-1)!.id;
    }
  }
}

const reasonOf = (error: unknown) => (error instanceof Error ? error.message : String(error));
