// Regenerates what is built from the schemas and contracts, in two groups, each only when its
// inputs changed since its last run (a content hash is kept beside its output):
//
// - the Prisma client (src/__generated__/prisma), the one generated file the running service
//   imports, and the operators' console (console/dist, see scripts/build-console.mjs):
//   `node scripts/generate.mjs --service` (npm install's prepare, and npm start);
// - the GraphQL resolver types (src/__generated__/graphql.ts), and the TypeScript client's REST
//   types and GraphQL documents (clients/typescript/src/__generated__), which type-checking, tests
//   and the client's build need: `node scripts/generate.mjs` makes both groups (pretest, prebuild).
import { execFile } from 'node:child_process';
import process from 'node:process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import { buildConsole } from './build-console.mjs';

const run = promisify(execFile);
const root = join(import.meta.dirname, '..');
const bin = (name) => join(root, 'node_modules/.bin', name);
// `prisma generate` only checks that a schema engine file exists; it never runs it (the engine
// cannot be downloaded on machines without internet access), so any existing file will do.
const env = {
  ...process.env,
  PRISMA_SCHEMA_ENGINE_BINARY: process.env.PRISMA_SCHEMA_ENGINE_BINARY ?? process.execPath,
  PRISMA_HIDE_UPDATE_MESSAGE: '1',
};

const graphqlFiles = (dir) =>
  readdirSync(join(root, dir))
    .filter((f) => f.endsWith('.graphql'))
    .sort()
    .map((f) => `${dir}/${f}`);

const prismaGroup = {
  stampFile: 'src/__generated__/prisma/.stamp',
  inputs: () => ['prisma/schema.prisma', 'prisma.config.ts', 'package-lock.json'],
  outputs: ['src/__generated__/prisma/client.ts'],
};

const clientOpenApi = 'clients/typescript/src/__generated__/openapi.ts';
const typesGroup = {
  stampFile: 'src/__generated__/.stamp',
  inputs: () => [
    'codegen.ts',
    'package-lock.json',
    'openapi.yaml',
    ...graphqlFiles('clients/typescript/operations'),
    ...graphqlFiles('schema'),
    // codegen reads the module list and each module's mappers.
    'src/modules/index.ts',
    ...readdirSync(join(root, 'src/modules'), { withFileTypes: true })
      .filter((entry) => entry.isDirectory())
      .map((entry) => `src/modules/${entry.name}/index.ts`)
      .filter((file) => existsSync(join(root, file)))
      .sort(),
  ],
  outputs: ['src/__generated__/graphql.ts', clientOpenApi, 'clients/typescript/src/__generated__/graphql/graphql.ts'],
};

/** The group's input digest when its outputs are missing or older than its inputs; null when fresh. */
function staleDigest(group) {
  const hash = createHash('sha256');
  for (const file of group.inputs()) hash.update(file).update(readFileSync(join(root, file)));
  const digest = hash.digest('hex');
  const stamp = join(root, group.stampFile);
  const fresh =
    existsSync(stamp) &&
    readFileSync(stamp, 'utf8') === digest &&
    group.outputs.every((f) => existsSync(join(root, f)));
  return fresh ? null : digest;
}

const tool = (name, args) =>
  run(bin(name), args, { cwd: root, env, maxBuffer: 64 * 1024 * 1024 }).catch((error) => {
    process.stderr.write(error.stderr ?? '');
    throw new Error(`${name} ${args.join(' ')} failed`, { cause: error });
  });

/**
 * Runs `work` while holding a lock directory, so that processes started together (the multi-process
 * tests start several services at once) generate one at a time; a lock older than `STALE_LOCK_MS`
 * was left by a process that died and is taken over.
 */
const STALE_LOCK_MS = 120_000;
async function whileLocked(work) {
  const lock = join(root, 'src/__generated__/.generate.lock');
  mkdirSync(dirname(lock), { recursive: true });
  for (;;) {
    try {
      mkdirSync(lock);
      break;
    } catch (error) {
      if (error.code !== 'EEXIST') throw error;
      const age = Date.now() - (statSync(lock, { throwIfNoEntry: false })?.mtimeMs ?? Date.now());
      if (age > STALE_LOCK_MS) rmSync(lock, { recursive: true, force: true });
      else await sleep(100);
    }
  }
  try {
    return await work();
  } finally {
    rmSync(lock, { recursive: true, force: true });
  }
}

async function generatePrismaClient() {
  if (staleDigest(prismaGroup) === null) return;
  await whileLocked(async () => {
    // Another process may have generated it while this one waited for the lock.
    const digest = staleDigest(prismaGroup);
    if (digest === null) return;
    await tool('prisma', ['generate']);
    writeFileSync(join(root, prismaGroup.stampFile), digest);
  });
}

/**
 * The Prisma client, when its schema or the installed Prisma changed, and the console's static
 * files, when its sources changed: all the service needs.
 */
export async function generateForService() {
  await generatePrismaClient();
  await whileLocked(buildConsole);
}

/** Everything: the Prisma client, then the types and the client's files (codegen loads the modules, which import the Prisma client). */
export async function generateAll() {
  const digest = staleDigest(typesGroup);
  if (digest === null) return generatePrismaClient();
  // openapi-typescript needs nothing generated: it runs beside the Prisma client and codegen.
  const openApiTypes = tool('openapi-typescript', ['openapi.yaml', '--output', clientOpenApi]);
  const codegen = generatePrismaClient().then(() => tool('graphql-codegen', ['--config', 'codegen.ts']));
  const failed = (await Promise.allSettled([openApiTypes, codegen])).find((result) => result.status === 'rejected');
  if (failed) throw failed.reason;
  writeFileSync(join(root, typesGroup.stampFile), digest);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  await (process.argv.includes('--service') ? generateForService() : generateAll());
}
