import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { startReservationSweeper } from '../../src/modules/reservations/reservation-sweeper';

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

/** A stand-in for the service whose calls finish only when the test says so. */
function slowService() {
  const pending: ((released: number) => void)[] = [];
  let calls = 0;
  let running = 0;
  let mostAtOnce = 0;
  return {
    releaseExpired: (limit = 100) => {
      calls += 1;
      running += 1;
      mostAtOnce = Math.max(mostAtOnce, running);
      return new Promise<number>((resolve) =>
        pending.push((released) => {
          running -= 1;
          resolve(Math.min(released, limit));
        }),
      );
    },
    /** Ends the oldest call, reporting `released` reservations. */
    finish: (released: number) => pending.shift()!(released),
    get calls() {
      return calls;
    },
    get mostAtOnce() {
      return mostAtOnce;
    },
  };
}

describe('startReservationSweeper', () => {
  it('runs one sweep at a time: ticks during a slow sweep neither overlap it nor queue up behind it', async () => {
    const service = slowService();
    const sweeper = startReservationSweeper(service, (error) => expect.fail(String(error)), 1_000);
    await vi.advanceTimersByTimeAsync(1_000);
    expect(service.calls).toBe(1);
    // Five intervals pass while the first sweep is still running.
    await vi.advanceTimersByTimeAsync(5_000);
    expect(service.calls).toBe(1);
    service.finish(0);
    await vi.advanceTimersByTimeAsync(999);
    expect(service.calls).toBe(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(service.calls).toBe(2);
    service.finish(0);
    const stopped = sweeper.stop();
    await vi.advanceTimersByTimeAsync(10_000);
    await stopped;
    expect(service.calls).toBe(2);
    expect(service.mostAtOnce).toBe(1);
  });

  it('goes on at once while batches come back full, and stop() waits for the sweep in progress', async () => {
    const service = slowService();
    const sweeper = startReservationSweeper(service, (error) => expect.fail(String(error)), 1_000);
    await vi.advanceTimersByTimeAsync(1_000);
    service.finish(100);
    await vi.advanceTimersByTimeAsync(0);
    expect(service.calls).toBe(2);
    let done = false;
    const stopped = sweeper.stop().then(() => (done = true));
    await vi.advanceTimersByTimeAsync(0);
    expect(done).toBe(false);
    service.finish(100);
    await stopped;
    expect(service.calls).toBe(2);
    expect(service.mostAtOnce).toBe(1);
  });

  it('logs a failed sweep and sweeps again after the interval', async () => {
    const errors: unknown[] = [];
    let calls = 0;
    const failing = {
      releaseExpired: async () => {
        calls += 1;
        throw new Error('database unavailable');
      },
    };
    const sweeper = startReservationSweeper(failing, (error) => errors.push(error), 1_000);
    await vi.advanceTimersByTimeAsync(2_000);
    await sweeper.stop();
    expect(calls).toBe(2);
    expect(errors).toHaveLength(2);
  });
});
