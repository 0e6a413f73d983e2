/**
 * What a restore brings back, beyond the end-to-end run of backup.test.ts: a database named by
 * DATABASE_URL is backed up too, and every value (text with tabs, newlines and backslashes, bytes,
 * JSON, arrays, nulls, timestamps), sequence position and index comes back exactly. A restore
 * replaces a DATA_DIR's database only with --force, and only once the backup has loaded completely.
 */
import { execFile } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { BackupFileWriter, readBackupFile } from '../../src/kernel/backup/backup-file';
import { qualifiedName } from '../../src/kernel/backup/backup-header';
import { restoreDataDir } from '../../src/kernel/backup/embedded-data-dir';
import { readBackupHeader, restoreDatabase } from '../../src/kernel/backup/restore-backup';
import { takeBackup } from '../../src/kernel/backup/take-backup';
import { startEmbeddedPostgres } from '../../src/kernel/embedded-postgres';
import { createTestDatabase, sql } from '../helpers/db';
import { root, temporaryDir } from '../helpers/service-process';

const execFileAsync = promisify(execFile);
const MASTER_KEY = 'mk_backup_restore_test_master_key_0123456789';

async function emptyDatabase(): Promise<string> {
  const template = await createTestDatabase();
  const name = `restored_${randomBytes(4).toString('hex')}`;
  const admin = template.replace(/\/[^/]+$/, '/postgres');
  await sql(admin, `CREATE DATABASE ${name}`);
  return template.replace(/\/[^/]+$/, `/${name}`);
}

/** Every table's rows (as text, sorted), every sequence's position and every index. */
async function contents(databaseUrl: string) {
  const tables = await sql<{ schema: string; name: string }>(
    databaseUrl,
    `SELECT table_schema AS schema, table_name AS name FROM information_schema.tables
      WHERE table_schema = 'public' AND table_type = 'BASE TABLE' ORDER BY 1, 2`,
  );
  const rows: Record<string, string[]> = {};
  for (const table of tables) {
    const query = `SELECT t::text AS row FROM ${qualifiedName(table)} t ORDER BY 1`;
    rows[table.name] = (await sql<{ row: string }>(databaseUrl, query)).map((row) => row.row);
  }
  const sequences = await sql(
    databaseUrl,
    "SELECT sequencename, last_value::text FROM pg_sequences WHERE schemaname = 'public' ORDER BY 1",
  );
  const indexes = await sql(databaseUrl, "SELECT indexdef FROM pg_indexes WHERE schemaname = 'public' ORDER BY 1");
  return { rows, sequences, indexes };
}

/** Rows of every kind of value COPY has to carry. */
async function insertAwkwardValues(databaseUrl: string, tenantName: string) {
  const tenantId = randomUUID();
  await sql(databaseUrl, 'INSERT INTO tenants (id, name, rate_limit_per_minute) VALUES ($1, $2, NULL)', [
    tenantId,
    tenantName,
  ]);
  await sql(databaseUrl, 'INSERT INTO products (id, tenant_id, sku, name, gtin) VALUES ($1, $2, $3, $4, $5)', [
    randomUUID(),
    tenantId,
    'SKU\\1',
    'Lamp "deluxe"\r\n\tweißes Licht ✓',
    ['8700000000001', 'with,comma', 'with "quote"', ''],
  ]);
  await sql(
    databaseUrl,
    `INSERT INTO oauth_signing_keys (kid, algorithm, public_jwk, private_key_encrypted, created_at, signs_from)
     VALUES ($1, 'ES256', $2, $3, '2026-01-02T03:04:05.678Z', now())`,
    [
      `kid-${tenantId}`,
      { kty: 'EC', note: 'back\\slash and\nnewline' },
      Buffer.from([0, 1, 9, 10, 13, 92, 255, ...randomBytes(64)]),
    ],
  );
  return tenantId;
}

describe('restore', () => {
  it('backs up a database given by DATABASE_URL, and every value, sequence and index comes back exactly', async () => {
    const source = await createTestDatabase();
    await insertAwkwardValues(source, 'Tab\there, newline\nthere, backslash \\ and \\N, not a null');
    await sql(source, "SELECT setval(pg_get_serial_sequence('stock_mutations', 'sequence'), 4242)");
    // As the docs run it, `--to backups/<name>` from a folder that has no `backups/` yet: the folder is created.
    const workDir = temporaryDir('commerce-backup-');
    const file = join(workDir, 'backups', 'external.backup');
    expect(existsSync(join(workDir, 'backups'))).toBe(false);
    const env = { PATH: process.env.PATH ?? '', DATABASE_URL: source, MASTER_KEY };
    const tsx = join(root, 'node_modules/.bin/tsx');
    const { stdout } = await execFileAsync(
      tsx,
      [join(root, 'scripts/admin.ts'), 'backup', '--to', 'backups/external.backup'],
      { cwd: workDir, env },
    );
    expect(JSON.parse(stdout)).toMatchObject({ file });
    expect(existsSync(file)).toBe(true);
    // ...and a checkout keeps that folder out of git.
    await execFileAsync('git', ['check-ignore', '--quiet', 'backups/x.backup'], { cwd: root });

    // restore is for the embedded DATA_DIR: with DATABASE_URL it points to the database's own tools.
    const refused = await execFileAsync(tsx, ['scripts/admin.ts', 'restore', '--from', file], { cwd: root, env }).then(
      () => 'restored',
      (error: { code: number; stderr: string }) => `${error.code} ${error.stderr}`,
    );
    expect(refused).toMatch(/^1 restore brings back the embedded database of DATA_DIR.*pg_dump/);

    const target = await emptyDatabase();
    const restored = await restoreDatabase(target, file, await readBackupHeader(file));
    expect(restored.rows).toBeGreaterThan(0);
    const [before, after] = [await contents(source), await contents(target)];
    expect(after.rows.products).toHaveLength(1);
    expect(after).toEqual(before);
  }, 60_000);

  it('replaces the database of a DATA_DIR only with --force, and only once the whole backup has loaded', async () => {
    const source = await createTestDatabase();
    await insertAwkwardValues(source, 'First');
    const dir = temporaryDir('commerce-backup-');
    const first = join(dir, 'first.backup');
    await takeBackup(source, first, { masterKey: MASTER_KEY });
    await insertAwkwardValues(source, 'Second');
    const second = join(dir, 'second.backup');
    await takeBackup(source, second, { masterKey: MASTER_KEY });
    // The first backup with its tenant row replaced by one that does not fit the table: the file
    // checks out, and the load fails halfway, after the tables before `tenants`.
    const unloadable = join(dir, 'unloadable.backup');
    const writer = await BackupFileWriter.create(unloadable);
    let table: string | undefined;
    for await (const frame of readBackupFile(first)) {
      if (frame.kind === 'rows') {
        await writer.rows(
          table === 'tenants' ? Buffer.from('not-a-uuid\tBroken\t\\N\t2026-01-01 00:00:00+00\n') : frame.payload,
        );
        continue;
      }
      const value = JSON.parse(frame.payload.toString());
      if (frame.kind === 'table') table = value.name;
      await writer.json(frame.kind, value);
    }
    await writer.finish();

    const dataDir = temporaryDir();
    const tenantNames = async () => {
      const server = await startEmbeddedPostgres(dataDir);
      try {
        const databases = await sql<{ datname: string }>(server.url, 'SELECT datname FROM pg_database ORDER BY 1');
        expect(databases.map((row) => row.datname)).not.toContain('commerce_restoring');
        return (await sql<{ name: string }>(server.url, 'SELECT name FROM tenants ORDER BY name')).map((r) => r.name);
      } finally {
        await server.stop();
      }
    };

    const masterKeyWarnings = (warnings: string[]) => warnings.filter((warning) => warning.includes('master key'));
    expect(masterKeyWarnings((await restoreDataDir(dataDir, first, { masterKey: MASTER_KEY })).warnings)).toEqual([]);
    expect(await tenantNames()).toEqual(['First']);
    await expect(restoreDataDir(dataDir, second, { masterKey: MASTER_KEY })).rejects.toThrow(
      /already holds a database .*only with --force/,
    );
    await expect(restoreDataDir(dataDir, unloadable, { force: true, masterKey: MASTER_KEY })).rejects.toThrow(
      /invalid input syntax for type uuid/,
    );
    expect(await tenantNames()).toEqual(['First']);
    const replaced = await restoreDataDir(dataDir, second, { force: true, masterKey: 'another master key entirely' });
    expect(masterKeyWarnings(replaced.warnings)).toEqual([
      expect.stringMatching(/^The backup was taken with another master key/),
    ]);
    expect(await tenantNames()).toEqual(['First', 'Second']);
  }, 90_000);
});
