import type { Module } from '../context';
import { inventoryOperations } from './inventory.routes';
import { stockResolvers } from './stock.resolvers';
import { StockService } from './stock.service';

declare module '../context' {
  interface Services {
    stock: StockService;
  }
}

/** Inventory lines, the grouped inventory, the stock ledger and the REST inventory writes. */
export const stockModule: Module = {
  name: 'stock',
  services: ({ db, cursors }) => ({ stock: new StockService(db, cursors) }),
  rest: inventoryOperations,
  graphql: {
    schema: 'stock.graphql',
    resolvers: [stockResolvers],
    mappers: {
      Inventory: './stock.types#InventoryGroup',
      InventoryItem: './stock.types#InventoryLine',
      StockMutation: './stock.types#LedgerEntry',
      Location: './stock.types#StockLocation',
      StockMutationReference: './stock.types#StockReference',
      InventoryList: './stock.types#StockReference',
    },
  },
};
