/**
 * The README's examples, run as a reader runs them: every block fenced as ```sh run, in the order
 * of the README, in one shell, against a service started as `npm start` starts it. Each `curl` of
 * such a block is followed by a comment `# → <status>` naming the status it answers; the statuses
 * seen must be those, in that order. So an example that breaks, or a section that relies on
 * something an earlier one deleted, fails here. A GraphQL answer with `errors` counts as a failure
 * unless its comment says `# → 200 errors`. The only changes made to the README's text are the
 * address (`http://127.0.0.1:3000` becomes the test service's) and the data folder (`.data/`).
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { root, startServiceProcess, temporaryDir } from '../helpers/service-process';

interface Example {
  /** Line of the README where the block's first command is. */
  line: number;
  script: string;
  expected: string[];
}

const defaultBase = 'http://127.0.0.1:3000';

function runnableExamples(readme: string): Example[] {
  const examples: Example[] = [];
  const lines = readme.split('\n');
  for (let index = 0; index < lines.length; index++) {
    if (lines[index]!.trim() !== '```sh run') continue;
    const start = index + 1;
    let end = start;
    while (end < lines.length && lines[end]!.trim() !== '```') end++;
    const script = lines.slice(start, end).join('\n');
    const expected = [...script.matchAll(/#\s*→\s*(\d{3}(?: errors)?)/g)].map((match) => match[1]!);
    examples.push({ line: start + 1, script, expected });
    index = end;
  }
  return examples;
}

/** Runs the examples in one bash; curl reports each status on stderr after a marker of its block. */
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
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolveRun) => {
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
 * The lines of a block that send a request: calls of curl, of gql and of the functions the block
 * defines (`name() { … }`, each a request), but not the lines of those functions' bodies.
 */
function requestLines(script: string): number {
  const lines = script.split('\n');
  const defined = lines.flatMap((line) => /^(\w+)\(\) \{/.exec(line)?.[1] ?? []);
  const sender = new RegExp(`(^|\\$\\(|\\|)\\s*(${['curl', 'gql', ...defined].join('|')})\\s`);
  let inBody = false;
  let count = 0;
  for (const line of lines) {
    if (/^\w+\(\) \{/.test(line)) inBody = !line.trimEnd().endsWith('}');
    else if (inBody) inBody = line.trim() !== '}';
    else if (sender.test(line)) count += 1;
  }
  return count;
}

describe("the README's examples", () => {
  const readme = readFileSync(join(root, 'README.md'), 'utf8');
  const examples = runnableExamples(readme);

  it('mark what they expect: each runnable block names a status for each of its requests', () => {
    expect(examples.length).toBeGreaterThan(20);
    for (const example of examples) {
      const requests = requestLines(example.script);
      expect(example.expected.length, `README line ${example.line}: one "# → status" per curl`).toBe(requests);
      // Commands reach the service through $BASE; comments may show what an answer looks like.
      const commands = example.script.replace(/#.*$/gm, '');
      expect(commands, `README line ${example.line}: $BASE, not a fixed address`).not.toMatch(
        /127\.0\.0\.1:\d+\/|localhost:/,
      );
    }
  });

  it('run top to bottom against a started service, each request answering the status it names', async () => {
    const dataDir = temporaryDir();
    const service = await startServiceProcess({ DATA_DIR: dataDir });
    const base = `http://127.0.0.1:${service.port}`;
    const run = await runExamples(
      examples.map((example) => ({
        ...example,
        script: example.script.replaceAll(defaultBase, base).replaceAll('.data/', `${dataDir}/`),
      })),
      {
        PATH: process.env.PATH ?? '',
        HOME: process.env.HOME ?? '',
        HOST: '127.0.0.1',
        PORT: String(service.port),
        DATA_DIR: dataDir,
      },
    );
    const seen = statusesPerBlock(run.stderr, examples.length);
    const failures = examples.flatMap((example, index) =>
      JSON.stringify(seen[index]) === JSON.stringify(example.expected)
        ? []
        : [`README line ${example.line}: expected ${example.expected.join(', ')}; got ${seen[index]!.join(', ')}`],
    );
    const tail = `\nstdout:\n${run.stdout.slice(-4000)}\nstderr:\n${run.stderr.slice(-4000)}`;
    expect(failures, failures.join('\n') + tail).toEqual([]);
    expect(run.code, tail).toBe(0);
    expect(run.stderr).toContain('@@done');
  }, 180_000);
});
