/**
 * The service as an operating-system process: started with the arguments `npm start` gives node
 * (its start script), or through `npm start` itself, and killed after the test file.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll } from 'vitest';
import { startNodeArguments } from '../../scripts/start-command';
import { freePort } from '../../src/kernel/embedded-postgres';

export const root = resolve(import.meta.dirname, '../..');

export interface ServiceProcess {
  child: ChildProcess;
  port: number;
  output: () => string;
  exited: Promise<number | null>;
}

const started: ChildProcess[] = [];
const dirs: string[] = [];

afterAll(() => {
  for (const child of started) {
    if (child.exitCode !== null || child.signalCode !== null) continue;
    // `npm start` children lead a process group: the service under npm goes with it.
    if (child.spawnargs[0] === 'npm') process.kill(-child.pid!, 'SIGKILL');
    else child.kill('SIGKILL');
  }
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/** A temporary directory, removed after the test file. */
export function temporaryDir(prefix = 'commerce-data-'): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  dirs.push(dir);
  return dir;
}

/**
 * Starts the service on a free port with `env` (and PATH, HOME, HOST), via node or `npm start` (in
 * a process group of its own, as a terminal runs a foreground job), and waits until it listens or exits.
 * A start that lost its free port (or its database's) to another process of a busy machine between
 * choosing it and binding it is tried again on new ones.
 */
export async function startServiceProcess(
  env: Record<string, string>,
  via: 'node' | 'npm' = 'node',
): Promise<ServiceProcess> {
  for (let attempt = 1; ; attempt += 1) {
    const service = await spawnService(env, via);
    const lostPort = service.child.exitCode !== null && /EADDRINUSE|address already in use/i.test(service.output());
    if (!lostPort || attempt === 3) return service;
  }
}

async function spawnService(env: Record<string, string>, via: 'node' | 'npm'): Promise<ServiceProcess> {
  const port = await freePort();
  const [command, args] = via === 'npm' ? ['npm', ['start']] : [process.execPath, startNodeArguments()];
  const child = spawn(command, args, {
    cwd: root,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', HOST: '127.0.0.1', PORT: String(port), ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
    // A group of its own, as a terminal gives a foreground job: Ctrl-C signals the whole group.
    detached: via === 'npm',
  });
  started.push(child);
  let output = '';
  child.stdout!.on('data', (chunk) => (output += chunk));
  child.stderr!.on('data', (chunk) => (output += chunk));
  const exited = new Promise<number | null>((resolveExit) =>
    child.on('exit', (code, signal) => resolveExit(signal ? null : code)),
  );
  await new Promise<void>((resolveReady, reject) => {
    const timer = setInterval(() => {
      // The last line of a start: after it, everything the start reports has been written.
      if (output.includes('"msg":"listening"')) {
        clearInterval(timer);
        resolveReady();
      }
    }, 50);
    void exited.then(() => {
      clearInterval(timer);
      resolveReady();
    });
    setTimeout(() => {
      clearInterval(timer);
      reject(new Error(`service did not start:\n${output}`));
    }, 45_000);
  });
  return { child, port, output: () => output, exited };
}

/** A JSON request to a service process with a bearer `token`; the status, headers and parsed body. */
export async function callService(
  service: ServiceProcess,
  method: string,
  path: string,
  { token, body }: { token: string; body?: unknown },
) {
  const response = await fetch(`http://127.0.0.1:${service.port}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${token}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, headers: response.headers, body: text ? JSON.parse(text) : undefined, text };
}
