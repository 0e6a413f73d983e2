import { createHash } from 'node:crypto';
import { mkdtempSync, mkdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import { applyMigrations, readMigrations } from '../../src/kernel/migrations';
import { sql } from '../helpers/db';

async function emptyDatabase(): Promise<string> {
  const adminUrl = inject('adminDatabaseUrl');
  const name = `empty_${Math.random().toString(36).slice(2, 10)}`;
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  await client.query(`CREATE DATABASE ${name}`);
  await client.end();
  return adminUrl.replace(/\/[^/]+$/, `/${name}`);
}

describe('migrations', () => {
  it('applies every migration once and records it as prisma migrate deploy does', async () => {
    const url = await emptyDatabase();
    const first = await applyMigrations(url);
    const migrations = readMigrations();
    expect(first.applied).toEqual(migrations.map((m) => m.name));
    const rows = await sql<{
      migration_name: string;
      checksum: string;
      finished_at: Date | null;
      applied_steps_count: number;
    }>(
      url,
      'SELECT migration_name, checksum, finished_at, applied_steps_count FROM _prisma_migrations ORDER BY migration_name',
    );
    expect(rows.map((r) => r.migration_name)).toEqual(migrations.map((m) => m.name));
    for (const [index, row] of rows.entries()) {
      expect(row.checksum).toBe(createHash('sha256').update(migrations[index]!.sql).digest('hex'));
      expect(row.finished_at).toBeInstanceOf(Date);
      expect(row.applied_steps_count).toBe(1);
    }
    const second = await applyMigrations(url);
    expect(second.applied).toEqual([]);
    expect(await sql(url, 'SELECT 1 FROM _prisma_migrations')).toHaveLength(rows.length);
  });

  it('applies each migration exactly once when several processes start together', async () => {
    const url = await emptyDatabase();
    const reports = await Promise.all(Array.from({ length: 6 }, () => applyMigrations(url)));
    const applied = reports.flatMap((report) => report.applied);
    expect(applied.sort()).toEqual(
      readMigrations()
        .map((m) => m.name)
        .sort(),
    );
    const rows = await sql(url, 'SELECT migration_name FROM _prisma_migrations');
    expect(rows).toHaveLength(readMigrations().length);
  });

  it('rolls a failing migration back whole and records nothing for it', async () => {
    const url = await emptyDatabase();
    const dir = mkdtempSync(join(tmpdir(), 'migrations-'));
    mkdirSync(join(dir, '20200101000000_good'));
    writeFileSync(join(dir, '20200101000000_good', 'migration.sql'), 'CREATE TABLE good (id int);');
    mkdirSync(join(dir, '20200102000000_bad'));
    writeFileSync(
      join(dir, '20200102000000_bad', 'migration.sql'),
      'CREATE TABLE half (id int);\nSELECT * FROM missing_table;',
    );
    await expect(applyMigrations(url, dir)).rejects.toThrow(/20200102000000_bad failed/);
    const tables = await sql<{ table_name: string }>(
      url,
      "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' ORDER BY table_name",
    );
    expect(tables.map((t) => t.table_name)).toEqual(['_prisma_migrations', 'good']);
    const recorded = await sql<{ migration_name: string }>(url, 'SELECT migration_name FROM _prisma_migrations');
    expect(recorded.map((r) => r.migration_name)).toEqual(['20200101000000_good']);
  });

  it('warns when an applied migration was edited afterwards', async () => {
    const url = await emptyDatabase();
    const dir = mkdtempSync(join(tmpdir(), 'migrations-'));
    mkdirSync(join(dir, '20200101000000_one'));
    writeFileSync(join(dir, '20200101000000_one', 'migration.sql'), 'CREATE TABLE one (id int);');
    await applyMigrations(url, dir);
    writeFileSync(join(dir, '20200101000000_one', 'migration.sql'), 'CREATE TABLE one (id bigint);');
    const report = await applyMigrations(url, dir);
    expect(report.applied).toEqual([]);
    expect(report.warnings).toEqual(['Migration 20200101000000_one was modified after it was applied']);
  });
});
