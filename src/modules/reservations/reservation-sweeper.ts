import type { ReservationService } from './reservations.service';

/** How often each process looks for reservations whose time ran out. */
export const SWEEP_INTERVAL_MS = 1_000;

/**
 * Records the release of expired reservations in the background. Every process of a deployment
 * runs one; `releaseExpired` records each release exactly once whichever process gets there
 * first. Expired reservations stop counting at `expires_at` whether or not this ran yet.
 */
export function startReservationSweeper(service: ReservationService, logError: (error: unknown) => void, intervalMs = SWEEP_INTERVAL_MS) {
  let running: Promise<void> = Promise.resolve();
  let stopped = false;
  const sweep = async () => {
    try {
      // A full batch means more may be waiting: go on until a batch comes back short.
      while (!stopped && (await service.releaseExpired(100)) === 100);
    } catch (error) {
      logError(error);
    }
  };
  const timer = setInterval(() => {
    running = running.then(sweep);
  }, intervalMs);
  timer.unref();
  return {
    /** Stops sweeping and waits for a sweep in progress. */
    async stop() {
      stopped = true;
      clearInterval(timer);
      await running;
    },
  };
}
