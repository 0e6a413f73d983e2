/**
 * A TypeScript project of someone else's, in a temporary folder: the commands it runs and its
 * compilation with this repository's TypeScript under the module settings projects use today.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

export const REPO_ROOT = resolve(import.meta.dirname, '../..');
export const REPO_MODULES = join(REPO_ROOT, 'node_modules');
const TSC = join(REPO_MODULES, 'typescript/bin/tsc');

/** Node's own resolution (`nodenext`) and a bundler's (`bundler`), the two a published package must serve. */
export const MODULE_SETTINGS = {
  nodenext: { module: 'nodenext', moduleResolution: 'nodenext' },
  bundler: { module: 'esnext', moduleResolution: 'bundler' },
} as const;

export type ModuleSetting = keyof typeof MODULE_SETTINGS;

export interface CommandResult {
  status: number | null;
  stdout: string;
  /** stdout and stderr, for the failure message. */
  output: string;
}

/** An empty ESM project (`"type": "module"`) in a new temporary folder. */
export function createProject(prefix: string, dependencies: Record<string, string> = {}): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  const manifest = { name: 'consumer', version: '1.0.0', private: true, type: 'module', dependencies };
  writeFileSync(join(dir, 'package.json'), JSON.stringify(manifest, null, 2));
  return dir;
}

/** Runs a command in `cwd` without the `npm_*` variables of the npm script that may have started the tests. */
export function run(command: string, args: string[], cwd: string): CommandResult {
  const env = Object.fromEntries(
    Object.entries(process.env).filter(([name]) => !name.toLowerCase().startsWith('npm_')),
  );
  const result = spawnSync(command, args, { cwd, env, encoding: 'utf8', timeout: 180_000 });
  const stdout = result.stdout ?? '';
  return { status: result.status, stdout, output: `${stdout}${result.stderr ?? ''}${result.error ?? ''}` };
}

/** Type-checks the project's `src/` under one module setting, strictly and including the packages' declarations. */
export function compile(dir: string, setting: ModuleSetting): CommandResult {
  const config = {
    compilerOptions: {
      ...MODULE_SETTINGS[setting],
      target: 'ES2022',
      lib: ['ES2022', 'DOM'],
      types: [],
      strict: true,
      noEmit: true,
      skipLibCheck: false,
    },
    include: ['src'],
  };
  const file = `tsconfig.${setting}.json`;
  writeFileSync(join(dir, file), JSON.stringify(config, null, 2));
  return run(process.execPath, [TSC, '-p', file], dir);
}

/**
 * `file:` specifiers of the packages and everything they depend on, from this repository's
 * node_modules: `npm install --offline` then finds every dependency without asking a registry.
 */
export function linkedDependencies(names: string[]): Record<string, string> {
  const linked: Record<string, string> = {};
  const visit = (name: string) => {
    if (linked[name]) return;
    const dir = join(REPO_MODULES, name);
    linked[name] = `file:${dir}`;
    const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as {
      dependencies?: Record<string, string>;
    };
    for (const dependency of Object.keys(manifest.dependencies ?? {})) visit(dependency);
  };
  for (const name of names) visit(name);
  return linked;
}
