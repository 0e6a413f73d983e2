import { describe, expect, it } from 'vitest';
import { retryDelayMs } from '../../src/modules/search/delivery/retry-delay';

const schedule = { backoffMs: 1_000, maxBackoffMs: 60_000 };

describe('the wait before a failed delivery is tried again', () => {
  it('doubles with each failure in a row, from the backoff up to the cap', () => {
    const longest = (attempts: number) => retryDelayMs(attempts, schedule, () => 1);
    expect([1, 2, 3, 4, 5, 6, 7, 8].map(longest)).toEqual([1_000, 2_000, 4_000, 8_000, 16_000, 32_000, 60_000, 60_000]);
    expect(longest(10_000)).toBe(60_000);
  });

  it('is drawn between half and all of it, so indexes that failed together spread out', () => {
    expect(retryDelayMs(3, schedule, () => 0)).toBe(2_000);
    expect(retryDelayMs(3, schedule, () => 0.5)).toBe(3_000);
    for (let i = 0; i < 100; i++) {
      const delay = retryDelayMs(20, schedule);
      expect(delay).toBeGreaterThanOrEqual(30_000);
      expect(delay).toBeLessThanOrEqual(60_000);
    }
  });
});
