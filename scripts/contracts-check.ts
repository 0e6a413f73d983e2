// `npm run contracts:check [-- --base <git ref>]`: the changes to the contracts (openapi.yaml and
// the SDL in schema/) since a base commit, breaking ones first. Fails on a breaking change unless
// CHANGELOG.md gained an entry under a "Breaking" heading since the base. The base defaults to the
// latest v* tag, else the previous commit.
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { parse } from 'yaml';
import { formatChanges, type Change } from './contracts/changes';
import { addsBreakingEntry } from './contracts/changelog';
import { graphqlChanges } from './contracts/graphql-diff';
import { openapiChanges } from './contracts/openapi-diff';

const { values } = parseArgs({ options: { base: { type: 'string' } }, strict: true });

/** A git command's output, or undefined when it fails (no such ref, file or parent). */
function git(...args: string[]): string | undefined {
  try {
    return execFileSync('git', args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'], maxBuffer: 64 << 20 });
  } catch {
    return undefined;
  }
}

const root = git('rev-parse', '--show-toplevel')?.trim();
if (!root) {
  console.error('contracts:check must run inside a git work tree');
  process.exit(2);
}
const base =
  values.base ??
  git('describe', '--tags', '--match', 'v*', '--abbrev=0', 'HEAD')?.trim() ??
  (git('rev-parse', '--verify', '--quiet', 'HEAD~1') ? 'HEAD~1' : undefined);
if (!base) {
  console.log('contracts: no v* tag and no previous commit (a first or shallow clone): nothing to compare with');
  process.exit(0);
}
const baseCommit = git('rev-parse', '--verify', '--quiet', `${base}^{commit}`)?.trim();
if (!baseCommit) {
  console.error(`contracts: ${base} is not a commit of this repository (a shallow clone? fetch more history)`);
  process.exit(2);
}

const atBase = (path: string) => git('show', `${baseCommit}:${path}`);
const sdlAtBase = (git('ls-tree', '--name-only', baseCommit, 'schema/') ?? '')
  .split('\n')
  .filter((path) => path.endsWith('.graphql'))
  .sort()
  .map((path) => atBase(path) ?? '')
  .join('\n');
const schemaDir = join(root, 'schema');
const sdlNow = readdirSync(schemaDir)
  .filter((file) => file.endsWith('.graphql'))
  .sort()
  .map((file) => readFileSync(join(schemaDir, file), 'utf8'))
  .join('\n');
const openapiAtBase = atBase('openapi.yaml');

let changes: Change[];
try {
  changes = [
    ...(openapiAtBase
      ? openapiChanges(parse(openapiAtBase), parse(readFileSync(join(root, 'openapi.yaml'), 'utf8')))
      : []),
    ...(await graphqlChanges(sdlAtBase, sdlNow)),
  ];
} catch (error) {
  console.error(`contracts: cannot compare, a contract does not parse: ${(error as Error).message}`);
  process.exit(2);
}

console.log(`Contract changes since ${base} (${baseCommit.slice(0, 12)}):`);
if (changes.length === 0) console.log('  none');
for (const line of formatChanges(changes)) console.log(`  ${line}`);

const breaking = changes.filter((change) => change.criticality === 'BREAKING').length;
if (breaking === 0) process.exit(0);
const changelog = join(root, 'CHANGELOG.md');
if (addsBreakingEntry(atBase('CHANGELOG.md') ?? '', existsSync(changelog) ? readFileSync(changelog, 'utf8') : '')) {
  console.log(`${breaking} breaking change(s), recorded under "Breaking" in CHANGELOG.md.`);
  process.exit(0);
}
console.error(
  `${breaking} breaking change(s) for clients of the contracts. Record them under a "## Breaking" heading of ` +
    'the unreleased section of CHANGELOG.md (what changed and what clients must do), or undo them.',
);
process.exit(1);
