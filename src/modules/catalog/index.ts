import type { Module } from '../context';
import { catalogResolvers } from './catalog.resolvers';
import { CatalogService } from './catalog.service';

declare module '../context' {
  interface Services {
    catalog: CatalogService;
  }
}

const prismaRow = (model: string) => `../../__generated__/prisma/client#${model} as ${model}Row`;

/** Products, businesses, warehouses, positions and sales channels. */
export const catalogModule: Module = {
  name: 'catalog',
  services: ({ db, cursors }) => ({ catalog: new CatalogService(db, cursors) }),
  graphql: {
    schema: 'catalog.graphql',
    resolvers: [catalogResolvers],
    mappers: Object.fromEntries(
      ['Product', 'Business', 'Warehouse', 'Position', 'SalesChannel'].map((model) => [model, prismaRow(model)]),
    ),
  },
};
