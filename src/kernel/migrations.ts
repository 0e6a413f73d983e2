import { createHash, randomUUID } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import pg from 'pg';

export const MIGRATIONS_DIR = resolve(import.meta.dirname, '../../prisma/migrations');

/** Arbitrary constant shared by every process of this service: the migration advisory lock. */
const MIGRATION_LOCK_ID = 72_707_369;

export interface Migration {
  name: string;
  sql: string;
  checksum: string;
}

/** Migrations in Prisma's folder format: `<timestamp>_<name>/migration.sql`, applied in name order. */
export function readMigrations(dir = MIGRATIONS_DIR): Migration[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true })
    .filter((entry) => entry.isDirectory() && existsSync(join(dir, entry.name, 'migration.sql')))
    .map((entry) => entry.name)
    .sort()
    .map((name) => {
      const sql = readFileSync(join(dir, name, 'migration.sql'), 'utf8');
      return { name, sql, checksum: createHash('sha256').update(sql).digest('hex') };
    });
}

// The bookkeeping table exactly as `prisma migrate deploy` creates it, so Prisma's own tooling
// recognises what this runner applied.
const CREATE_BOOKKEEPING = `
CREATE TABLE IF NOT EXISTS "_prisma_migrations" (
    "id"                    VARCHAR(36) PRIMARY KEY NOT NULL,
    "checksum"              VARCHAR(64) NOT NULL,
    "finished_at"           TIMESTAMPTZ,
    "migration_name"        VARCHAR(255) NOT NULL,
    "logs"                  TEXT,
    "rolled_back_at"        TIMESTAMPTZ,
    "started_at"            TIMESTAMPTZ NOT NULL DEFAULT now(),
    "applied_steps_count"   INTEGER NOT NULL DEFAULT 0
)`;

export interface MigrationReport {
  applied: string[];
  warnings: string[];
}

/**
 * Applies pending migrations, each in its own transaction, so that several processes starting
 * together apply each migration exactly once. Every transaction takes the migration lock as a
 * transaction-level advisory lock and looks again at what is applied: the lock holds through a
 * transaction pooler too (PgBouncer in transaction mode hands a session-level lock's session to
 * other clients). `only` limits them to the named ones: a restore recreates the schema a backup
 * was taken on, whatever came since.
 */
export async function applyMigrations(
  databaseUrl: string,
  dir = MIGRATIONS_DIR,
  options: { only?: ReadonlySet<string> } = {},
): Promise<MigrationReport> {
  const migrations = readMigrations(dir).filter((migration) => options.only?.has(migration.name) ?? true);
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  const report: MigrationReport = { applied: [], warnings: [] };
  const locked = async <T>(work: () => Promise<T>): Promise<T> => {
    await client.query('BEGIN');
    try {
      await client.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK_ID]);
      const result = await work();
      await client.query('COMMIT');
      return result;
    } catch (error) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw error;
    }
  };
  try {
    const rows = await locked(async () => {
      await client.query(CREATE_BOOKKEEPING);
      return (
        await client.query<{ migration_name: string; checksum: string; finished_at: Date | null }>(
          'SELECT migration_name, checksum, finished_at FROM "_prisma_migrations" WHERE rolled_back_at IS NULL',
        )
      ).rows;
    });
    const failed = rows.find((row) => row.finished_at === null);
    if (failed) {
      throw new Error(
        `Migration ${failed.migration_name} failed earlier and is not rolled back; resolve it before starting`,
      );
    }
    const done = new Map(rows.map((row) => [row.migration_name, row.checksum]));
    for (const migration of migrations) {
      const appliedChecksum = done.get(migration.name);
      if (appliedChecksum !== undefined) {
        if (appliedChecksum !== migration.checksum) {
          report.warnings.push(`Migration ${migration.name} was modified after it was applied`);
        }
        continue;
      }
      const applied = await locked(async () => {
        // Another process may have applied it while this one waited for the lock.
        const { rowCount } = await client.query(
          'SELECT 1 FROM "_prisma_migrations" WHERE migration_name = $1 AND rolled_back_at IS NULL',
          [migration.name],
        );
        if (rowCount) return false;
        const startedAt = new Date();
        try {
          await client.query(migration.sql);
        } catch (error) {
          throw new Error(`Migration ${migration.name} failed: ${(error as Error).message}`, { cause: error });
        }
        await client.query(
          `INSERT INTO "_prisma_migrations" (id, checksum, finished_at, migration_name, started_at, applied_steps_count)
           VALUES ($1, $2, now(), $3, $4, 1)`,
          [randomUUID(), migration.checksum, migration.name, startedAt],
        );
        return true;
      });
      if (applied) report.applied.push(migration.name);
    }
    return report;
  } finally {
    await client.end();
  }
}
