import { Counter } from 'prom-client';
import { gaugePerRow, METRICS_PREFIX } from '../../kernel/metrics';
import type { Module } from '../context';
import { registerDeliveryMetrics } from './delivery/delivery-metrics';
import * as repository from './search.repository';
import { createSearchServices, type SearchServices } from './search.module';
import { searchOperations } from './search.routes';

export { deleteExpiredSearchAnalytics } from './analytics/retention';
/** The shapes of a search through a proxy key, for the modules that search on a tenant's behalf (UCP's catalog). */
export type { FilterData, SearchContextData, SearchResponseEntryData } from './search.schemas';

declare module '../context' {
  interface Services {
    search: SearchServices;
  }
}

/** Search indexes, documents, searches, settings, clicks, events and analytics. */
export const searchModule: Module = {
  name: 'search',
  services: ({ config, db, cursors, masterKey, baseUrl, log }) => ({
    search: createSearchServices({
      config,
      db,
      cursors,
      masterKey,
      baseUrl,
      onBackgroundError: (error) =>
        log.error({ err: error }, 'search: a background task (re-indexing or the search log) failed'),
    }),
  }),
  rest: searchOperations,
  start: ({ search }) => search.start(),
  // Every process delivers what is due to Typesense; the embedded engine needs no deliveries.
  workers: ({ search }, logError) => (search.deliveries ? [search.deliveries.startWorker(logError)] : []),
  readiness: ({ search: { engine } }) => (engine.probe ? { [engine.name]: () => engine.probe!() } : {}),
  // Searches waiting for their batch are written before the database closes.
  close: ({ search }) => search.close(),
  metrics(registry, { db, search }) {
    if (search.deliveries) registerDeliveryMetrics(registry, db);
    // The largest indexes by id: each is a series of its own, so their number is bounded.
    const perIndex = (name: string, help: string, measure: (row: repository.IndexSize) => number) =>
      gaugePerRow(registry, {
        name,
        help,
        label: 'index',
        read: () => repository.indexSizes(db, 100),
        labelOf: (row) => row.id,
        measure,
      });
    perIndex(
      'search_index_documents',
      'Documents stored per search index (the 100 largest), by index id.',
      (row) => row.documents,
    );
    perIndex(
      'search_index_catch_up_lag',
      'Index versions written but not yet applied to the search engine, per index (the 100 largest).',
      (row) => row.lag,
    );
    new Counter({
      name: `${METRICS_PREFIX}search_log_dropped_total`,
      help: 'Searches not counted for analytics because the database refused their counts (each is also logged).',
      registers: [registry],
      collect() {
        this.reset();
        this.inc(search.log.dropped);
      },
    });
  },
};
