/**
 * Backups of the embedded mode's DATA_DIR: finding the server `npm start` runs there, and
 * restoring a backup into a data directory whose service is stopped.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { EMBEDDED_DATABASE, embeddedLayout, startEmbeddedPostgres } from '../embedded-postgres';
import { BackupError } from './backup-file';
import { masterKeyFingerprint } from './backup-header';
import { restoreDatabase, verifyBackup, type BackupContents } from './restore-backup';

/** Whether a process with this id exists (EPERM: it does, under another user). */
function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * The PostgreSQL server running on DATA_DIR, from the `postmaster.pid` it keeps in its cluster
 * (line 1 its process id, line 4 its port), or undefined when none runs.
 */
export function runningEmbeddedServer(dataDir: string): { pid: number; port: number } | undefined {
  const pidFile = join(embeddedLayout(dataDir).clusterDir, 'postmaster.pid');
  if (!existsSync(pidFile)) return undefined;
  const lines = readFileSync(pidFile, 'utf8').split('\n');
  const pid = Number.parseInt(lines[0] ?? '', 10);
  const port = Number.parseInt(lines[3] ?? '', 10);
  return Number.isInteger(pid) && pid > 0 && isAlive(pid) ? { pid, port } : undefined;
}

/**
 * The URL of the database `npm start` serves from DATA_DIR: the port of its running server and
 * the password the embedded mode keeps beside the cluster.
 */
export function embeddedDatabaseUrl(dataDir: string): string {
  const server = runningEmbeddedServer(dataDir);
  if (!server || !Number.isInteger(server.port)) {
    throw new BackupError(
      `No PostgreSQL server runs on ${dataDir}: start the service (npm start) with this DATA_DIR, ` +
        'or set DATABASE_URL to back up another database.',
    );
  }
  const password = readFileSync(embeddedLayout(dataDir).passwordFile, 'utf8').trim();
  return `postgresql://postgres:${encodeURIComponent(password)}@127.0.0.1:${server.port}/${EMBEDDED_DATABASE}`;
}

export interface DataDirRestore extends BackupContents {
  dataDir: string;
  /** What the operator should know: the master key, directories made reachable. */
  warnings: string[];
}

/** The database a restore fills before it takes the place of the service's database. */
const RESTORING_DATABASE = `${EMBEDDED_DATABASE}_restoring`;

function databaseUrl(serverUrl: string, database: string): string {
  const url = new URL(serverUrl);
  url.pathname = `/${database}`;
  return url.toString();
}

function masterKeyWarning(contents: BackupContents, masterKey: string | undefined, dataDir: string): string[] {
  const expected = contents.header.masterKeyFingerprint;
  if (expected === null || (masterKey !== undefined && masterKeyFingerprint(masterKey) === expected)) return [];
  const situation = masterKey === undefined ? `${dataDir} has no master key yet` : 'the master key here is another one';
  return [
    `The backup was taken with another master key (fingerprint ${expected}) and ${situation}: the OAuth signing ` +
      'keys it holds are sealed under that key, so the service will sign with a new key, and the old master key no ' +
      'longer opens the admin API. To keep them, put the master key of the backed-up service in master.key of ' +
      'DATA_DIR (or set MASTER_KEY) before starting the service.',
  ];
}

/**
 * Restores `file` into DATA_DIR's embedded database. The whole file is checked first, and nothing
 * is touched when it fails, when a server runs on DATA_DIR, or when DATA_DIR already holds a
 * database and `force` is not set. The backup is loaded into a database of its own, which takes
 * the place of the service's database only once complete.
 */
export async function restoreDataDir(
  dataDir: string,
  file: string,
  options: { force?: boolean; masterKey?: string } = {},
): Promise<DataDirRestore> {
  const checked = await verifyBackup(file);
  const running = runningEmbeddedServer(dataDir);
  if (running) {
    throw new BackupError(
      `The service's PostgreSQL (process ${running.pid}) is running on ${dataDir}: stop the service before restoring.`,
    );
  }
  const { clusterDir } = embeddedLayout(dataDir);
  if (existsSync(clusterDir) && readdirSync(clusterDir).length > 0 && !options.force) {
    throw new BackupError(
      `${dataDir} already holds a database (${clusterDir}): restore replaces it only with --force.`,
    );
  }
  const server = await startEmbeddedPostgres(dataDir, { database: 'postgres' });
  try {
    const admin = new pg.Client({ connectionString: server.url });
    await admin.connect();
    try {
      await admin.query(`DROP DATABASE IF EXISTS ${RESTORING_DATABASE} WITH (FORCE)`);
      await admin.query(`CREATE DATABASE ${RESTORING_DATABASE}`);
      let contents: BackupContents;
      try {
        contents = await restoreDatabase(databaseUrl(server.url, RESTORING_DATABASE), file, checked.header);
      } catch (error) {
        await admin.query(`DROP DATABASE IF EXISTS ${RESTORING_DATABASE} WITH (FORCE)`).catch(() => undefined);
        throw error;
      }
      await admin.query(`DROP DATABASE IF EXISTS ${EMBEDDED_DATABASE} WITH (FORCE)`);
      await admin.query(`ALTER DATABASE ${RESTORING_DATABASE} RENAME TO ${EMBEDDED_DATABASE}`);
      return {
        ...contents,
        dataDir,
        warnings: [...server.notices, ...masterKeyWarning(contents, options.masterKey, dataDir)],
      };
    } finally {
      await admin.end().catch(() => undefined);
    }
  } finally {
    await server.stop();
  }
}
