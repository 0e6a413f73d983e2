/**
 * An online, consistent backup of the service's database, taken the way pg_dump takes one: every
 * table read with `COPY ... TO STDOUT` inside one REPEATABLE READ READ ONLY transaction, so the
 * file holds the database as it was at one instant while the service keeps writing.
 *
 * Logical rather than physical: the embedded PostgreSQL package ships no pg_dump or
 * pg_basebackup (and no npm package ships a PostgreSQL 18 one), and a base backup through
 * pg_backup_start/pg_backup_stop would have to copy the data directory and the WAL it needs from
 * this process, which must then run as the server's own user on the server's machine. COPY runs
 * over the ordinary connection, works against any PostgreSQL the service can use, survives major
 * version upgrades (a restore replays the service's own migrations), and the result is checked
 * and restored by the same code that the tests exercise.
 */
import pg from 'pg';
import { to as copyTo } from 'pg-copy-streams';
import { BackupError, BackupFileWriter } from './backup-file';
import { masterKeyFingerprint, qualifiedName, quoteIdentifier, type BackupHeader } from './backup-header';

export interface BackupSummary {
  file: string;
  /** `pg_current_snapshot()` of the backup's transaction. */
  snapshot: string;
  tables: number;
  rows: number;
  /** Size of the compressed file. */
  bytes: number;
  seconds: number;
}

/** User schemas: not PostgreSQL's own, and not an extension's objects. */
const USER_RELATIONS = `
  n.nspname NOT IN ('pg_catalog', 'information_schema') AND n.nspname NOT LIKE 'pg\\_%'
  AND NOT EXISTS (SELECT 1 FROM pg_depend d
                   WHERE d.classid = 'pg_class'::regclass AND d.objid = c.oid AND d.deptype = 'e')`;

/** Tables with storage (partitions included, partitioned parents not) and their stored columns. */
const LIST_TABLES = `
  SELECT n.nspname AS schema, c.relname AS name,
         array_agg(a.attname::text ORDER BY a.attnum) AS columns
    FROM pg_class c
    JOIN pg_namespace n ON n.oid = c.relnamespace
    JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped AND a.attgenerated = ''
   WHERE c.relkind = 'r' AND c.relpersistence <> 't' AND ${USER_RELATIONS}
   GROUP BY n.nspname, c.relname
   ORDER BY n.nspname, c.relname`;

const LIST_SEQUENCES = `
  SELECT n.nspname AS schema, c.relname AS name
    FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
   WHERE c.relkind = 'S' AND ${USER_RELATIONS}
   ORDER BY n.nspname, c.relname`;

type Table = BackupHeader['tables'][number];

const sameTables = (a: Table[], b: Table[]) => JSON.stringify(a) === JSON.stringify(b);

/** Times the backup's transaction is begun again when a migration changed the tables meanwhile. */
const MAX_ATTEMPTS = 5;

/**
 * Begins the backup's transaction with every table locked (ACCESS SHARE, as pg_dump takes them)
 * before the snapshot: LOCK TABLE takes none, so a migration altering a table has either committed
 * before the snapshot or waits until the backup ends. One that added, dropped or altered a table
 * between the first listing and the locks shows in the listing under the snapshot, and the
 * transaction is begun again. All in one transaction, so it holds through a transaction pooler.
 */
async function beginSnapshot(client: pg.Client): Promise<Table[]> {
  for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt += 1) {
    const expected = (await client.query<Table>(LIST_TABLES)).rows;
    await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
    let tables: Table[] | undefined;
    try {
      await client.query('SET LOCAL statement_timeout = 0');
      await client.query('SET LOCAL lock_timeout = 0');
      await client.query('SET LOCAL idle_in_transaction_session_timeout = 0');
      if (expected.length > 0) {
        await client.query(`LOCK TABLE ${expected.map(qualifiedName).join(', ')} IN ACCESS SHARE MODE`);
      }
      tables = (await client.query<Table>(LIST_TABLES)).rows;
    } catch (error) {
      // undefined_table: a table was dropped between the listing and the locks.
      if ((error as { code?: string }).code !== '42P01') {
        await client.query('ROLLBACK').catch(() => undefined);
        throw error;
      }
    }
    if (tables && sameTables(expected, tables)) return tables;
    await client.query('ROLLBACK');
  }
  throw new BackupError('The tables kept changing while the backup began: is a migration running? Try again later.');
}

/** What the backup's snapshot holds besides the rows: migrations, sequences, the point in time. */
async function readHeader(client: pg.Client, tables: Table[], masterKey: string | undefined): Promise<BackupHeader> {
  if (!tables.some((table) => table.name === '_prisma_migrations')) {
    throw new BackupError('The database has no _prisma_migrations table: it is not a database of this service');
  }
  const [facts] = (
    await client.query<{ snapshot: string; server_version: string }>(
      "SELECT pg_current_snapshot()::text AS snapshot, current_setting('server_version') AS server_version",
    )
  ).rows;
  const migrations = (
    await client.query<{ name: string; checksum: string }>(
      `SELECT migration_name AS name, checksum FROM "_prisma_migrations"
        WHERE finished_at IS NOT NULL AND rolled_back_at IS NULL ORDER BY migration_name`,
    )
  ).rows;
  const sequences: BackupHeader['sequences'] = [];
  for (const sequence of (await client.query<{ schema: string; name: string }>(LIST_SEQUENCES)).rows) {
    // Not transactional: read after the snapshot, a position is at or past every value the
    // snapshot's rows use, as with pg_dump.
    const [position] = (
      await client.query<{ last_value: string; is_called: boolean }>(
        `SELECT last_value::text, is_called FROM ${qualifiedName(sequence)}`,
      )
    ).rows;
    sequences.push({ ...sequence, lastValue: position!.last_value, isCalled: position!.is_called });
  }
  return {
    createdAt: new Date().toISOString(),
    serverVersion: facts!.server_version,
    snapshot: facts!.snapshot,
    migrations,
    tables,
    sequences,
    masterKeyFingerprint: masterKey ? masterKeyFingerprint(masterKey) : null,
  };
}

/**
 * Writes a backup of the database at `databaseUrl` to `file` while the service runs. `masterKey`
 * (when known) is fingerprinted into the file so a restore can tell whether the target's master
 * key opens the OAuth signing keys; the key itself is never written.
 */
export async function takeBackup(
  databaseUrl: string,
  file: string,
  options: { masterKey?: string } = {},
): Promise<BackupSummary> {
  const started = performance.now();
  // Opened first: an unwritable destination fails before anything else happens.
  const writer = await BackupFileWriter.create(file);
  const client = new pg.Client({ connectionString: databaseUrl, application_name: 'commerce-backup' });
  try {
    await client.connect();
    const header = await readHeader(client, await beginSnapshot(client), options.masterKey);
    await writer.json('header', header);
    let rows = 0;
    for (const table of header.tables) {
      await writer.json('table', { schema: table.schema, name: table.name });
      const columns = table.columns.map(quoteIdentifier).join(', ');
      const copy = client.query(copyTo(`COPY ${qualifiedName(table)} (${columns}) TO STDOUT`));
      // Counted here: the stream ends before PostgreSQL's count arrives. In COPY's text format
      // every row ends with a newline, and newlines inside values are escaped.
      let tableRows = 0;
      for await (const chunk of copy as AsyncIterable<Buffer>) {
        for (let at = chunk.indexOf(10); at !== -1; at = chunk.indexOf(10, at + 1)) tableRows += 1;
        await writer.rows(chunk);
      }
      await writer.json('table-end', { rows: tableRows });
      rows += tableRows;
    }
    await client.query('COMMIT');
    const bytes = await writer.finish();
    return {
      file: writer.path,
      snapshot: header.snapshot,
      tables: header.tables.length,
      rows,
      bytes,
      seconds: Number(((performance.now() - started) / 1000).toFixed(3)),
    };
  } catch (error) {
    await writer.abandon();
    throw error;
  } finally {
    await client.end().catch(() => undefined);
  }
}
