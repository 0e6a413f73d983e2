import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { makeExecutableSchema } from '@graphql-tools/schema';
import { mapSchema, MapperKind } from '@graphql-tools/utils';
import { defaultFieldResolver, type GraphQLSchema } from 'graphql';
import { invalidInput, unstorableTextProblems } from '../validation';
import { Int64 } from './scalars';

export const SCHEMA_DIR = resolve(import.meta.dirname, '../../../schema');

/** The kernel's own SDL: the Query root, Int64, ErrorCode and PageInfo, which every module extends. */
export const BASE_SCHEMA_FILE = 'base.graphql';

/** The SDL files of `schema/` (the source of truth of the GraphQL contract), base first. */
export function readTypeDefs(files: string[], dir = SCHEMA_DIR): string[] {
  return [BASE_SCHEMA_FILE, ...files].map((file) => readFileSync(join(dir, file), 'utf8'));
}

const baseResolvers = {
  Int64,
  Query: { ping: () => true },
};

/** The executable schema of the base SDL plus the modules' SDL files and resolver maps. */
export function buildSchema(modules: { schema: string; resolvers?: object[] }[]) {
  return withTextRule(
    makeExecutableSchema({
      typeDefs: readTypeDefs(modules.map((module) => module.schema)),
      resolvers: [baseResolvers, ...modules.flatMap((module) => module.resolvers ?? [])] as Record<string, never>[],
    }),
  );
}

/**
 * The text rule of every input (see `safeParseInput`) for GraphQL: every field that takes
 * arguments refuses U+0000 and unpaired surrogates anywhere in them with VALIDATION_ERROR naming
 * the place (`input.items[0].sku`), before its resolver runs, whatever the resolver parses.
 */
function withTextRule(schema: GraphQLSchema): GraphQLSchema {
  return mapSchema(schema, {
    [MapperKind.OBJECT_FIELD]: (field) => {
      if (!field.args || Object.keys(field.args).length === 0) return field;
      const resolve = field.resolve ?? defaultFieldResolver;
      return {
        ...field,
        resolve(source, args, context, info) {
          const problems = unstorableTextProblems(args);
          if (problems.length > 0) throw invalidInput(problems);
          return resolve(source, args, context, info);
        },
      };
    },
  });
}
