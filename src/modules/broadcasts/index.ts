import { Gauge } from 'prom-client';
import { deleteInBatches } from '../../kernel/batched-delete';
import type { Db, Tx } from '../../kernel/db';
import { METRICS_PREFIX, scrapeQuery } from '../../kernel/metrics';
import type { Module } from '../context';
import * as repository from './broadcasts.repository';
import * as orderEvents from './order-events.repository';
import * as stockEvents from './stock-events.repository';
import { startBroadcastWorker } from './broadcast-worker';
import { broadcastResolvers } from './broadcasts.resolvers';
import { BroadcastService } from './broadcasts.service';
import { StockEventService } from './stock-events.service';

declare module '../context' {
  interface Services {
    broadcasts: BroadcastService;
    stockEvents: StockEventService;
  }
}

/** Sales channels' webhooks and the signed delivery of every stock change and stock event to them. */
export const broadcastsModule: Module = {
  name: 'broadcasts',
  services: ({ db, config, cursors, bundles, preferences }) => {
    // The low-stock level of a bundle with new components, or of a SKU with a new reorder point, as
    // it is now, without a stock event: the next fall fires.
    const rebase = (tx: Tx, change: { tenantId: string; pairs: { productId: string; warehouseId: string }[] }) =>
      stockEvents.rebaseStockAlerts(tx, change.tenantId, change.pairs);
    bundles.componentsChanged.subscribe(rebase);
    preferences.reorderPointsChanged.subscribe(rebase);
    return {
      broadcasts: new BroadcastService(db, config.broadcasts),
      stockEvents: new StockEventService(db, cursors),
    };
  },
  graphql: {
    schema: 'broadcasts.graphql',
    resolvers: [broadcastResolvers],
    mappers: { StockEvent: './stock-events.repository#StockEventRecord' },
  },
  // Every process delivers; claims keep two processes from sending the same delivery.
  workers: ({ broadcasts }, logError) => [startBroadcastWorker(broadcasts, logError)],
  metrics(registry, { db }) {
    new Gauge({
      name: `${METRICS_PREFIX}broadcast_backlog`,
      help: 'Channel broadcast deliveries waiting to be sent (the outbox), and the age in seconds of the oldest.',
      labelNames: ['measure'],
      registers: [registry],
      async collect() {
        const backlog = await scrapeQuery(() => repository.backlog(db));
        if (!backlog) return;
        this.set({ measure: 'pending' }, backlog.pending);
        this.set({ measure: 'oldest_age_seconds' }, backlog.oldest);
      },
    });
  },
};

/**
 * Order events (placed, paid, shipped, canceled, refunded) to the webhook of the order's channel,
 * queued in the caller's transaction.
 */
export { ORDER_EVENT_TYPES, queueOrderEvent, type OrderEvent, type OrderEventType } from './order-events.repository';

/**
 * Housekeeping: deletes deliveries (stock broadcasts and order events) done (PROCESSED or FAILING) more than
 * BROADCAST_DELIVERY_RETENTION_DAYS ago, in batches. Returns how many.
 */
export const deleteFinishedDeliveries = async (db: Db, days: number, options: { stopping?: () => boolean } = {}) =>
  (await deleteInBatches((limit) => repository.deleteFinishedDeliveries(db, days, limit), options)) +
  (await deleteInBatches((limit) => orderEvents.deleteFinishedOrderEvents(db, days, limit), options));
