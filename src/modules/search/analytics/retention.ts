/**
 * Retention of search analytics: the counts of searches, their followed click URLs and their events
 * are kept SEARCH_ANALYTICS_RETENTION_DAYS after the hour of their search, then housekeeping deletes
 * them. A click or event of a search already past that is not stored at all.
 */
import { deleteInBatches } from '../../../kernel/batched-delete';
import type { Db } from '../../../kernel/db';
import * as repository from './analytics.repository';

const DAY_MS = 24 * 3_600_000;

/** Searches counted in an hour that starts before this time are past their retention. */
export const retentionCutoff = (retentionDays: number, now = Date.now()) => new Date(now - retentionDays * DAY_MS);

/**
 * Deletes the analytics of searches past their retention, in batches (each table after the one
 * before it is done). Safe to run in several processes at once; returns the rows deleted per table.
 */
export async function deleteExpiredSearchAnalytics(
  db: Db,
  retentionDays: number,
  options: { stopping?: () => boolean; limit?: number } = {},
) {
  const cutoff = retentionCutoff(retentionDays);
  const searchClicks = await deleteInBatches((limit) => repository.deleteClicksBefore(db, cutoff, limit), options);
  const searchEvents = await deleteInBatches((limit) => repository.deleteEventsBefore(db, cutoff, limit), options);
  const searchCounts = await deleteInBatches(
    (limit) => repository.deleteSearchCountsBefore(db, cutoff, limit),
    options,
  );
  return { searchCounts, searchClicks, searchEvents };
}
