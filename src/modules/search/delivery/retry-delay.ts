/** When a failed delivery is tried again. */

export interface RetrySchedule {
  /** The wait after the first failure; each further failure doubles it. */
  backoffMs: number;
  /** The longest wait. */
  maxBackoffMs: number;
}

/**
 * The wait before the next try after `attempts` failures in a row: exponential, capped, and drawn
 * between half and all of it, so that indexes that failed together are not all tried together again.
 */
export function retryDelayMs(attempts: number, schedule: RetrySchedule, random: () => number = Math.random): number {
  const exponent = Math.min(Math.max(attempts, 1) - 1, 30);
  const ceiling = Math.min(schedule.backoffMs * 2 ** exponent, schedule.maxBackoffMs);
  return Math.round(ceiling / 2 + (random() * ceiling) / 2);
}
