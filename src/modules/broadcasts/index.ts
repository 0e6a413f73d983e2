import type { Module } from '../context';
import { startBroadcastWorker } from './broadcast-worker';
import { broadcastResolvers } from './broadcasts.resolvers';
import { BroadcastService } from './broadcasts.service';

declare module '../context' {
  interface Services {
    broadcasts: BroadcastService;
  }
}

/** Sales channels' webhooks and the signed delivery of every stock change to them. */
export const broadcastsModule: Module = {
  name: 'broadcasts',
  services: ({ db, config }) => ({ broadcasts: new BroadcastService(db, config.broadcasts) }),
  graphql: { schema: 'broadcasts.graphql', resolvers: [broadcastResolvers] },
  // Every process delivers; claims keep two processes from sending the same delivery.
  workers: ({ broadcasts }, logError) => [startBroadcastWorker(broadcasts, logError)],
};
