import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { freePort } from '../../../src/kernel/embedded-postgres';
import type { Suite } from '../../lib/suite';

const root = resolve(import.meta.dirname, '../../..');
const WARM_STARTS = 5;

/** Runs `npm start` on `dataDir` and resolves with the seconds until `/healthz` answers 200. */
async function timeToHealthy(dataDir: string): Promise<{ seconds: number; child: ChildProcess }> {
  const port = await freePort();
  const startedAt = performance.now();
  const child = spawn('npm', ['start'], {
    cwd: root,
    env: { ...process.env, DATA_DIR: dataDir, PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'warn' },
    stdio: 'ignore',
  });
  for (;;) {
    if (child.exitCode !== null) throw new Error(`npm start exited with ${child.exitCode}`);
    const healthy = await fetch(`http://127.0.0.1:${port}/healthz`).then(
      (response) => response.ok,
      () => false,
    );
    if (healthy) return { seconds: (performance.now() - startedAt) / 1000, child };
    await new Promise((resolveWait) => setTimeout(resolveWait, 20));
  }
}

async function stop(child: ChildProcess): Promise<void> {
  const exited = new Promise((resolveExit) => child.once('exit', resolveExit));
  child.kill('SIGTERM');
  await exited;
}

const notes: string[] = [];

/**
 * How long `npm start` takes until `/healthz` answers: once on an empty data directory (initdb and
 * every migration), then warm starts on the same directory with nothing changed. Reported under
 * the table: a start is not a request rate.
 */
export const startSuite: Suite = {
  name: 'Start',
  notes,
  async run({ teardown, log }) {
    const dataDir = mkdtempSync(join(tmpdir(), 'commerce-bench-start-'));
    teardown.add('remove the start data directory', () => rmSync(dataDir, { recursive: true, force: true }));
    const first = await timeToHealthy(dataDir);
    await stop(first.child);
    const warm: number[] = [];
    for (let index = 0; index < WARM_STARTS; index += 1) {
      const start = await timeToHealthy(dataDir);
      warm.push(start.seconds);
      await stop(start.child);
    }
    warm.sort((a, b) => a - b);
    const median = warm[Math.floor(warm.length / 2)]!;
    log(`first start ${first.seconds.toFixed(2)} s, warm starts ${warm.map((s) => s.toFixed(2)).join(', ')} s`);
    notes.push(
      `npm start until /healthz answers: first start on an empty data directory (initdb, every migration) ` +
        `${first.seconds.toFixed(2)} s; warm start (nothing changed) ${median.toFixed(2)} s, the median of ` +
        `${WARM_STARTS} (${warm[0]!.toFixed(2)}–${warm.at(-1)!.toFixed(2)} s).`,
    );
    return [];
  },
};
