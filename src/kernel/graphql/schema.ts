import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { makeExecutableSchema } from '@graphql-tools/schema';
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
  return makeExecutableSchema({
    typeDefs: readTypeDefs(modules.map((module) => module.schema)),
    resolvers: [baseResolvers, ...modules.flatMap((module) => module.resolvers ?? [])] as Record<string, never>[],
  });
}
