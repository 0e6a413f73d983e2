import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { makeExecutableSchema } from '@graphql-tools/schema';
import type { Resolvers } from '../../__generated__/graphql';
import { catalogResolvers } from '../../modules/catalog/catalog.resolvers';
import { Int64 } from './scalars';

export const SCHEMA_DIR = resolve(import.meta.dirname, '../../../schema');

/** The SDL files of schema/, the source of truth of the GraphQL contract. */
export function readTypeDefs(dir = SCHEMA_DIR): string[] {
  return readdirSync(dir)
    .filter((file) => file.endsWith('.graphql'))
    .sort()
    .map((file) => readFileSync(join(dir, file), 'utf8'));
}

const baseResolvers: Resolvers = {
  Int64,
  Query: { ping: () => true },
};

export function buildSchema() {
  return makeExecutableSchema({ typeDefs: readTypeDefs(), resolvers: [baseResolvers, catalogResolvers] });
}
