import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Config } from './config';
import { ConfigError } from './config';

export const masterKeyFile = (dataDir: string) => join(resolve(dataDir), 'master.key');

/**
 * The operator's master key: MASTER_KEY when set; in embedded mode, otherwise, the key kept in
 * DATA_DIR (generated on first start). A deployment on an external database must set it, since
 * every process has to share it.
 */
export function resolveMasterKey(config: Config): { key: string; generated: boolean; file?: string } {
  if (config.masterKey) return { key: config.masterKey, generated: false };
  if (config.databaseUrl)
    throw new ConfigError('Invalid configuration: MASTER_KEY is required when DATABASE_URL is set');
  const file = masterKeyFile(config.dataDir);
  if (existsSync(file)) return { key: readFileSync(file, 'utf8').trim(), generated: false, file };
  mkdirSync(resolve(config.dataDir), { recursive: true });
  const key = `mk_${randomBytes(32).toString('base64url')}`;
  writeFileSync(file, `${key}\n`, { mode: 0o600 });
  return { key, generated: true, file };
}
