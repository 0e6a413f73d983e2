/**
 * The typed-client guide's recipe (docs/guides/typed-client.md) for generating a client "in a project
 * of your own", run as written in a fresh ESM project: the contracts as the service serves them,
 * openapi-typescript and graphql-codegen with the recipe's codegen.ts, then a program using both
 * compiled with `module: nodenext`, which needs every relative import written with its `.js` extension.
 */
import { mkdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadContracts } from '../../src/modules/reference/contracts';
import { compile, createProject, REPO_MODULES, run } from '../helpers/typescript-project';

/** The codegen.ts of the guide's recipe, word for word. */
const RECIPE_CODEGEN = `import type { CodegenConfig } from '@graphql-codegen/cli';

const config: CodegenConfig = {
  schema: 'schema.graphql',
  documents: 'src/**/*.graphql',
  generates: {
    'src/api/graphql/': {
      preset: 'client',
      config: {
        documentMode: 'string',
        // Relative imports as './graphql.js', which Node's ESM resolution (module: nodenext) requires.
        emitLegacyCommonJSImports: false,
        useTypeImports: true,
        scalars: { Int64: 'number', QueryFilter: 'string' },
      },
    },
  },
};

export default config;
`;

const OPERATION = `query Inventory($sku: String) {
  inventory(sku: $sku, first: 10) {
    edges {
      node {
        sku
        quantity_available
      }
    }
  }
}
`;

const PROGRAM = `import createClient from 'openapi-fetch';
import type { paths } from './api/openapi.js';
import { InventoryDocument, type InventoryQuery } from './api/graphql/graphql.js';

const rest = createClient<paths>({ baseUrl: 'http://127.0.0.1:3000', headers: { authorization: 'Bearer cpk_example' } });

export async function routesOf(key: string) {
  const { data } = await rest.GET('/api/storage/edge/proxies/{key}', { params: { path: { key } } });
  return data?.data.routes;
}

export async function availableUnits(sku: string): Promise<number | undefined> {
  const response = await fetch('http://127.0.0.1:3000/graphql', {
    method: 'POST',
    headers: { authorization: 'Bearer cpk_example', 'content-type': 'application/json' },
    body: JSON.stringify({ query: InventoryDocument.toString(), variables: { sku } }),
  });
  const { data } = (await response.json()) as { data?: InventoryQuery };
  return data?.inventory.edges[0]?.node.quantity_available;
}
`;

describe("the typed-client guide's recipe for a project of one's own", () => {
  const dirs: string[] = [];
  afterAll(() => {
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  it('generates a client that compiles under module nodenext', () => {
    const project = createProject('sdk-recipe-');
    dirs.push(project);
    // The recipe's packages (openapi-fetch, openapi-typescript, @graphql-codegen/*), as installed here.
    symlinkSync(REPO_MODULES, join(project, 'node_modules'), 'dir');
    const contracts = loadContracts('http://127.0.0.1:3000');
    writeFileSync(join(project, 'openapi.json'), contracts.json.body);
    writeFileSync(join(project, 'schema.graphql'), contracts.sdl.body);
    writeFileSync(join(project, 'codegen.ts'), RECIPE_CODEGEN);
    mkdirSync(join(project, 'src'));
    writeFileSync(join(project, 'src/inventory.graphql'), OPERATION);
    writeFileSync(join(project, 'src/main.ts'), PROGRAM);

    const rest = run('npx', ['--no', 'openapi-typescript', 'openapi.json', '-o', 'src/api/openapi.ts'], project);
    expect(rest.status, rest.output).toBe(0);
    const graphql = run('npx', ['--no', 'graphql-codegen', '--config', 'codegen.ts'], project);
    expect(graphql.status, graphql.output).toBe(0);
    const result = compile(project, 'nodenext');
    expect(result.output).toBe('');
    expect(result.status).toBe(0);
  }, 180_000);
});
