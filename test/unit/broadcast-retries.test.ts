import { describe, expect, it } from 'vitest';
import { afterAttempt } from '../../src/modules/broadcasts/broadcasts.service';

describe('afterAttempt', () => {
  const config = { maxAttempts: 4, backoffMs: 1_000 };

  it('retries with the backoff doubled per attempt made, until the last attempt', () => {
    expect([1, 2, 3].map((attempts) => afterAttempt(config, attempts, false))).toEqual([
      { status: 'PENDING', retryInMs: 1_000 },
      { status: 'PENDING', retryInMs: 2_000 },
      { status: 'PENDING', retryInMs: 4_000 },
    ]);
    expect(afterAttempt(config, 4, false)).toEqual({ status: 'FAILING', retryInMs: null });
  });

  it('is done once the channel accepted, on any attempt', () => {
    for (const attempts of [1, 4])
      expect(afterAttempt(config, attempts, true)).toEqual({ status: 'PROCESSED', retryInMs: null });
  });
});
