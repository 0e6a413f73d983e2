import { deleteExpiredIdempotencyKeys } from '../../kernel/idempotency';
import { startPoller } from '../../kernel/poller';
import { deleteEndedWindows } from '../../kernel/rate-limit';
import { deleteFinishedDeliveries } from '../broadcasts';
import type { Module, Services } from '../context';
import { deleteExpiredOAuthState } from '../oauth';
import { deleteReleasedReservations } from '../reservations';
import { deleteExpiredSearchAnalytics } from '../search';

/** How often each process deletes what has expired. */
export const HOUSEKEEPING_INTERVAL_MS = 10 * 60_000;

/**
 * Deletes what has expired, in one pass: authorization sessions, codes and refresh tokens,
 * client_credentials grants whose tokens have expired, signing keys past their retirement,
 * idempotency keys past their 24 hours, rate limit windows that ended, sign-in throttling counts
 * 12 hours after their last failure or lock, search clicks and events past
 * SEARCH_EVENTS_RETENTION_DAYS (counted first) and search analytics past
 * SEARCH_ANALYTICS_RETENTION_DAYS, webhook deliveries done BROADCAST_DELIVERY_RETENTION_DAYS ago,
 * and reservations released RESERVATION_RETENTION_DAYS ago with their items. Every statement
 * deletes by expiry alone, so passes of several processes at once delete each row once; tables
 * that may hold many expired rows are deleted from in batches, and a pass stops between batches
 * when the process is `stopping`.
 */
export async function deleteExpired(
  { db, config }: Pick<Services, 'db' | 'config'>,
  stopping: () => boolean = () => false,
) {
  const oauth = await deleteExpiredOAuthState(db, { stopping });
  const idempotencyKeys = await deleteExpiredIdempotencyKeys(db, { stopping });
  const rateLimitWindows = await deleteEndedWindows(db);
  const searchAnalytics = await deleteExpiredSearchAnalytics(
    db,
    { analyticsDays: config.searchAnalyticsRetentionDays, eventsDays: config.searchEventsRetentionDays },
    { stopping },
  );
  const webhookDeliveries = await deleteFinishedDeliveries(db, config.broadcasts.retentionDays, { stopping });
  const reservations = await deleteReleasedReservations(db, config.reservationRetentionDays, { stopping });
  return { ...oauth, idempotencyKeys, rateLimitWindows, ...searchAnalytics, webhookDeliveries, reservations };
}

/** Housekeeping: a background pass in every process that deletes expired rows. */
export const housekeepingModule: Module = {
  name: 'housekeeping',
  workers: (services, logError) => [
    startPoller(async (stopping) => void (await deleteExpired(services, stopping)), HOUSEKEEPING_INTERVAL_MS, logError),
  ],
};
