import type { Module } from '../context';
import { transferResolvers } from './transfers.resolvers';
import { TransferService } from './transfers.service';

declare module '../context' {
  interface Services {
    transfers: TransferService;
  }
}

/** Stock moving between the tenant's warehouses: committed at the source, shipped, received at the destination. */
export const transfersModule: Module = {
  name: 'transfers',
  services: ({ db }) => ({ transfers: new TransferService(db) }),
  graphql: {
    schema: 'transfers.graphql',
    resolvers: [transferResolvers],
    mappers: {
      Transfer: './transfers.repository#TransferRecord',
      TransferItem: './transfers.repository#TransferItemRecord',
    },
  },
};
