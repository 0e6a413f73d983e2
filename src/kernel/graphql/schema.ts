import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { makeExecutableSchema } from '@graphql-tools/schema';
import type { Resolvers } from '../../__generated__/graphql';
import { broadcastResolvers } from '../../modules/broadcasts/broadcasts.resolvers';
import { catalogResolvers } from '../../modules/catalog/catalog.resolvers';
import { orderResolvers } from '../../modules/orders/orders.resolvers';
import { preferenceResolvers } from '../../modules/preferences/preferences.resolvers';
import { reservationResolvers } from '../../modules/reservations/reservations.resolvers';
import { supplyResolvers } from '../../modules/supply/supply.resolvers';
import { stockResolvers } from '../../modules/stock/stock.resolvers';
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
  return makeExecutableSchema({ typeDefs: readTypeDefs(), resolvers: [baseResolvers, catalogResolvers, stockResolvers, reservationResolvers, orderResolvers, preferenceResolvers, supplyResolvers, broadcastResolvers] });
}
