/**
 * The database's routines (functions and triggers) live as SQL files beside the module whose rules
 * they implement, `src/modules/<module>/sql/*.sql`, each statement a `CREATE OR REPLACE`. A
 * migration named `<timestamp>_routines` carries all of them at once; `npm run migration:routines`
 * writes a new one whenever the files changed since the last, so that every database is brought to
 * the routines of the code that runs against it.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { readMigrations, type Migration } from './migrations';

const ROOT = resolve(import.meta.dirname, '../..');
export const MODULES_DIR = join(ROOT, 'src/modules');
export const ROUTINES_SUFFIX = '_routines';

/** The routine files, by module then file name (files of a module may depend on earlier ones). */
export function routineFiles(modulesDir = MODULES_DIR): string[] {
  return readdirSync(modulesDir, { withFileTypes: true })
    .filter((entry) => entry.isDirectory() && existsSync(join(modulesDir, entry.name, 'sql')))
    .map((entry) => entry.name)
    .sort()
    .flatMap((module) =>
      readdirSync(join(modulesDir, module, 'sql'))
        .filter((file) => file.endsWith('.sql'))
        .sort()
        .map((file) => join(modulesDir, module, 'sql', file)),
    );
}

/** The body of a routines migration for the files as they are now. */
export function routinesMigrationSql(modulesDir = MODULES_DIR): string {
  const header =
    '-- Written by `npm run migration:routines` from src/modules/*/sql/*.sql: edit those files, not this one.\n';
  return (
    header +
    routineFiles(modulesDir)
      .map((file) => `\n-- ${relative(ROOT, file)}\n\n${readFileSync(file, 'utf8').trim()}\n`)
      .join('')
  );
}

/** The newest routines migration, if any. */
export function latestRoutinesMigration(migrations: Migration[] = readMigrations()): Migration | undefined {
  return migrations.filter((migration) => migration.name.endsWith(ROUTINES_SUFFIX)).at(-1);
}
