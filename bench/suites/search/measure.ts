/**
 * Measuring in this process: calls made in a loop, interleaved like a load run, and the memory held
 * by what a build returns.
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import type { LoadResult, LoadSettings } from '../../lib/load';

const collectGarbage = (() => {
  setFlagsFromString('--expose-gc');
  return runInNewContext('gc') as () => void;
})();

export const seconds = (ms: number) => (ms / 1000).toFixed(1);
export const integer = new Intl.NumberFormat('en-US', { maximumFractionDigits: 0 });

export const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
};

/**
 * Calls made in a loop in this process, one at a time, measured like a load run: each warmed up,
 * then interleaved rounds (round r starts at call r) so that outside load hits every case alike.
 */
export async function measureInProcess(calls: (() => unknown)[], load: LoadSettings): Promise<LoadResult[]> {
  for (const call of calls) {
    for (const deadline = Date.now() + load.warmupSeconds * 1000; Date.now() < deadline;) await call();
  }
  const runs = calls.map(() => ({ latencies: [] as number[], seconds: 0, cpuMicros: 0, rounds: [] as number[] }));
  const roundMs = (load.durationSeconds / load.rounds) * 1000;
  for (let round = 0; round < load.rounds; round++) {
    for (let offset = 0; offset < calls.length; offset++) {
      const index = (round + offset) % calls.length;
      const run = runs[index]!;
      const done = run.latencies.length;
      const cpuBefore = process.cpuUsage();
      const start = performance.now();
      for (const deadline = start + roundMs; performance.now() < deadline;) {
        const t = performance.now();
        await calls[index]!();
        run.latencies.push(performance.now() - t);
      }
      const elapsed = (performance.now() - start) / 1000;
      const cpu = process.cpuUsage(cpuBefore);
      run.seconds += elapsed;
      run.cpuMicros += cpu.user + cpu.system;
      run.rounds.push((run.latencies.length - done) / elapsed);
    }
  }
  return runs.map(({ latencies, seconds, cpuMicros, rounds }) => {
    latencies.sort((a, b) => a - b);
    const at = (p: number) => latencies[Math.min(latencies.length - 1, Math.floor(latencies.length * p))]!;
    return {
      requestsPerSecond: latencies.length / seconds,
      roundRequestsPerSecond: rounds,
      p50Ms: at(0.5),
      p99Ms: at(0.99),
      completed: latencies.length,
      cpuMicrosPerRequest: cpuMicros / latencies.length,
      failed: 0,
    };
  });
}

/** Bytes held now: the JS heap plus array buffers (typed arrays keep their contents outside the heap), after a full collection. */
function held(): { heap: number; rss: number } {
  collectGarbage();
  const usage = process.memoryUsage();
  return { heap: usage.heapUsed + usage.arrayBuffers, rss: usage.rss };
}

/** Memory held by what `build` returns, after full collections before and after. */
export async function heapOf<T>(build: () => Promise<T>): Promise<{ value: T; heapMb: number; rssMb: number }> {
  const before = held();
  const value = await build();
  const after = held();
  return { value, heapMb: (after.heap - before.heap) / 2 ** 20, rssMb: (after.rss - before.rss) / 2 ** 20 };
}
