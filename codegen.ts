import type { CodegenConfig } from '@graphql-codegen/cli';

/** Resolver signatures typed from the SDL in schema/, with GraphQL types mapped to Prisma rows. */
const config: CodegenConfig = {
  schema: 'schema/*.graphql',
  generates: {
    'src/__generated__/graphql.ts': {
      plugins: ['typescript', 'typescript-resolvers'],
      config: {
        useTypeImports: true,
        enumsAsTypes: true,
        contextType: '../kernel/graphql/context#GraphQLContext',
        scalars: { Int64: 'number' },
        mappers: {
          Product: './prisma/client#Product as ProductRow',
        },
      },
    },
  },
};

export default config;
