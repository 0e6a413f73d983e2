/**
 * The verbs of the REST inventory writes, which name lines rather than holders: `addLines`,
 * `correctLines` and `removeLines`. Like every verb, each takes the stock locks of its pairs, changes
 * the lines, checks single positions and records the ledger, in that order, in the caller's
 * transaction; what a line becomes is the caller's rule (the correction's entries).
 */
import type { Tx } from '../../../kernel/db';
import { uuidv7 } from '../../../kernel/ids';
import * as ledger from '../repository/ledger';
import type { LineChangeRecord } from '../repository/ledger';
import * as lineRepository from '../repository/lines';
import type { LineAddition } from '../repository/lines';
import * as locks from '../repository/locks';
import type { InventoryLine } from '../stock.types';
import { checkSinglePosition } from './positions';
import type { StockChange } from './stock-change';

/** A change of a line's quantity, as its ledger row records it. */
const lineChange = (
  line: Pick<InventoryLine, 'productId' | 'warehouseId' | 'positionId'>,
  lineId: string,
  delta: number,
) => ({
  id: uuidv7(),
  lineId,
  productId: line.productId,
  warehouseId: line.warehouseId,
  positionId: line.positionId,
  delta,
});

/**
 * Adds the units of each addition to the line of its identity (made when there is none), in order,
 * one ledger row per addition; `field` names an addition in a single-position refusal. Returns the
 * id of each addition's line.
 */
export async function addLines(
  tx: Tx,
  tenantId: string,
  additions: (LineAddition & { field: string })[],
  change: StockChange,
): Promise<string[]> {
  await locks.lockStockLevels(tx, tenantId, additions);
  const lineIds = await lineRepository.addToLines(tx, tenantId, additions);
  await checkSinglePosition(tx, tenantId, additions);
  const changes = additions.map((addition, index) => lineChange(addition, lineIds[index]!, addition.quantity));
  await ledger.recordMutations(tx, tenantId, change, changes);
  return lineIds;
}

/** What a correction did to one line: the line it ended in and by how much that line's units changed. */
export interface LineCorrection {
  line: Pick<InventoryLine, 'productId' | 'warehouseId' | 'positionId'>;
  lineId: string;
  delta: number;
}

/**
 * Corrects lines: takes the stock locks of `lines` (as the caller found them), then lets `correct`
 * change them (it reads them again under the locks) and records one ledger row per correction it
 * returns. `moved` are the lines whose position the correction changed, checked for single positions.
 */
export async function correctLines<T>(
  tx: Tx,
  tenantId: string,
  lines: InventoryLine[],
  change: StockChange,
  correct: () => Promise<{ corrections: LineCorrection[]; moved: (InventoryLine & { field: string })[]; result: T }>,
): Promise<T> {
  await locks.lockStockLevels(tx, tenantId, lines);
  const { corrections, moved, result } = await correct();
  await checkSinglePosition(tx, tenantId, moved);
  const changes: LineChangeRecord[] = corrections.map(({ line, lineId, delta }) => lineChange(line, lineId, delta));
  await ledger.recordMutations(tx, tenantId, change, changes);
  return result;
}

/**
 * Removes whole lines (as the caller found them), one ledger row per line; `gone` is thrown for the
 * ids another write removed meanwhile (the transaction rolls back).
 */
export async function removeLines(
  tx: Tx,
  tenantId: string,
  lines: InventoryLine[],
  change: StockChange,
  gone: (ids: string[]) => Error,
): Promise<void> {
  await locks.lockStockLevels(tx, tenantId, lines);
  const ids = lines.map((line) => line.id);
  const removed = new Map((await lineRepository.deleteLines(tx, tenantId, ids)).map((line) => [line.id, line]));
  const missing = ids.filter((id) => !removed.has(id));
  if (missing.length > 0) throw gone(missing);
  const changes = ids.map((id) => {
    const line = removed.get(id)!;
    return lineChange(line, id, -line.quantity);
  });
  await ledger.recordMutations(tx, tenantId, change, changes);
}
