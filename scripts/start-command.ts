/**
 * The command `npm start` runs, read from package.json: what the benchmark and the process tests
 * run the service with, so that they measure and exercise it as it is started (V8 flags included).
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';

const PACKAGE_JSON = resolve(import.meta.dirname, '../package.json');

/** The arguments of `node` in the start script, e.g. `['--max-semi-space-size=64', 'scripts/start.mjs']`. */
export function startNodeArguments(): string[] {
  const { scripts } = JSON.parse(readFileSync(PACKAGE_JSON, 'utf8')) as { scripts: Record<string, string> };
  const match = /^exec node (.+)$/.exec(scripts.start ?? '');
  if (!match) throw new Error(`the start script is not "exec node ...": ${scripts.start}`);
  return match[1]!.split(/\s+/);
}

/** The V8 options among them (`--max-semi-space-size=64`): what sizes the heap the service runs on. */
export function startV8Flags(): string[] {
  return startNodeArguments().filter((argument) => /^--max-(semi|old)-space-size=\d+$/.test(argument));
}
