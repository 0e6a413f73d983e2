import { describe, expect, it } from 'vitest';
import { backoffDelay } from '../../src/kernel/database-notifications';

describe('backoffDelay', () => {
  it('doubles the pause after each failed attempt, up to the maximum', () => {
    const backoff = { initialMs: 50, maxMs: 5_000 };
    expect([0, 1, 2, 3, 6, 7, 100].map((failures) => backoffDelay(backoff, failures))).toEqual([
      50, 100, 200, 400, 3_200, 5_000, 5_000,
    ]);
  });
});
