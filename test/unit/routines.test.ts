import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { latestRoutinesMigration, MODULES_DIR, routineFiles, routinesMigrationSql } from '../../src/kernel/routines';

/** Every TypeScript file under src/modules. */
function sources(dir = MODULES_DIR): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sources(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

describe('database routines', () => {
  it('are applied by the newest routines migration exactly as the files have them (run `npm run migration:routines`)', () => {
    expect(routineFiles().length).toBeGreaterThan(0);
    expect(latestRoutinesMigration()?.sql).toBe(routinesMigrationSql());
  });

  it('are each statement a CREATE OR REPLACE, so that a later migration can apply them again', () => {
    for (const file of routineFiles()) {
      const statements = readFileSync(file, 'utf8').match(/^CREATE\b.*$/gm) ?? [];
      expect(statements.length, file).toBeGreaterThan(0);
      for (const statement of statements) expect(statement, file).toMatch(/^CREATE OR REPLACE /);
    }
  });

  // Each stock rule has one implementation, in SQL: no TypeScript file may carry its own copy.
  it.each([
    // An advisory lock on a named integer constant (`${ROLLUP_LOCK}::int`) is some other job's, not the stock lock.
    ['the stock lock', /stock_lock_key|`stock:\$\{|pg_advisory_xact_lock\((?!\$\{[A-Z_]+\}::int\))[a-z$]/],
    ['the allocation order (first expired, first out)', /expires_at\s+ASC\s+NULLS\s+LAST/i],
    ['the merge of units into a line', /ON CONFLICT \(tenant_id, product_id, warehouse_id/],
    ['the queueing of broadcasts', /INSERT INTO stock_broadcasts/],
  ])('keep %s out of the modules’ TypeScript', (_rule, pattern) => {
    const offenders = sources().filter((file) => pattern.test(readFileSync(file, 'utf8')));
    expect(offenders).toEqual([]);
  });
});
