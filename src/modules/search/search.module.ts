import { createHmac } from 'node:crypto';
import type { Config } from '../../kernel/config';
import type { CursorCodec } from '../../kernel/cursor';
import type { Db } from '../../kernel/db';
import { AnalyticsService } from './analytics/analytics.service';
import { createQueryIdCodec } from './analytics/query-ids';
import { SearchEventsService } from './analytics/search-events.service';
import { SearchLog } from './analytics/search-log';
import { createClickCodec } from './click-codes';
import { InProcessDelivery, type ChangeDelivery } from './delivery/change-delivery';
import { DeliveryQueue } from './delivery/delivery-queue';
import { EmbeddedEngine } from './engine/embedded-engine';
import type { SearchEngine } from './engine/engine';
import { TypesenseEngine } from './engine/typesense-engine';
import { UnsupportedTypesenseVersion } from './engine/typesense-version';
import { IndexRows } from './index-rows';
import { IndexService } from './indexes.service';
import { SearchService } from './search.service';
import { SuggestionsService } from './suggestions/suggestions.service';

export interface SearchServices {
  engine: SearchEngine;
  /** The queue of deliveries to Typesense; null with the embedded engine, whose copies catch up by themselves. */
  deliveries: DeliveryQueue | null;
  indexes: IndexService;
  search: SearchService;
  events: SearchEventsService;
  analytics: AnalyticsService;
  suggestions: SuggestionsService;
  log: SearchLog;
  /**
   * Checks the engine before the service listens: a Typesense server of an unsupported version is
   * refused; one that cannot be reached is reported and asked again when first needed.
   */
  start(): Promise<void>;
  /** Writes pending searches and releases the engine. */
  close(): Promise<void>;
}

export interface SearchDependencies {
  config: Config;
  db: Db;
  cursors: CursorCodec;
  masterKey: string;
  baseUrl: string;
  /** Where failures off the request path (background re-indexing, search logging) are reported: the app's logger. */
  onBackgroundError: (error: unknown) => void;
}

/** Builds the search module: Typesense when TYPESENSE_URL is set, the embedded engine otherwise. */
export function createSearchServices({
  config,
  db,
  cursors,
  masterKey,
  baseUrl,
  onBackgroundError,
}: SearchDependencies): SearchServices {
  const engine: SearchEngine = config.typesenseUrl
    ? new TypesenseEngine(db, { url: config.typesenseUrl, apiKey: config.typesenseApiKey ?? '', ...config.typesense })
    : new EmbeddedEngine(db);
  const deliveries = engine.catchesUpOnSearch
    ? null
    : new DeliveryQueue(db, engine, config.searchDelivery, onBackgroundError);
  const delivery: ChangeDelivery = deliveries ?? new InProcessDelivery(db);
  // Derived from the master key, so every process of a deployment signs and accepts the same click codes and
  // query ids.
  const clicks = createClickCodec(createHmac('sha256', masterKey).update('search-click-codes').digest());
  const queryIds = createQueryIdCodec(createHmac('sha256', masterKey).update('search-query-ids').digest());
  const log = new SearchLog(db, onBackgroundError);
  const retentionDays = config.searchAnalyticsRetentionDays;
  // Clicks and events of a search whose rows were counted already are not stored (at most retentionDays).
  const eventsRetentionDays = config.searchEventsRetentionDays;
  const rows = new IndexRows(db, { pooled: config.databaseDirectUrl !== undefined });
  return {
    engine,
    deliveries,
    indexes: new IndexService(db, cursors, engine, delivery, onBackgroundError),
    search: new SearchService(db, engine, clicks, queryIds, log, baseUrl, rows, eventsRetentionDays),
    events: new SearchEventsService(db, queryIds, eventsRetentionDays),
    analytics: new AnalyticsService(db, log),
    suggestions: new SuggestionsService(db, rows, {
      refreshSeconds: config.searchSuggestionsRefreshSeconds,
      retentionDays,
      onBackgroundError,
    }),
    log,
    async start() {
      try {
        await engine.start?.();
      } catch (error) {
        // A server that is down or lagging now may be back in a moment: `/readyz` says so meanwhile.
        if (error instanceof UnsupportedTypesenseVersion) throw error;
        onBackgroundError(new Error('the search engine cannot be reached at start', { cause: error }));
      }
    },
    async close() {
      await log.flush();
      await engine.close();
    },
  };
}
