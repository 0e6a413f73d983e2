import { fork, type ChildProcess } from 'node:child_process';
import type { RunMessage, ResultMessage } from './load-runner';
import type { Teardown } from './teardown';

/** One HTTP request, repeated for the whole run. */
export interface LoadRequest {
  url: string;
  method?: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  headers?: Record<string, string>;
  body?: string;
  /** Concurrent connections for this request; default the run's `connections`. */
  connections?: number;
}

export interface LoadSettings {
  connections: number;
  /** Seconds of load per case whose results are thrown away (JIT, pools, caches). */
  warmupSeconds: number;
  /** Seconds measured per case, in total over all rounds. */
  durationSeconds: number;
  /** The measured time of each case is split into this many rounds, interleaved across cases. */
  rounds: number;
}

export const DEFAULT_LOAD: LoadSettings = { connections: 50, warmupSeconds: 2, durationSeconds: 8, rounds: 4 };

/**
 * The defaults, overridable for a quick look or a longer run: BENCH_CONNECTIONS, BENCH_WARMUP,
 * BENCH_DURATION, BENCH_ROUNDS. Invalid values are ignored.
 */
export function loadSettingsFromEnv(env: Record<string, string | undefined> = process.env): LoadSettings {
  const number = (name: string, fallback: number, min: number) => {
    const raw = env[name];
    const value = Number(raw);
    return raw !== undefined && raw !== '' && Number.isFinite(value) && value >= min ? value : fallback;
  };
  return {
    connections: Math.floor(number('BENCH_CONNECTIONS', DEFAULT_LOAD.connections, 1)),
    warmupSeconds: number('BENCH_WARMUP', DEFAULT_LOAD.warmupSeconds, 0),
    durationSeconds: number('BENCH_DURATION', DEFAULT_LOAD.durationSeconds, 1),
    rounds: Math.floor(number('BENCH_ROUNDS', DEFAULT_LOAD.rounds, 1)),
  };
}

export interface LoadResult {
  /** Completed requests over measured wall time, all rounds together. */
  requestsPerSecond: number;
  /** req/s of each round: their spread shows how noisy the machine was. */
  roundRequestsPerSecond: number[];
  /** Median over rounds of each round's latency percentile. */
  p50Ms: number;
  p99Ms: number;
  completed: number;
  /** CPU time (user + system, all threads) of the benchmark process per completed request. */
  cpuMicrosPerRequest: number;
  /** Responses outside 2xx, connection errors and timeouts: any of these makes the row suspect. */
  failed: number;
}

type RunnerResult = NonNullable<ResultMessage['result']>;

/**
 * autocannon in a child process (load-runner.ts). The servers under test run in this process and
 * nothing else does while a run is in flight, so this process's CPU time over a run is what the
 * servers spent on it: a per-request cost that, unlike req/s, hardly moves when other work on the
 * machine competes for the cores.
 */
export class LoadGenerator {
  private nextId = 0;
  private readonly pending = new Map<
    number,
    { resolve: (result: RunnerResult) => void; reject: (error: Error) => void }
  >();

  private constructor(private readonly child: ChildProcess) {
    child.on('message', (message: ResultMessage) => {
      const waiter = this.pending.get(message.id);
      if (!waiter) return;
      this.pending.delete(message.id);
      if (message.result) waiter.resolve(message.result);
      else waiter.reject(new Error(`load generator: ${message.error}`));
    });
    child.on('exit', (code, signal) => {
      for (const waiter of this.pending.values()) waiter.reject(new Error(`load generator exited (${signal ?? code})`));
      this.pending.clear();
    });
  }

  /** Forks the runner (with this process's execArgv, i.e. tsx's loader) and registers its shutdown. */
  static start(teardown: Teardown): LoadGenerator {
    const child = fork(new URL('./load-runner.ts', import.meta.url), [], {
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    teardown.add('stop the load generator', () => {
      if (child.connected) child.disconnect();
    });
    return new LoadGenerator(child);
  }

  /** One autocannon run of `seconds` against `request`. */
  run(request: LoadRequest, connections: number, seconds: number): Promise<RunnerResult> {
    const id = this.nextId++;
    const message: RunMessage = {
      id,
      options: {
        url: request.url,
        method: request.method ?? 'GET',
        headers: request.headers,
        body: request.body,
        connections,
        duration: seconds,
      },
    };
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.child.send(message, (error) => {
        if (!error) return;
        this.pending.delete(id);
        reject(error);
      });
    });
  }
}

/** Callbacks into measureAll, for figures taken beside the load (an event-loop delay histogram, say). */
export interface MeasureHooks {
  /** Called once the warm-up is over, just before the first measured round. */
  beforeMeasuring?: () => void | Promise<void>;
  /**
   * CPU time so far, in µs, of the process running the server under test, when that is not this
   * process (a server in a child process); by default this process's own.
   */
  cpuMicros?: () => Promise<number>;
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
};

/**
 * Warms every case up, then measures them in interleaved rounds (round r starts at case r, so no
 * case always follows the same neighbour): a burst of outside load then hits several cases a
 * little rather than one case a lot, which keeps same-run ratios comparable on a shared machine.
 * Results are in the order of `requests`.
 */
export async function measureAll(
  generator: LoadGenerator,
  requests: LoadRequest[],
  settings: LoadSettings,
  hooks: MeasureHooks = {},
): Promise<LoadResult[]> {
  if (settings.warmupSeconds > 0) {
    for (const request of requests)
      await generator.run(request, request.connections ?? settings.connections, settings.warmupSeconds);
  }
  await hooks.beforeMeasuring?.();
  const cpuMicros =
    hooks.cpuMicros ??
    (async () => {
      const { user, system } = process.cpuUsage();
      return user + system;
    });
  const roundSeconds = settings.durationSeconds / settings.rounds;
  const rounds = requests.map(() => [] as { run: RunnerResult; cpuMicros: number }[]);
  for (let round = 0; round < settings.rounds; round++) {
    for (let offset = 0; offset < requests.length; offset++) {
      const index = (round + offset) % requests.length;
      const cpuBefore = await cpuMicros();
      const run = await generator.run(
        requests[index]!,
        requests[index]!.connections ?? settings.connections,
        roundSeconds,
      );
      rounds[index]!.push({ run, cpuMicros: (await cpuMicros()) - cpuBefore });
    }
  }
  return rounds.map((runs) => {
    const completed = runs.reduce((sum, { run }) => sum + run.completed, 0);
    const seconds = runs.reduce((sum, { run }) => sum + run.duration, 0);
    const cpuMicros = runs.reduce((sum, { cpuMicros }) => sum + cpuMicros, 0);
    return {
      requestsPerSecond: completed / seconds,
      roundRequestsPerSecond: runs.map(({ run }) => run.completed / run.duration),
      p50Ms: median(runs.map(({ run }) => run.p50)),
      p99Ms: median(runs.map(({ run }) => run.p99)),
      completed,
      cpuMicrosPerRequest: completed > 0 ? cpuMicros / completed : Number.NaN,
      failed: runs.reduce((sum, { run }) => sum + run.non2xx + run.errors + run.timeouts, 0),
    };
  });
}
