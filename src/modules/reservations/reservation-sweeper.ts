import { startPoller, type Poller } from '../../kernel/poller';
import type { ReservationService } from './reservations.service';

/** How long each process waits after a sweep before it looks for expired reservations again. */
export const SWEEP_INTERVAL_MS = 1_000;

/** Reservations one transaction of a sweep releases. */
const BATCH = 100;

/**
 * Records the release of expired reservations in the background, one sweep at a time. Every
 * process of a deployment runs one; `releaseExpired` records each release exactly once whichever
 * process gets there first. Expired reservations stop counting at `expires_at` whether or not
 * this ran yet.
 */
export function startReservationSweeper(
  service: Pick<ReservationService, 'releaseExpired'>,
  logError: (error: unknown) => void,
  intervalMs = SWEEP_INTERVAL_MS,
): Poller {
  return startPoller(
    async (stopping) => {
      // A full batch means more may be waiting: go on until a batch comes back short (as one with a
      // failed release does). Each failed release is reported on its own; the others of its batch go on.
      while (!stopping() && (await service.releaseExpired(BATCH, logError)) === BATCH);
    },
    intervalMs,
    logError,
  );
}
