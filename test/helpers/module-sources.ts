/**
 * The modules' sources as the architecture checks read them: which module a file belongs to, the
 * files each file imports (types and re-exports included), the module graph they make, and the
 * text of the SQL each module runs. Parsed with TypeScript's own scanner, so comments and strings
 * are told apart exactly.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import ts from 'typescript';

export const REPO_ROOT = resolve(import.meta.dirname, '../..');
export const SRC_DIR = join(REPO_ROOT, 'src');
export const MODULES_DIR = join(SRC_DIR, 'modules');
export const KERNEL_DIR = join(SRC_DIR, 'kernel');
export const ARCHITECTURE_DOC = join(REPO_ROOT, 'docs/architecture.md');

/** The repository-relative path of a file, for messages. */
export const repoPath = (file: string) => relative(REPO_ROOT, file).split(sep).join('/');

/** Every file under `dir` whose name ends with one of `extensions`. */
export function filesUnder(dir: string, extensions: string[]): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return filesUnder(path, extensions);
    return extensions.some((extension) => entry.name.endsWith(extension)) ? [path] : [];
  });
}

/** The module folders under src/modules, by name. */
export const moduleNames = (modulesDir = MODULES_DIR) =>
  readdirSync(modulesDir, { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .map((entry) => entry.name)
    .sort();

/** The module a file belongs to (`src/modules/<module>/**`), or null for any other file. */
export function moduleOf(file: string, modulesDir = MODULES_DIR): string | null {
  const parts = relative(modulesDir, file).split(sep);
  return parts.length > 1 && parts[0] !== '..' ? parts[0]! : null;
}

/** The file a relative import names (`./x`, `./x.ts`, `./x/index.ts`), or null for a package. */
function resolveImport(from: string, specifier: string): string | null {
  if (!specifier.startsWith('.')) return null;
  const target = resolve(dirname(from), specifier);
  for (const candidate of [target, `${target}.ts`, join(target, 'index.ts')]) {
    if (existsSync(candidate) && statSync(candidate).isFile()) return candidate;
  }
  return null;
}

/** The files a TypeScript file imports or re-exports, statically or dynamically, types included. */
export function importsOf(file: string): string[] {
  const info = ts.preProcessFile(readFileSync(file, 'utf8'), true, true);
  return info.importedFiles.flatMap(({ fileName }) => resolveImport(file, fileName) ?? []);
}

/** One import from a module into another: the importing file and the file it imports. */
export interface ModuleImport {
  file: string;
  imports: string;
}

/** module → module it imports from → the imports that make the arrow. */
export type ModuleGraph = Map<string, Map<string, ModuleImport[]>>;

/** The arrows between the modules under `modulesDir`: one wherever a file of one imports a file of another. */
export function moduleGraph(modulesDir = MODULES_DIR): ModuleGraph {
  const graph: ModuleGraph = new Map(moduleNames(modulesDir).map((name) => [name, new Map()]));
  for (const file of filesUnder(modulesDir, ['.ts'])) {
    const from = moduleOf(file, modulesDir);
    if (from === null) continue;
    for (const imported of importsOf(file)) {
      const to = moduleOf(imported, modulesDir);
      if (to === null || to === from) continue;
      const arrows = graph.get(from)!;
      arrows.set(to, [...(arrows.get(to) ?? []), { file, imports: imported }]);
    }
  }
  return graph;
}

/** The arrows of a graph as `from -> to`, sorted. */
export const arrowsOf = (graph: ModuleGraph) =>
  [...graph].flatMap(([from, arrows]) => [...arrows.keys()].map((to) => `${from} -> ${to}`)).sort();

/** A loop of the graph (its modules in order, the first repeated at the end), or null when it has none. */
export function findLoop(graph: ModuleGraph): string[] | null {
  const state = new Map<string, 'open' | 'done'>();
  const path: string[] = [];
  const visit = (module: string): string[] | null => {
    state.set(module, 'open');
    path.push(module);
    for (const next of [...(graph.get(module)?.keys() ?? [])].sort()) {
      if (state.get(next) === 'open') return [...path.slice(path.indexOf(next)), next];
      if (state.get(next) === undefined) {
        const loop = visit(next);
        if (loop) return loop;
      }
    }
    path.pop();
    state.set(module, 'done');
    return null;
  };
  for (const module of [...graph.keys()].sort()) {
    if (state.get(module) !== undefined) continue;
    const loop = visit(module);
    if (loop) return loop;
  }
  return null;
}

/** A loop in words, each arrow with one import that makes it. */
export function describeLoop(graph: ModuleGraph, loop: string[]): string {
  const steps = loop.slice(1).map((to, index) => {
    const from = loop[index]!;
    const [example] = graph.get(from)!.get(to)!;
    return `${from} → ${to} (${repoPath(example!.file)} imports ${repoPath(example!.imports)})`;
  });
  return `modules import each other in a loop: ${steps.join(', ')}`;
}

/** The text of the SQL a file may run: its string and template literals (TypeScript), or the file (SQL, without comments). */
export function sqlTextsOf(file: string): string[] {
  const source = readFileSync(file, 'utf8');
  if (file.endsWith('.sql')) return [source.replace(/--.*$/gm, '')];
  const texts: string[] = [];
  const visit = (node: ts.Node) => {
    if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) texts.push(node.text);
    else if (ts.isTemplateExpression(node))
      texts.push([node.head.text, ...node.templateSpans.map((span) => ` $ ${span.literal.text}`)].join(''));
    ts.forEachChild(node, visit);
  };
  visit(ts.createSourceFile(file, source, ts.ScriptTarget.Latest, true));
  return texts;
}

/** Prisma delegate calls of a TypeScript file (`db.order.update(...)`): the delegate and the method, in order. */
export function prismaCallsOf(file: string): { delegate: string; method: string }[] {
  if (!file.endsWith('.ts')) return [];
  const calls: { delegate: string; method: string }[] = [];
  const visit = (node: ts.Node) => {
    if (
      ts.isCallExpression(node) &&
      ts.isPropertyAccessExpression(node.expression) &&
      ts.isPropertyAccessExpression(node.expression.expression)
    ) {
      calls.push({ delegate: node.expression.expression.name.text, method: node.expression.name.text });
    }
    ts.forEachChild(node, visit);
  };
  visit(ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true));
  return calls;
}
