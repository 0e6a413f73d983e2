import type { Module } from '../context';
import { supplyResolvers } from './supply.resolvers';
import { SupplyService } from './supply.service';

declare module '../context' {
  interface Services {
    supply: SupplyService;
  }
}

/** Announcements of incoming goods and the supplies that receive them. */
export const supplyModule: Module = {
  name: 'supply',
  services: ({ db }) => ({ supply: new SupplyService(db) }),
  graphql: {
    schema: 'supply.graphql',
    resolvers: [supplyResolvers],
    mappers: {
      Announcement: './supply.repository#AnnouncementRecord',
      AnnouncementItem: './supply.repository#AnnouncementItemRecord',
      Supply: './supply.repository#SupplyRecord',
      SupplyItem: './supply.repository#SupplyItemRecord',
    },
  },
};
