// Writes prisma/migrations/<timestamp>_routines/migration.sql when the routine files of the
// modules (src/modules/*/sql/*.sql) differ from the newest routines migration.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { MIGRATIONS_DIR, readMigrations } from '../src/kernel/migrations';
import { latestRoutinesMigration, routinesMigrationSql, ROUTINES_SUFFIX } from '../src/kernel/routines';

const sql = routinesMigrationSql();
const latest = latestRoutinesMigration();
if (latest?.sql === sql) {
  console.log(`${latest.name} is up to date`);
} else {
  // After every migration, whatever its stamp: the routines may refer to any table, and the newest
  // routines migration is the one compared with the routine files.
  const stampOf = (date: Date) => date.toISOString().replace(/\D/g, '').slice(0, 14);
  const newest = readMigrations().at(-1)?.name.slice(0, 14) ?? '0';
  const now = stampOf(new Date());
  const afterNewest = () => {
    const [, y, mo, d, h, mi, se] = /^(\d{4})(\d\d)(\d\d)(\d\d)(\d\d)(\d\d)$/.exec(newest)!.map(Number);
    return stampOf(new Date(Date.UTC(y!, mo! - 1, d, h, mi, se! + 1)));
  };
  const stamp = now > newest ? now : afterNewest();
  const dir = join(MIGRATIONS_DIR, `${stamp}${ROUTINES_SUFFIX}`);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'migration.sql'), sql);
  console.log(`wrote ${join(dir, 'migration.sql')}`);
}
