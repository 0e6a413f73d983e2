import { deleteExpiredIdempotencyKeys } from '../../kernel/idempotency';
import { startPoller } from '../../kernel/poller';
import { deleteEndedWindows } from '../../kernel/rate-limit';
import type { Module, Services } from '../context';
import * as oauth from '../oauth/oauth.repository';

/** How often each process deletes what has expired. */
export const HOUSEKEEPING_INTERVAL_MS = 10 * 60_000;

/**
 * Deletes what has expired, in one pass: authorization sessions, codes and refresh tokens, signing
 * keys past their retirement, idempotency keys past their 24 hours, rate limit windows that ended.
 * Every statement deletes by expiry alone, so passes of several processes at once delete each row
 * once and wait on nothing.
 */
export async function deleteExpired({ db }: Pick<Services, 'db'>) {
  const authorization = await oauth.deleteExpiredAuthorizationState(db);
  const signingKeys = (await oauth.deleteRetiredSigningKeys(db)).count;
  const idempotencyKeys = await deleteExpiredIdempotencyKeys(db);
  const rateLimitWindows = await deleteEndedWindows(db);
  return { ...authorization, signingKeys, idempotencyKeys, rateLimitWindows };
}

/** Housekeeping: a background pass in every process that deletes expired rows. */
export const housekeepingModule: Module = {
  name: 'housekeeping',
  workers: (services, logError) => [
    startPoller(async () => void (await deleteExpired(services)), HOUSEKEEPING_INTERVAL_MS, logError),
  ],
};
