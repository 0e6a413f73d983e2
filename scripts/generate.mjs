// Regenerates the Prisma client and the GraphQL resolver types into src/__generated__, and the
// TypeScript client's REST types and GraphQL documents into clients/typescript/src/__generated__,
// when their inputs changed since the last run (a content hash is kept beside the output).
import { execFileSync } from 'node:child_process';
import process from 'node:process';
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const root = join(import.meta.dirname, '..');
const stampFile = join(root, 'src/__generated__/.stamp');
const inputs = [
  'prisma/schema.prisma',
  'prisma.config.ts',
  'codegen.ts',
  'package-lock.json',
  'openapi.yaml',
  ...readdirSync(join(root, 'clients/typescript/operations'))
    .filter((f) => f.endsWith('.graphql'))
    .sort()
    .map((f) => `clients/typescript/operations/${f}`),
  ...readdirSync(join(root, 'schema'))
    .filter((f) => f.endsWith('.graphql'))
    .sort()
    .map((f) => `schema/${f}`),
  // codegen reads the module list and each module's mappers.
  'src/modules/index.ts',
  ...readdirSync(join(root, 'src/modules'), { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .map((entry) => `src/modules/${entry.name}/index.ts`)
    .filter((file) => existsSync(join(root, file)))
    .sort(),
];
const hash = createHash('sha256');
for (const file of inputs) hash.update(file).update(readFileSync(join(root, file)));
const digest = hash.digest('hex');

const clientOpenApi = 'clients/typescript/src/__generated__/openapi.ts';
const outputs = [
  'src/__generated__/prisma/client.ts',
  'src/__generated__/graphql.ts',
  clientOpenApi,
  'clients/typescript/src/__generated__/graphql/graphql.ts',
];
const fresh =
  existsSync(stampFile) &&
  readFileSync(stampFile, 'utf8') === digest &&
  outputs.every((f) => existsSync(join(root, f)));
if (!fresh) {
  const bin = (name) => join(root, 'node_modules/.bin', name);
  // `prisma generate` only checks that a schema engine file exists; it never runs it (the engine
  // cannot be downloaded on machines without internet access), so any existing file will do.
  const env = {
    ...process.env,
    PRISMA_SCHEMA_ENGINE_BINARY: process.env.PRISMA_SCHEMA_ENGINE_BINARY ?? process.execPath,
    PRISMA_HIDE_UPDATE_MESSAGE: '1',
  };
  execFileSync(bin('prisma'), ['generate'], { cwd: root, env, stdio: ['ignore', 'ignore', 'inherit'] });
  execFileSync(bin('graphql-codegen'), ['--config', 'codegen.ts'], {
    cwd: root,
    env,
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  execFileSync(bin('openapi-typescript'), ['openapi.yaml', '--output', clientOpenApi], {
    cwd: root,
    env,
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  writeFileSync(stampFile, digest);
}
