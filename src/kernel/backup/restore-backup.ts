/**
 * Bringing a backup back into a database: the migrations the backup lists recreate its schema
 * (with the service's own migration code), then one transaction empties the tables, loads each with
 * `COPY ... FROM STDIN` and sets the sequences. It commits only once the whole file has passed its
 * checksum, so a file that turns out damaged halfway leaves nothing behind.
 */
import { once } from 'node:events';
import { finished } from 'node:stream/promises';
import pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import { applyMigrations, MIGRATIONS_DIR, readMigrations } from '../migrations';
import { BackupError, readBackupFile } from './backup-file';
import { backupHeaderSchema, qualifiedName, quoteIdentifier, type BackupHeader } from './backup-header';

type Table = BackupHeader['tables'][number];

interface BackupVisitor {
  tableStart?(table: Table): Promise<void> | void;
  rows?(chunk: Buffer): Promise<void>;
  tableEnd?(table: Table, rows: number): Promise<void>;
}

export interface BackupContents {
  header: BackupHeader;
  tables: number;
  rows: number;
}

function parseJson(payload: Buffer): unknown {
  try {
    return JSON.parse(payload.toString('utf8'));
  } catch {
    return undefined;
  }
}

/**
 * Reads a backup from end to end, checking that its frames follow its header (each table's
 * frames in order, each table's row count as recorded) and handing the rows to `visitor`.
 */
async function walkBackup(file: string, visitor: BackupVisitor = {}): Promise<BackupContents> {
  const corrupt = (why: string) => new BackupError(`${file} is corrupt: ${why}`);
  let header: BackupHeader | undefined;
  let current: { table: Table; rows: number } | undefined;
  let done = 0;
  let rows = 0;
  for await (const frame of readBackupFile(file)) {
    if (!header) {
      const parsed = backupHeaderSchema.safeParse(frame.kind === 'header' ? parseJson(frame.payload) : undefined);
      if (!parsed.success) throw corrupt('it does not start with a valid header');
      header = parsed.data;
    } else if (frame.kind === 'table') {
      const table = header.tables[done];
      const named = parseJson(frame.payload) as { schema?: unknown; name?: unknown } | undefined;
      if (current || !table || named?.schema !== table.schema || named?.name !== table.name) {
        throw corrupt(`unexpected table ${JSON.stringify(named)}`);
      }
      current = { table, rows: 0 };
      await visitor.tableStart?.(table);
    } else if (frame.kind === 'rows' && current) {
      for (let at = frame.payload.indexOf(10); at !== -1; at = frame.payload.indexOf(10, at + 1)) current.rows += 1;
      await visitor.rows?.(frame.payload);
    } else if (frame.kind === 'table-end' && current) {
      const recorded = (parseJson(frame.payload) as { rows?: unknown } | undefined)?.rows;
      if (recorded !== current.rows) {
        throw corrupt(`${qualifiedName(current.table)} holds ${current.rows} rows, its end says ${recorded}`);
      }
      await visitor.tableEnd?.(current.table, current.rows);
      rows += current.rows;
      done += 1;
      current = undefined;
    } else {
      throw corrupt(`unexpected ${frame.kind} frame`);
    }
  }
  if (!header || current || done !== header.tables.length) throw corrupt('tables are missing');
  return { header, tables: done, rows };
}

/** Reads and checks a whole backup without touching any database; returns what it holds. */
export function verifyBackup(file: string): Promise<BackupContents> {
  return walkBackup(file);
}

/** The header of a backup (read without checking the rest of the file). */
export async function readBackupHeader(file: string): Promise<BackupHeader> {
  for await (const frame of readBackupFile(file)) {
    const parsed = backupHeaderSchema.safeParse(frame.kind === 'header' ? parseJson(frame.payload) : undefined);
    if (!parsed.success) break;
    return parsed.data;
  }
  throw new BackupError(`${file} is corrupt: it does not start with a valid header`);
}

/** Refuses a backup that needs migrations this version of the service does not have. */
export function checkMigrationsKnown(header: BackupHeader): void {
  const known = new Set(readMigrations().map((migration) => migration.name));
  const unknown = header.migrations.filter((migration) => !known.has(migration.name)).map((m) => m.name);
  if (unknown.length > 0) {
    throw new BackupError(
      `The backup was taken by a newer version of the service: its migrations ${unknown.join(', ')} are not here. ` +
        'Restore it with that version.',
    );
  }
}

/** A COPY FROM stream into one table, with back pressure and its failure surfaced on every call. */
function copyInto(client: pg.Client, table: Table) {
  const columns = table.columns.map(quoteIdentifier).join(', ');
  const stream = client.query(copyFrom(`COPY ${qualifiedName(table)} (${columns}) FROM STDIN`));
  const failed = new Promise<never>((_, reject) => stream.on('error', reject));
  failed.catch(() => undefined);
  return {
    async write(chunk: Buffer) {
      if (!stream.write(chunk)) await Promise.race([once(stream, 'drain'), failed]);
    },
    async end(): Promise<number> {
      stream.end();
      await Promise.race([finished(stream), failed]);
      return stream.rowCount;
    },
  };
}

/**
 * Restores a checked backup into `databaseUrl`, a database holding nothing of the service yet:
 * applies the backup's migrations, then loads its rows and sequence positions in one transaction.
 */
export async function restoreDatabase(
  databaseUrl: string,
  file: string,
  header: BackupHeader,
): Promise<BackupContents> {
  checkMigrationsKnown(header);
  await applyMigrations(databaseUrl, MIGRATIONS_DIR, { only: new Set(header.migrations.map((m) => m.name)) });
  const client = new pg.Client({ connectionString: databaseUrl, application_name: 'commerce-restore' });
  await client.connect();
  try {
    await client.query('SET statement_timeout = 0');
    await client.query('BEGIN');
    // The rows go in as they were: no triggers fire (the ledger's append-only guard, notifications)
    // and no foreign key is checked one row at a time; they held in the snapshot the backup is.
    await client.query('SET LOCAL session_replication_role = replica');
    // Rows the migrations inserted are in the backup as well, as they were then.
    if (header.tables.length > 0) await client.query(`TRUNCATE ${header.tables.map(qualifiedName).join(', ')}`);
    // As pg_restore does, indexes that no constraint needs are built once the rows are in, not
    // maintained row by row (a quarter less time for a ledger of a million rows).
    const { rows: indexes } = await client.query<{ name: string; definition: string }>(
      `SELECT i.indexrelid::regclass::text AS name, pg_get_indexdef(i.indexrelid) AS definition
         FROM pg_index i
        WHERE i.indrelid = ANY($1::regclass[])
          AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conindid = i.indexrelid)`,
      [header.tables.map(qualifiedName)],
    );
    for (const index of indexes) await client.query(`DROP INDEX ${index.name}`);
    let copy: ReturnType<typeof copyInto> | undefined;
    const contents = await walkBackup(file, {
      tableStart: (table) => {
        copy = copyInto(client, table);
      },
      rows: (chunk) => copy!.write(chunk),
      tableEnd: async (table, rows) => {
        const loaded = await copy!.end();
        if (loaded !== rows) throw new BackupError(`${qualifiedName(table)}: loaded ${loaded} rows of ${rows}`);
      },
    });
    if (contents.header.snapshot !== header.snapshot) throw new BackupError(`${file} changed while it was restored`);
    for (const index of indexes) await client.query(index.definition);
    for (const sequence of header.sequences) {
      await client.query('SELECT setval($1::regclass, $2::bigint, $3)', [
        qualifiedName(sequence),
        sequence.lastValue,
        sequence.isCalled,
      ]);
    }
    await client.query('COMMIT');
    // The planner's statistics are not part of a backup.
    await client.query('ANALYZE');
    return contents;
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  } finally {
    await client.end().catch(() => undefined);
  }
}
