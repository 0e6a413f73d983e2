/**
 * `npm run admin -- <command>` as a person runs it, in a child process against a listening service
 * (asynchronously: the test's own process serves its requests).
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { TEST_MASTER_KEY } from './app';

const root = join(import.meta.dirname, '../..');

export interface AdminRun {
  status: number | null;
  stdout: string;
  stderr: string;
  /** The printed answer, parsed (undefined when it is not JSON). */
  json: any;
}

/**
 * Runs the admin command `args` against the service at `origin` (PUBLIC_BASE_URL), with `stdin`
 * typed in; `env` adds to or replaces the environment (an empty value unsets a variable).
 */
export function runAdmin(
  origin: string,
  args: string[],
  stdin = '',
  env: Record<string, string> = {},
  script = 'scripts/admin.ts',
): Promise<AdminRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(join(root, 'node_modules/.bin/tsx'), [script, ...args], {
      cwd: root,
      env: { PATH: process.env.PATH ?? '', MASTER_KEY: TEST_MASTER_KEY, PUBLIC_BASE_URL: origin, ...env },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.on('error', reject);
    child.on('close', (status) => {
      let json: unknown;
      try {
        json = JSON.parse(stdout);
      } catch {
        json = undefined;
      }
      resolve({ status, stdout, stderr, json });
    });
    child.stdin.end(stdin);
  });
}
