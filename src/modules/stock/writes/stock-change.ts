import type { StockActor, StockMutationSource, StockReference } from '../stock.types';

/** Why stock changes, as its ledger rows record it: the cause, who, and the entities behind it. */
export interface StockChange {
  source: StockMutationSource;
  actor: StockActor;
  references: StockReference[];
}
