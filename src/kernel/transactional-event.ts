/**
 * Something that happened inside a writer's transaction, heard inside that same transaction by the
 * modules that care: a module announces it without knowing who listens (as Vendure's services raise
 * events instead of calling other modules), so the module graph keeps one direction, and a
 * listener's writes commit or roll back with the writer's. Node's EventEmitter does not await its
 * listeners, and these must finish before the transaction commits: listeners run one after the
 * other, in the order they subscribed, and one that throws aborts the write.
 */
import type { Tx } from './db';

export type TransactionalListener<Payload> = (tx: Tx, payload: Payload) => Promise<void>;

export class TransactionalEvent<Payload> {
  private readonly listeners: TransactionalListener<Payload>[] = [];

  /** Adds a listener for the life of the process (modules subscribe once, when their services are built). */
  subscribe(listener: TransactionalListener<Payload>): void {
    this.listeners.push(listener);
  }

  /** Runs every listener in the writer's transaction, in subscription order. */
  async publish(tx: Tx, payload: Payload): Promise<void> {
    for (const listener of this.listeners) await listener(tx, payload);
  }
}
