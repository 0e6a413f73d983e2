/**
 * The docs' examples, run as readers run them: every block fenced as ```sh run of README.md,
 * CONTRIBUTING.md and docs/**, each file in a bash of its own and all files at once, against one
 * service started as `npm start` starts it. A file's blocks run in its order, in its shell, from the
 * setup block at its top; nothing carries over from one file to another (no variable is inherited,
 * and each guide makes its own tenant), so a guide that relies on what another guide made fails
 * here. Each `curl` of a block is followed by a comment `# → <status>` naming the status it
 * answers; the statuses seen must be those, in that order. A GraphQL answer with `errors` counts
 * as a failure unless its comment says `# → 200 errors`. The only changes made to the text are the
 * address (`http://127.0.0.1:3000` becomes the test service's) and the data folder (`.data/`).
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { documentationFiles } from '../../src/modules/reference/documentation';
import { outlineOf, type RunnableBlock } from '../../src/modules/reference/markdown';
import { root, startServiceProcess, temporaryDir, type ServiceProcess } from '../helpers/service-process';

interface Example extends RunnableBlock {
  expected: string[];
}

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

const defaultBase = 'http://127.0.0.1:3000';

function examplesOf(file: string): Example[] {
  return outlineOf(readFileSync(join(root, file), 'utf8')).runnable.map((block) => ({
    ...block,
    expected: [...block.script.matchAll(/#\s*→\s*(\d{3}(?: errors)?)/g)].map((match) => match[1]!),
  }));
}

/** Every page with runnable examples, and its examples. */
const pages = documentationFiles(root)
  .map((file) => ({ file, examples: examplesOf(file) }))
  .filter((page) => page.examples.length > 0);

/** Runs one page's examples in one bash; curl reports each status on stderr after a marker of its block. */
function runExamples(examples: Example[], env: Record<string, string>) {
  const script = [
    'set -euo pipefail',
    // A status line on stderr per request, whatever the example does with curl's output, and a
    // mark when the answer carries GraphQL errors.
    'answer=$(mktemp)',
    `curl() {
      command curl "$@" --write-out '%{stderr}@@status %{http_code}\\n' | tee "$answer"
      if grep -q '"errors":\\[' "$answer"; then { echo '@@status errors'; head -c 2000 "$answer"; echo; } >&2; fi
    }`,
    ...examples.flatMap((example, index) => [`echo "@@block ${index}" >&2`, example.script]),
    'echo "@@done" >&2',
  ].join('\n');
  return new Promise<Run>((resolveRun) => {
    const child = spawn('bash', ['-c', script], { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.on('exit', (code) => resolveRun({ code, stdout, stderr }));
  });
}

function statusesPerBlock(stderr: string, blocks: number): string[][] {
  const seen: string[][] = Array.from({ length: blocks }, () => []);
  let block = -1;
  for (const line of stderr.split('\n')) {
    const marker = /^@@block (\d+)$/.exec(line);
    if (marker) block = Number(marker[1]);
    const status = /@@status (\d{3}|errors)$/.exec(line);
    const statuses = seen[block];
    if (!status || !statuses) continue;
    if (status[1] === 'errors') statuses[statuses.length - 1] += ' errors';
    else statuses.push(status[1]!);
  }
  return seen;
}

/**
 * The lines of a block that send a request: calls of curl, of gql and mcp (the guides' helpers) and
 * of the functions the block defines that call one of those (`name() { … curl … }`), but not the
 * lines of those functions' bodies, nor calls of a function that sends nothing (`json`).
 */
function requestLines(script: string): number {
  const senders = new Set(['curl', 'gql', 'mcp']);
  const sendsRequests = (body: string) => [...senders].some((name) => new RegExp(`\\b${name}\\s`).test(body));
  const outside: string[] = [];
  let defining: { name: string; body: string } | undefined;
  const endDefinition = () => {
    if (sendsRequests(defining!.body)) senders.add(defining!.name);
    defining = undefined;
  };
  for (const line of script.split('\n')) {
    const start = /^(\w+)\(\) \{(.*)$/.exec(line);
    if (start) {
      defining = { name: start[1]!, body: start[2]! };
      if (line.trimEnd().endsWith('}')) endDefinition();
    } else if (defining) {
      if (line.trim() === '}') endDefinition();
      else defining.body += `\n${line}`;
    } else outside.push(line);
  }
  const sender = new RegExp(`(^|\\$\\(|\\|)\\s*(${[...senders].join('|')})\\s`);
  return outside.filter((line) => sender.test(line)).length;
}

/** The proxy keys a page creates: each is unique across every tenant, so two pages must not share one. */
function proxyKeysCreated(examples: Example[]): string[] {
  const commands = examples.flatMap((example) => example.script.replace(/\\\n/g, ' ').split('\n'));
  return commands
    .filter((command) => /-X POST \S*\/api\/storage\/edge\/proxies\s/.test(command))
    .flatMap((command) => /"data":\{"key":"([a-z0-9-]+)"/.exec(command)?.[1] ?? []);
}

describe("the docs' examples", () => {
  it('are found in the README and the guides', () => {
    const files = pages.map((page) => page.file);
    expect(files).toEqual(expect.arrayContaining(['README.md', 'docs/guides/edge.md', 'docs/guides/stock.md']));
    expect(pages.flatMap((page) => page.examples).length).toBeGreaterThan(50);
  });

  it.each(pages)('$file: each block names a status for each request and reaches the service through BASE', (page) => {
    for (const example of page.examples) {
      const where = `${page.file} line ${example.line}`;
      expect(example.expected.length, `${where}: one "# → status" per request`).toBe(requestLines(example.script));
      // Commands reach the service through $BASE; comments may show what an answer looks like.
      const commands = example.script.replace(/#.*$/gm, '');
      expect(commands, `${where}: $BASE, not a fixed address`).not.toMatch(/127\.0\.0\.1:\d+\/|localhost:/);
    }
    // Its own shell starts from nothing: the page's first block says where the service is.
    expect(page.examples[0]!.script, `${page.file}: the first runnable block sets BASE`).toMatch(
      /^BASE=|admin -- quickstart/m,
    );
  });

  it('create proxy keys of their own: no two pages take the same key', () => {
    const owners = new Map<string, string>();
    for (const page of pages)
      for (const key of proxyKeysCreated(page.examples)) {
        expect(owners.get(key), `proxy key ${key} is created by ${owners.get(key)} and ${page.file}`).toBeUndefined();
        owners.set(key, page.file);
      }
    expect(owners.size).toBeGreaterThan(3);
  });

  describe('run against a started service, every page in a shell of its own and all at once', () => {
    let service: ServiceProcess;
    let dataDir: string;
    const runs = new Map<string, Promise<Run>>();

    beforeAll(async () => {
      dataDir = temporaryDir();
      service = await startServiceProcess({ DATA_DIR: dataDir });
      const base = `http://127.0.0.1:${service.port}`;
      // Only what `npm start` and the admin command read: no BASE, KEY or other variable of a page.
      const env = {
        PATH: process.env.PATH ?? '',
        HOME: process.env.HOME ?? '',
        HOST: '127.0.0.1',
        PORT: String(service.port),
        DATA_DIR: dataDir,
      };
      for (const page of pages) {
        const examples = page.examples.map((example) => ({
          ...example,
          script: example.script.replaceAll(defaultBase, base).replaceAll('.data/', `${dataDir}/`),
        }));
        runs.set(page.file, runExamples(examples, env));
      }
    }, 60_000);

    afterAll(async () => {
      await Promise.allSettled(runs.values());
    });

    it.each(pages)(
      '$file: each request answers the status it names',
      async (page) => {
        const run = await runs.get(page.file)!;
        const seen = statusesPerBlock(run.stderr, page.examples.length);
        const failures = page.examples.flatMap((example, index) =>
          JSON.stringify(seen[index]) === JSON.stringify(example.expected)
            ? []
            : [
                `${page.file} line ${example.line}: expected ${example.expected.join(', ')}; got ${seen[index]!.join(', ')}`,
              ],
        );
        const tail = `\nstdout:\n${run.stdout.slice(-4000)}\nstderr:\n${run.stderr.slice(-4000)}`;
        expect(failures, failures.join('\n') + tail).toEqual([]);
        expect(run.code, tail).toBe(0);
        expect(run.stderr).toContain('@@done');
      },
      300_000,
    );
  });
});
