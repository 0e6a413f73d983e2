// Builds the operators' console (console/, React with Vite) into console/dist, which the service
// serves under /console. Skipped when the sources and the installed packages are unchanged since
// the last build (a content hash is kept in console/dist/.stamp), so a warm start costs a hash of
// a few files. Without Vite (an install that left out the development dependencies) the console is
// not built and /console says so.
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import process from 'node:process';

const root = join(import.meta.dirname, '..');
const sources = join(root, 'console');
const outDir = join(sources, 'dist');
const stampFile = join(outDir, '.stamp');

function files(dir) {
  return readdirSync(dir, { withFileTypes: true })
    .filter((entry) => !(dir === sources && ['dist', 'node_modules'].includes(entry.name)))
    .flatMap((entry) => (entry.isDirectory() ? files(join(dir, entry.name)) : [join(dir, entry.name)]))
    .sort();
}

function digest() {
  const hash = createHash('sha256');
  for (const file of [...files(sources), join(root, 'package-lock.json')])
    hash.update(relative(root, file)).update(readFileSync(file));
  return hash.digest('hex');
}

/** Builds the console when its sources changed; returns whether it built. */
export async function buildConsole() {
  if (!existsSync(join(sources, 'index.html'))) return false;
  const current = digest();
  if (existsSync(stampFile) && readFileSync(stampFile, 'utf8') === current) return false;
  let vite, react;
  try {
    vite = await import('vite');
    react = (await import('@vitejs/plugin-react')).default;
  } catch {
    process.stderr.write('The console is not built: Vite is not installed (npm install with dev dependencies).\n');
    return false;
  }
  await vite.build({
    configFile: false,
    root: sources,
    base: '/console/',
    logLevel: 'warn',
    plugins: [react()],
    build: { outDir, emptyOutDir: true, sourcemap: false, chunkSizeWarningLimit: 1024 },
  });
  writeFileSync(stampFile, current);
  return true;
}
