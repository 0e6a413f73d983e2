/** Rows one housekeeping statement deletes at most. */
export const DELETE_BATCH_SIZE = 5000;

/**
 * Deletes expired rows a batch at a time: runs `deleteBatch(limit)`, one statement of its own that
 * deletes at most `limit` rows, until a batch deletes fewer. A table that fell far behind is caught
 * up in short statements that each hold few row locks and write a bounded amount of WAL, instead of
 * one transaction that holds them all. Stops between batches when `stopping()` says so (the process
 * is shutting down). Returns the rows deleted.
 */
export async function deleteInBatches(
  deleteBatch: (limit: number) => Promise<number>,
  { limit = DELETE_BATCH_SIZE, stopping = () => false }: { limit?: number; stopping?: () => boolean } = {},
): Promise<number> {
  let total = 0;
  for (;;) {
    const deleted = await deleteBatch(limit);
    total += deleted;
    if (deleted < limit || stopping()) return total;
  }
}
