import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { freePort } from '../../../src/kernel/embedded-postgres';
import type { Suite } from '../../lib/suite';

const root = resolve(import.meta.dirname, '../../..');
const WARM_STARTS = 5;

/**
 * A copy of the working tree as a clone has it after `npm install`: the files git tracks or would
 * track, the installed packages (linked, not copied) and what install's `prepare` generates (the
 * Prisma client), but no compiled service and no data directory.
 */
function freshCheckout(dir: string): void {
  const files = execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard', '-z'], {
    cwd: root,
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  })
    .split('\0')
    .filter(Boolean);
  // A file deleted from the working tree but still in git's index is listed, and skipped.
  for (const file of files.filter((name) => existsSync(join(root, name)))) {
    mkdirSync(dirname(join(dir, file)), { recursive: true });
    cpSync(join(root, file), join(dir, file));
  }
  symlinkSync(join(root, 'node_modules'), join(dir, 'node_modules'), 'dir');
  execFileSync(process.execPath, ['scripts/generate.mjs', '--service'], { cwd: dir, stdio: 'inherit' });
}

/** Runs `npm start` in `cwd` on `dataDir` and resolves with the seconds until `/healthz` answers 200. */
async function timeToHealthy(cwd: string, dataDir: string): Promise<{ seconds: number; child: ChildProcess }> {
  const port = await freePort();
  const startedAt = performance.now();
  const child = spawn('npm', ['start'], {
    cwd,
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
 * How long `npm start` takes until `/healthz` answers: the first start of a fresh checkout (the
 * service compiled, PostgreSQL initialised, every migration applied), then warm starts of the same
 * checkout on the same data directory with nothing changed. Reported under the table: a start is
 * not a request rate.
 */
export const startSuite: Suite = {
  name: 'Start',
  notes,
  async run({ teardown, log }) {
    const checkout = mkdtempSync(join(tmpdir(), 'commerce-bench-checkout-'));
    const dataDir = mkdtempSync(join(tmpdir(), 'commerce-bench-start-'));
    teardown.add('remove the start checkout and data directory', () => {
      rmSync(checkout, { recursive: true, force: true });
      rmSync(dataDir, { recursive: true, force: true });
    });
    freshCheckout(checkout);
    const first = await timeToHealthy(checkout, dataDir);
    await stop(first.child);
    const warm: number[] = [];
    for (let index = 0; index < WARM_STARTS; index += 1) {
      const start = await timeToHealthy(checkout, dataDir);
      warm.push(start.seconds);
      await stop(start.child);
    }
    warm.sort((a, b) => a - b);
    const median = warm[Math.floor(warm.length / 2)]!;
    log(`first start ${first.seconds.toFixed(2)} s, warm starts ${warm.map((s) => s.toFixed(2)).join(', ')} s`);
    notes.push(
      `npm start until /healthz answers: first start of a fresh checkout after npm install (compiling the ` +
        `service, initdb, every migration) ${first.seconds.toFixed(2)} s; warm start (nothing changed) ` +
        `${median.toFixed(2)} s, the median of ${WARM_STARTS} (${warm[0]!.toFixed(2)}–${warm.at(-1)!.toFixed(2)} s).`,
    );
    return [];
  },
};
