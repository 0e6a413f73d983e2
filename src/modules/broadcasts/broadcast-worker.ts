import type { BroadcastService } from './broadcasts.service';

/** How often each process looks for deliveries that are due. */
export const POLL_INTERVAL_MS = 250;

/**
 * Delivers channel broadcasts in the background. Every process of a deployment runs one; claims
 * with `FOR UPDATE SKIP LOCKED` keep them from sending the same delivery at the same time.
 */
export function startBroadcastWorker(service: BroadcastService, logError: (error: unknown) => void, intervalMs = POLL_INTERVAL_MS) {
  let running: Promise<void> = Promise.resolve();
  let busy = false;
  let stopped = false;
  const pass = async () => {
    busy = true;
    try {
      while (!stopped && (await service.deliverDue()) > 0);
    } catch (error) {
      logError(error);
    } finally {
      busy = false;
    }
  };
  const timer = setInterval(() => {
    if (!busy) running = pass();
  }, intervalMs);
  timer.unref();
  return {
    /** Stops polling and waits for the pass in progress. */
    async stop() {
      stopped = true;
      clearInterval(timer);
      await running;
    },
  };
}
