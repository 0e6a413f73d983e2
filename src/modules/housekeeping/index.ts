import { deleteExpiredIdempotencyKeys } from '../../kernel/idempotency';
import { startPoller } from '../../kernel/poller';
import { deleteEndedWindows } from '../../kernel/rate-limit';
import type { Module, Services } from '../context';
import { deleteExpiredOAuthState } from '../oauth';
import { deleteExpiredSearchAnalytics } from '../search';

/** How often each process deletes what has expired. */
export const HOUSEKEEPING_INTERVAL_MS = 10 * 60_000;

/**
 * Deletes what has expired, in one pass: authorization sessions, codes and refresh tokens,
 * client_credentials grants whose tokens have expired, signing keys past their retirement,
 * idempotency keys past their 24 hours, rate limit windows that ended, sign-in throttling counts
 * 12 hours after their last failure or lock, and search analytics past
 * SEARCH_ANALYTICS_RETENTION_DAYS. Every statement deletes by expiry alone, so passes of several
 * processes at once delete each row once; tables that may hold many expired rows are deleted from
 * in batches, and a pass stops between batches when the process is `stopping`.
 */
export async function deleteExpired(
  { db, config }: Pick<Services, 'db' | 'config'>,
  stopping: () => boolean = () => false,
) {
  const oauth = await deleteExpiredOAuthState(db, { stopping });
  const idempotencyKeys = await deleteExpiredIdempotencyKeys(db, { stopping });
  const rateLimitWindows = await deleteEndedWindows(db);
  const searchAnalytics = await deleteExpiredSearchAnalytics(db, config.searchAnalyticsRetentionDays, { stopping });
  return { ...oauth, idempotencyKeys, rateLimitWindows, ...searchAnalytics };
}

/** Housekeeping: a background pass in every process that deletes expired rows. */
export const housekeepingModule: Module = {
  name: 'housekeeping',
  workers: (services, logError) => [
    startPoller(async (stopping) => void (await deleteExpired(services, stopping)), HOUSEKEEPING_INTERVAL_MS, logError),
  ],
};
