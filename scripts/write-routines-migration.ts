// Writes prisma/migrations/<timestamp>_routines/migration.sql when the routine files of the
// modules (src/modules/*/sql/*.sql) differ from the newest routines migration.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { MIGRATIONS_DIR } from '../src/kernel/migrations';
import { latestRoutinesMigration, routinesMigrationSql, ROUTINES_SUFFIX } from '../src/kernel/routines';

const sql = routinesMigrationSql();
const latest = latestRoutinesMigration();
if (latest?.sql === sql) {
  console.log(`${latest.name} is up to date`);
} else {
  const stamp = new Date().toISOString().replace(/\D/g, '').slice(0, 14);
  const dir = join(MIGRATIONS_DIR, `${stamp}${ROUTINES_SUFFIX}`);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'migration.sql'), sql);
  console.log(`wrote ${join(dir, 'migration.sql')}`);
}
