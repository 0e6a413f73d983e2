import { startPoller, type Poller } from '../../kernel/poller';
import type { BroadcastService } from './broadcasts.service';

/** How long each process waits after a pass before it looks for deliveries that are due again. */
export const POLL_INTERVAL_MS = 250;

/**
 * Delivers channel broadcasts in the background, one pass at a time. Every process of a
 * deployment runs one; claims with `FOR UPDATE SKIP LOCKED` keep them from sending the same
 * delivery at the same time.
 */
export function startBroadcastWorker(
  service: Pick<BroadcastService, 'deliverDue'>,
  logError: (error: unknown) => void,
  intervalMs = POLL_INTERVAL_MS,
): Poller {
  return startPoller(
    async (stopping) => {
      // A delivery that fails on its own is reported and the pass goes on with the others.
      while (!stopping() && (await service.deliverDue(logError)) > 0);
    },
    intervalMs,
    logError,
  );
}
