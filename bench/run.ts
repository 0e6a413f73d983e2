/**
 * `npm run bench`: starts a throwaway embedded PostgreSQL with seeded data, runs every suite
 * against servers on 127.0.0.1 and prints one table of req/s, latency, CPU per request and ratios
 * against baselines measured in the same run. Timings are reported, never judged: this exits 0
 * whatever the numbers, and non-zero only when the benchmark itself could not run.
 */
import { availableParallelism } from 'node:os';
import { startV8Flags } from '../scripts/start-command';
import { startFixture } from './lib/fixture';
import { LoadGenerator, loadSettingsFromEnv, measureAll, type LoadRequest, type MeasureHooks } from './lib/load';
import { renderTable, type Measurement } from './lib/report';
import type { Suite } from './lib/suite';
import { collectGarbage } from './lib/gc';
import { Teardown } from './lib/teardown';
import { httpOverheadSuite } from './suites/http-overhead';
import { edgeSuite } from './suites/edge';
import { searchScaleSuite, searchSuite } from './suites/search';
import { reservationsSuite } from './suites/reservations';
import { hostileSuite } from './suites/hostile';
import { startSuite } from './suites/start';
import { stockSuite } from './suites/stock';
import { tracingSuite } from './suites/tracing';

/** Every suite, in the order its rows appear; later benchmarks add theirs here. */
const allSuites: Suite[] = [
  httpOverheadSuite,
  edgeSuite,
  searchSuite,
  searchScaleSuite,
  stockSuite,
  reservationsSuite,
  startSuite,
  hostileSuite,
  tracingSuite,
];

/** BENCH_SUITES (comma-separated, matched against the start of a suite's name, case-insensitive) runs only those. */
const wanted = (process.env.BENCH_SUITES ?? '')
  .split(',')
  .map((name) => name.trim().toLowerCase())
  .filter(Boolean);
const suites =
  wanted.length === 0
    ? allSuites
    : allSuites.filter((suite) => wanted.some((name) => suite.name.toLowerCase().startsWith(name)));

// Progress goes to stderr so that stdout carries only the report.
const log = (line: string) => console.error(`bench: ${line}`);

/**
 * The servers run in this process: it must size its heap as `npm start` does, or the figures
 * would describe another garbage collector's work (`npm run bench` passes the same flags).
 */
function requireStartV8Flags(): string[] {
  const flags = startV8Flags();
  const missing = flags.filter((flag) => !process.execArgv.includes(flag));
  if (missing.length > 0)
    throw new Error(
      `run the benchmark with the V8 flags of npm start (npm run bench does): missing ${missing.join(' ')}`,
    );
  return flags;
}

async function main(): Promise<void> {
  const v8Flags = requireStartV8Flags();
  const teardown = new Teardown();
  let interrupted = false;
  // The fixture also removes its directory on 'exit', in case the process ends before this teardown.
  const interrupt = (signal: NodeJS.Signals) => {
    if (interrupted) return;
    interrupted = true;
    log(`${signal}: cleaning up`);
    void teardown.run().finally(() => process.exit(130));
  };
  process.on('SIGINT', interrupt);
  process.on('SIGTERM', interrupt);

  try {
    const load = loadSettingsFromEnv();
    const fixture = await startFixture(teardown, { log });
    const generator = LoadGenerator.start(teardown);
    const measure = (requests: LoadRequest[], hooks?: MeasureHooks) => {
      const seconds = requests.length * (load.warmupSeconds + load.durationSeconds);
      log(
        `measuring ${requests.length} cases: ${load.warmupSeconds} s warm-up each, then ${load.rounds} interleaved rounds (~${Math.round(seconds)} s)`,
      );
      return measureAll(generator, requests, load, hooks);
    };

    const measurements: Measurement[] = [];
    for (const suite of suites) {
      log(`suite: ${suite.name}`);
      // What a suite starts (servers, indexes of a million documents) ends with it: every suite
      // measures in a process holding only the fixture and its own servers, not the heap of the
      // suites before it.
      const suiteTeardown = new Teardown();
      teardown.add(`tear down ${suite.name}`, () => suiteTeardown.run());
      try {
        measurements.push(...(await suite.run({ fixture, teardown: suiteTeardown, load, measure, log })));
      } finally {
        await suiteTeardown.run();
        collectGarbage();
      }
    }

    const notes = [
      ...suites.flatMap((suite) => suite.notes),
      `req/s: completed requests over the measured time of all rounds; rounds min–max shows how steady that was. p50/p99: median over the rounds.`,
      `CPU µs/req: CPU time (user + system, all threads) of the process running the servers, per completed request; the load generator and PostgreSQL run in other processes. It is the steadier figure when the machine is shared.`,
      'Ratios compare throughput measured in this run; they are reported, not judged.',
    ];
    console.log('');
    console.log(
      `${load.connections} connections; per case ${load.warmupSeconds} s warm-up + ${load.durationSeconds} s measured in ${load.rounds} interleaved rounds; ` +
        `autocannon in a child process; node ${process.version} ${v8Flags.join(' ')} (as npm start); ${availableParallelism()} CPUs shared by servers, load generator and PostgreSQL.`,
    );
    console.log('');
    console.log(renderTable(measurements));
    console.log('');
    for (const note of notes) console.log(`* ${note}`);
  } finally {
    await teardown.run();
  }
}

// No process.exit on success: the teardown closes every handle, so the process ends by itself.
// On failure (teardown has run by then) exit explicitly with a failing code.
main().catch((error: unknown) => {
  console.error('bench failed:', error);
  process.exit(1);
});
