/**
 * Every code of the error registry is reachable (something in src/ raises it) and documented: in
 * the registry's page (docs/reference/errors.md), in openapi.yaml and, for its GraphQL code, in the SDL's
 * ErrorCode enum.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DATA_PLANE_ONLY_ERRORS, errorRegistry, type ErrorKey } from '../../src/kernel/errors';

const root = join(__dirname, '..', '..');
const read = (path: string) => readFileSync(join(root, path), 'utf8');
const keys = Object.keys(errorRegistry) as ErrorKey[];

function sourceFiles(dir: string): string[] {
  return readdirSync(join(root, dir), { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === '__generated__' ? [] : sourceFiles(path);
    return path.endsWith('.ts') ? [path] : [];
  });
}

/** The helpers of errors.ts (`idTaken`, `notFound`, ...) and the code each one raises. */
function helpersOf(errorsSource: string): Map<string, ErrorKey> {
  const helpers = new Map<string, ErrorKey>();
  for (const match of errorsSource.matchAll(
    /export const (\w+) = \([^)]*\) =>\s*(?:new AppError|errorAt)\('([A-Z_]+)'/g,
  )) {
    if (keys.includes(match[2] as ErrorKey)) helpers.set(match[1]!, match[2] as ErrorKey);
  }
  return helpers;
}

describe('the error registry', () => {
  const errorsSource = read('src/kernel/errors.ts');
  const helpers = helpersOf(errorsSource);
  const elsewhere = sourceFiles('src')
    .filter((path) => !path.endsWith(join('kernel', 'errors.ts')))
    .map(read)
    .join('\n');

  it('finds the helpers of errors.ts', () => {
    expect(helpers.get('idTaken')).toBe('ID_TAKEN');
    expect(helpers.get('invalidState')).toBe('INVALID_STATE');
    expect(helpers.get('notFound')).toBe('NOT_FOUND');
  });

  it.each(keys)('%s is raised somewhere in src/', (key) => {
    const named = elsewhere.includes(`'${key}'`);
    const throughHelper = [...helpers].some(
      ([name, raised]) => raised === key && new RegExp(`\\b${name}\\(`).test(elsewhere),
    );
    expect(named || throughHelper, `nothing in src/ raises ${key}`).toBe(true);
  });

  it.each(keys)('%s is in the table of docs/reference/errors.md with its status and GraphQL code', (key) => {
    const { status, graphqlCode, message } = errorRegistry[key];
    expect(read('docs/reference/errors.md')).toContain(
      `| \`${key}\` | ${status} | \`${graphqlCode}\` | \`${message}\` |`,
    );
  });

  it('has no row in docs/reference/errors.md for a code the registry does not have', () => {
    const rows = [...read('docs/reference/errors.md').matchAll(/^\| `([A-Z_]+)` \| \d{3} \|/gm)].map((row) => row[1]);
    expect(rows.sort()).toEqual([...keys].sort());
  });

  it('lists every GraphQL code in the SDL ErrorCode enum, and nothing else', () => {
    const enumBody = /enum ErrorCode \{([^}]*)\}/.exec(read('schema/base.graphql'))![1]!;
    const values = enumBody
      .split('\n')
      .map((line) => line.trim())
      .filter((line) => /^[A-Z_]+$/.test(line));
    expect(new Set(values)).toEqual(new Set(keys.map((key) => errorRegistry[key].graphqlCode)));
  });

  it.each(keys.filter((key) => !DATA_PLANE_ONLY_ERRORS.includes(key)))('%s is documented in openapi.yaml', (key) => {
    expect(read('openapi.yaml')).toContain(errorRegistry[key].message);
  });
});
