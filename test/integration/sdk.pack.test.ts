/**
 * The TypeScript client as another project gets it: `npm pack` builds it, a fresh project installs
 * the tarball (its dependencies linked from this repository's node_modules, so no registry is
 * asked) and compiles a program using it, under Node's module resolution and a bundler's.
 */
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OPENAPI_FILE } from '../../src/kernel/rest/openapi-yaml';
import {
  compile,
  createProject,
  linkedDependencies,
  MODULE_SETTINGS,
  REPO_ROOT,
  run,
  type ModuleSetting,
} from '../helpers/typescript-project';

const CLIENT_DIR = join(REPO_ROOT, 'clients/typescript');
const readJson = (file: string) => JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
const client = readJson(join(CLIENT_DIR, 'package.json')) as {
  name: string;
  version: string;
  dependencies?: Record<string, string>;
};

/** Uses REST and GraphQL through the package's types; the expected errors prove the types are not `any`. */
const CONSUMER = `import { createClient, type CommerceClient, type components } from '@commerce-platform/client';
import { InventoryDocument, type InventoryQuery } from '@commerce-platform/client/operations';

const client: CommerceClient = createClient({ baseUrl: 'http://127.0.0.1:3000', token: 'cpk_example' });

export async function availableUnits(sku: string): Promise<number | undefined> {
  const stock = await client.graphql(InventoryDocument, { sku });
  const data: InventoryQuery | null | undefined = stock.data;
  // @ts-expect-error: the operation has no variable \`name\`
  await client.graphql(InventoryDocument, { name: sku });
  return data?.inventory.edges[0]?.node.quantity_available;
}

export async function routesOf(key: string): Promise<components['schemas']['Proxy']['routes'] | string> {
  const { data, error } = await client.rest.GET('/api/storage/edge/proxies/{key}', { params: { path: { key } } });
  if (error) return error.error.message;
  // @ts-expect-error: no such path
  await client.rest.GET('/api/no-such-path');
  return data.data.routes;
}
`;

describe('the TypeScript client package', () => {
  let tarball: string;
  let files: string[];
  const dirs: string[] = [];

  beforeAll(() => {
    const destination = createProject('sdk-pack-');
    dirs.push(destination);
    const packed = run('npm', ['pack', '--json', '--pack-destination', destination], CLIENT_DIR);
    expect(packed.status, packed.output).toBe(0);
    // The build's own output comes before the JSON.
    const report = JSON.parse(packed.stdout.slice(packed.stdout.indexOf('[\n'))) as {
      filename: string;
      files: { path: string }[];
    }[];
    tarball = join(destination, report[0]!.filename);
    files = report[0]!.files.map((file) => file.path);
  }, 120_000);

  afterAll(() => {
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  it("has the API's version: the root package's, which is openapi.yaml's info.version", () => {
    const root = readJson(join(REPO_ROOT, 'package.json'));
    const contract = parse(readFileSync(OPENAPI_FILE, 'utf8')) as { info: { version: string } };
    expect(client.version).toBe(root.version);
    expect(client.version).toBe(contract.info.version);
  });

  it('ships JavaScript and declarations, no TypeScript sources', () => {
    expect(files).toEqual(
      expect.arrayContaining([
        'package.json',
        'dist/index.js',
        'dist/index.d.ts',
        'dist/__generated__/graphql/graphql.js',
        'dist/__generated__/graphql/graphql.d.ts',
      ]),
    );
    expect(files.filter((file) => /\.[cm]?ts$/.test(file) && !/\.d\.[cm]?ts$/.test(file))).toEqual([]);
  });

  it('installs into a fresh project, which compiles against it under nodenext and bundler resolution', () => {
    const project = createProject('sdk-consumer-', linkedDependencies(Object.keys(client.dependencies ?? {})));
    dirs.push(project);
    const installed = run(
      'npm',
      ['install', '--offline', '--no-audit', '--no-fund', '--ignore-scripts', tarball],
      project,
    );
    expect(installed.status, installed.output).toBe(0);
    mkdirSync(join(project, 'src'));
    writeFileSync(join(project, 'src/main.ts'), CONSUMER);
    for (const setting of Object.keys(MODULE_SETTINGS) as ModuleSetting[]) {
      const result = compile(project, setting);
      expect(result.output, setting).toBe('');
      expect(result.status, setting).toBe(0);
    }
  }, 120_000);
});
