/**
 * How the committed changes of an index reach the search engine. The embedded engine of every
 * process reads them from PostgreSQL by itself (before a search whose index is newer than its
 * copy), so the writing process only brings its own copy up at once. Typesense is one shared copy
 * that must be sent each change: those go through a queue in PostgreSQL (`DeliveryQueue`).
 */
import type { DbOrTx, Db } from '../../../kernel/db';
import * as repository from '../search.repository';

export interface ChangeDelivery {
  /** In the transaction of a change, after the index's version moved: remembers that it must be delivered. */
  recordChange(tx: DbOrTx, indexId: string): Promise<unknown>;
  /**
   * After the change committed. `applyInProcess` tells this process's engine about the change
   * directly, for a delivery that needs nothing else.
   */
  afterCommit(indexId: string, version: number, applyInProcess: () => Promise<void>): Promise<void>;
}

/** The embedded engine's: nothing to queue, since every process catches up from PostgreSQL. */
export class InProcessDelivery implements ChangeDelivery {
  constructor(private readonly db: Db) {}

  async recordChange() {}

  /** Applies the change in this process's engine, then records that it is processed. */
  async afterCommit(indexId: string, version: number, applyInProcess: () => Promise<void>) {
    await applyInProcess();
    await repository.markProcessed(this.db, indexId, version);
  }
}
