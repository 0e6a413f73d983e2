/**
 * Retention of search analytics. The raw clicks and events of a search are kept
 * SEARCH_EVENTS_RETENTION_DAYS after its hour; housekeeping then counts them into
 * `search_activity_counts` and `search_position_clicks` and deletes them, so the analytics answer
 * the same figures from the counts. The counts of searches, of their clicks and of their events are
 * kept SEARCH_ANALYTICS_RETENTION_DAYS after their hour, then deleted. A click or event of a search
 * already past the events retention is not stored at all (it would come after its search's rows
 * were counted).
 */
import { deleteInBatches } from '../../../kernel/batched-delete';
import type { Db } from '../../../kernel/db';
import * as repository from './analytics.repository';

const DAY_MS = 24 * 3_600_000;

/** Searches counted in an hour that starts before this time are past their retention. */
export const retentionCutoff = (retentionDays: number, now = Date.now()) => new Date(now - retentionDays * DAY_MS);

/** One rollup at a time in a deployment ("SRUP"): two at once could split one search's clicks between them. */
const ROLLUP_LOCK = 0x53525550;

/** Counts and deletes the clicks and events of one index and hour past `cutoff`; returns the rows deleted. */
const rollUpOneHour = (db: Db, cutoff: Date) =>
  db.$transaction(async (tx) => {
    await tx.$queryRaw`SELECT 1 AS locked FROM pg_advisory_xact_lock(${ROLLUP_LOCK}::int)`;
    return repository.rollUpActivity(tx, cutoff);
  });

/**
 * Counts the clicks and events of searches past the events retention and deletes their rows, an
 * index and hour at a time, then deletes the analytics of searches past the analytics retention, in
 * batches (each table after the one before it is done). Safe to run in several processes at once;
 * returns the rows deleted per table.
 */
export async function deleteExpiredSearchAnalytics(
  db: Db,
  retention: { analyticsDays: number; eventsDays: number },
  options: { stopping?: () => boolean; limit?: number } = {},
) {
  const stopping = options.stopping ?? (() => false);
  const eventsCutoff = retentionCutoff(Math.min(retention.eventsDays, retention.analyticsDays));
  let searchActivityRolledUp = 0;
  // Kept as long as their counts: deleted with them below, with nothing to count.
  for (; retention.eventsDays < retention.analyticsDays;) {
    const rows = await rollUpOneHour(db, eventsCutoff);
    searchActivityRolledUp += rows;
    if (rows === 0 || stopping()) break;
  }
  const cutoff = retentionCutoff(retention.analyticsDays);
  const searchClicks = await deleteInBatches((limit) => repository.deleteClicksBefore(db, cutoff, limit), options);
  const searchEvents = await deleteInBatches((limit) => repository.deleteEventsBefore(db, cutoff, limit), options);
  const searchActivityCounts = await deleteInBatches(
    (limit) => repository.deleteActivityCountsBefore(db, cutoff, limit),
    options,
  );
  const searchPositionClicks = await deleteInBatches(
    (limit) => repository.deletePositionClicksBefore(db, cutoff, limit),
    options,
  );
  const searchCounts = await deleteInBatches(
    (limit) => repository.deleteSearchCountsBefore(db, cutoff, limit),
    options,
  );
  return {
    searchCounts,
    searchClicks,
    searchEvents,
    searchActivityRolledUp,
    searchActivityCounts,
    searchPositionClicks,
  };
}
