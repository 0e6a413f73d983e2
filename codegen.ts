import { posix } from 'node:path';
import type { CodegenConfig } from '@graphql-codegen/cli';
import { BASE_SCHEMA_FILE } from './src/kernel/graphql/schema';
import { modules } from './src/modules';

const withGraphQL = modules.flatMap((module) => (module.graphql ? [{ name: module.name, ...module.graphql }] : []));

/**
 * Resolver signatures typed from every module's SDL in schema/, with GraphQL types mapped to the
 * rows their resolvers receive (each module names its mappers relative to its own folder), and the
 * typed operations of the TypeScript client.
 */
const config: CodegenConfig = {
  schema: [BASE_SCHEMA_FILE, ...withGraphQL.map((module) => module.schema)].map((file) => `schema/${file}`),
  generates: {
    'src/__generated__/graphql.ts': {
      plugins: ['typescript', 'typescript-resolvers'],
      config: {
        useTypeImports: true,
        enumsAsTypes: true,
        contextType: '../modules/context#GraphQLContext',
        scalars: { Int64: 'number', QueryFilter: 'string' },
        // Paths relative to src/__generated__/, where the generated file lives.
        mappers: Object.fromEntries(
          withGraphQL.flatMap((module) =>
            Object.entries(module.mappers ?? {}).map(([type, target]) => [
              type,
              posix.join('../modules', module.name, target),
            ]),
          ),
        ),
      },
    },
    // The typed documents of the TypeScript client (clients/typescript), one per operation file.
    'clients/typescript/src/__generated__/graphql/': {
      documents: ['clients/typescript/operations/*.graphql'],
      preset: 'client',
      presetConfig: { fragmentMasking: false },
      config: {
        // `./graphql.js`, not `./graphql`: the package is ESM and compiles under `module: nodenext`.
        emitLegacyCommonJSImports: false,
        documentMode: 'string',
        useTypeImports: true,
        enumsAsTypes: true,
        scalars: { Int64: 'number', QueryFilter: 'string' },
      },
    },
  },
};

export default config;
