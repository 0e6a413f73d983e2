/**
 * A real PgBouncer (Debian's `pgbouncer` package) in transaction pooling mode in front of the test
 * PostgreSQL, as a growing shop puts one in front of its database. `.ci/run` installs it; elsewhere
 * its tests skip, saying so, when the binary is absent.
 */
import { spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../../src/kernel/embedded-postgres';

export const PGBOUNCER = '/usr/sbin/pgbouncer';

/** Whether PgBouncer is installed; in CI its absence is a failure, not a skip. */
export function pgBouncerAvailable(): boolean {
  if (existsSync(PGBOUNCER)) return true;
  if (process.env.CI) throw new Error(`${PGBOUNCER} is missing: .ci/run installs Debian's pgbouncer`);
  console.warn(
    `\n*** PgBouncer is not installed (${PGBOUNCER}): the tests through a transaction pooler are SKIPPED. ` +
      'Install it with `apt-get install pgbouncer` to run them. ***\n',
  );
  return false;
}

export interface PgBouncer {
  /** `databaseUrl` with its host and port replaced by PgBouncer's. */
  pooled(databaseUrl: string): string;
  /** PgBouncer's log so far. */
  log(): string;
  /** Stops PgBouncer and removes its directory (call it from the test file's `afterAll`). */
  stop(): void;
}

/**
 * Starts PgBouncer on a free loopback port, forwarding every database name to the server of
 * `serverUrl` (logging in as its user) in transaction pooling mode.
 */
export async function startPgBouncer(serverUrl: string): Promise<PgBouncer> {
  const server = new URL(serverUrl);
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'pgbouncer-'));
  // PgBouncer refuses to run as root: it switches to the user the embedded PostgreSQL runs as.
  chmodSync(dir, 0o777);
  const config = join(dir, 'pgbouncer.ini');
  writeFileSync(
    config,
    [
      '[databases]',
      `* = host=${server.hostname} port=${server.port} user=${decodeURIComponent(server.username)} ` +
        `password=${decodeURIComponent(server.password)}`,
      '[pgbouncer]',
      'listen_addr = 127.0.0.1',
      `listen_port = ${port}`,
      'unix_socket_dir =',
      'auth_type = any',
      'pool_mode = transaction',
      'max_client_conn = 2000',
      'default_pool_size = 20',
      `logfile = ${join(dir, 'pgbouncer.log')}`,
      `pidfile = ${join(dir, 'pgbouncer.pid')}`,
      '',
    ].join('\n'),
  );
  chmodSync(config, 0o644);
  const asRoot = process.getuid?.() === 0;
  const child = spawn(PGBOUNCER, [...(asRoot ? ['-u', 'postgres'] : []), config], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk) => (output += chunk));
  child.stderr.on('data', (chunk) => (output += chunk));
  const log = () => {
    const file = join(dir, 'pgbouncer.log');
    return output + (existsSync(file) ? readFileSync(file, 'utf8') : '');
  };
  const stop = () => {
    child.kill('SIGINT');
    rmSync(dir, { recursive: true, force: true });
  };
  // A test process that ends without its afterAll leaves no PgBouncer behind either.
  process.once('exit', () => child.kill('SIGKILL'));
  // Listening once its log says so.
  for (let waited = 0; !/listening on 127\.0\.0\.1:\d+/.test(log()); waited += 50) {
    if (child.exitCode !== null || waited > 10_000) throw new Error(`PgBouncer did not start:\n${log()}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return {
    pooled: (databaseUrl) => {
      const url = new URL(databaseUrl);
      url.hostname = '127.0.0.1';
      url.port = String(port);
      return url.toString();
    },
    log,
    stop,
  };
}
