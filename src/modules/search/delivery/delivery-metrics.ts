/** The delivery queue in `/metrics`: how much each index waits for, and for how long. */
import { Gauge, type Registry } from 'prom-client';
import type { Db } from '../../../kernel/db';
import { gaugePerRow, METRICS_PREFIX, scrapeQuery } from '../../../kernel/metrics';
import * as repository from './delivery.repository';

/** The indexes waiting longest are series of their own; the rest only count in the total. */
const MAX_SERIES = 100;

export function registerDeliveryMetrics(registry: Registry, db: Db) {
  const pending = () => repository.pendingDeliveries(db, MAX_SERIES);
  const perIndex = (name: string, help: string, measure: (row: repository.PendingDelivery) => number) =>
    gaugePerRow(registry, {
      name,
      help,
      label: 'index',
      read: pending,
      labelOf: (row) => row.indexId,
      measure,
    });
  perIndex(
    'search_delivery_pending_versions',
    'Versions of a search index committed but not yet delivered to the search engine, per index (the ' +
      `${MAX_SERIES} waiting longest), by index id.`,
    (row) => row.versions,
  );
  perIndex(
    'search_delivery_oldest_age_seconds',
    'Seconds since the oldest change of a search index not yet delivered to the search engine was committed, ' +
      `per index (the ${MAX_SERIES} waiting longest), by index id.`,
    (row) => row.ageSeconds,
  );
  new Gauge({
    name: `${METRICS_PREFIX}search_delivery_pending_indexes`,
    help: 'Search indexes with changes not yet delivered to the search engine.',
    registers: [registry],
    async collect() {
      const rows = await scrapeQuery(pending);
      if (rows) this.set(rows[0]?.total ?? 0);
    },
  });
}
