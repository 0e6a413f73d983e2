// `npm run admin -- backup --to <file>` and `npm run admin -- restore --from <file> [--force]`:
// an online backup of the service's database, and bringing a stopped DATA_DIR back to one.
// Each prints a JSON summary; warnings and errors go to stderr.
import { existsSync, readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { BackupError } from '../src/kernel/backup/backup-file';
import { embeddedDatabaseUrl, restoreDataDir } from '../src/kernel/backup/embedded-data-dir';
import { takeBackup } from '../src/kernel/backup/take-backup';
import { ConfigError, loadConfig } from '../src/kernel/config';
import { masterKeyFile } from '../src/kernel/master-key';

export const backupUsage = `  backup --to <file>                                           write a consistent backup of the database while
                                                               the service runs (the embedded one of DATA_DIR,
                                                               or DATABASE_URL)
  restore --from <file> [--force]                              bring DATA_DIR's database back to a backup; the
                                                               service must be stopped; --force replaces a
                                                               database that DATA_DIR already holds`;

/** A command line that does not say what to do: exit code 2, as the other admin commands. */
class UsageError extends Error {}

function parseCommandLine(
  command: 'backup' | 'restore',
  args: string[],
): { to?: string; from?: string; force?: boolean } {
  try {
    return command === 'backup'
      ? parseArgs({ args, options: { to: { type: 'string' } }, strict: true }).values
      : parseArgs({ args, options: { from: { type: 'string' }, force: { type: 'boolean' } }, strict: true }).values;
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
}

/** Runs `backup` or `restore` with their arguments; returns the exit code. */
export async function runBackupCommand(command: 'backup' | 'restore', args: string[]): Promise<number> {
  try {
    const values = parseCommandLine(command, args);
    const config = loadConfig();
    const keyFile = masterKeyFile(config.dataDir);
    const masterKey =
      config.masterKey ?? (existsSync(keyFile) ? readFileSync(keyFile, 'utf8').trim() || undefined : undefined);
    if (command === 'backup') {
      if (!values.to) throw new UsageError('backup needs --to <file>');
      const databaseUrl = config.databaseUrl ?? embeddedDatabaseUrl(config.dataDir);
      console.log(JSON.stringify(await takeBackup(databaseUrl, values.to, { masterKey }), null, 2));
      return 0;
    }
    if (!values.from) throw new UsageError('restore needs --from <file>');
    if (config.databaseUrl) {
      throw new BackupError(
        'restore brings back the embedded database of DATA_DIR; for the database of DATABASE_URL use its own ' +
          "tools (pg_dump, pg_basebackup or the provider's backups), or unset DATABASE_URL.",
      );
    }
    const restored = await restoreDataDir(config.dataDir, values.from, { force: values.force, masterKey });
    for (const warning of restored.warnings) console.error(`warning: ${warning}`);
    const { header, ...summary } = restored;
    console.log(JSON.stringify({ ...summary, snapshot: header.snapshot, takenAt: header.createdAt }, null, 2));
    return 0;
  } catch (error) {
    if (error instanceof UsageError) {
      console.error(`${error.message}\n\nUsage: npm run admin -- <command> [options]\n\n${backupUsage}`);
      return 2;
    }
    const expected = error instanceof BackupError || error instanceof ConfigError;
    console.error(expected ? (error as Error).message : `${command} failed: ${(error as Error).message ?? error}`);
    return 1;
  }
}
