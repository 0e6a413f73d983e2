import { createHmac } from 'node:crypto';
import type { Config } from '../../kernel/config';
import type { CursorCodec } from '../../kernel/cursor';
import type { Db } from '../../kernel/db';
import { AnalyticsService } from './analytics/analytics.service';
import { createQueryIdCodec } from './analytics/query-ids';
import { SearchEventsService } from './analytics/search-events.service';
import { SearchLog } from './analytics/search-log';
import { createClickCodec } from './click-codes';
import { EmbeddedEngine } from './engine/embedded-engine';
import type { SearchEngine } from './engine/engine';
import { TypesenseEngine } from './engine/typesense-engine';
import { IndexRows } from './index-rows';
import { IndexService } from './indexes.service';
import { SearchService } from './search.service';

export interface SearchServices {
  engine: SearchEngine;
  indexes: IndexService;
  search: SearchService;
  events: SearchEventsService;
  analytics: AnalyticsService;
  log: SearchLog;
  /** Checks the engine before the service listens (a Typesense server of an unsupported version is refused). */
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
    ? new TypesenseEngine(db, { url: config.typesenseUrl, apiKey: config.typesenseApiKey ?? '' })
    : new EmbeddedEngine(db);
  // Derived from the master key, so every process of a deployment signs and accepts the same click codes and
  // query ids.
  const clicks = createClickCodec(createHmac('sha256', masterKey).update('search-click-codes').digest());
  const queryIds = createQueryIdCodec(createHmac('sha256', masterKey).update('search-query-ids').digest());
  const log = new SearchLog(db, onBackgroundError);
  const retentionDays = config.searchAnalyticsRetentionDays;
  return {
    engine,
    indexes: new IndexService(db, cursors, engine, onBackgroundError),
    search: new SearchService(db, engine, clicks, queryIds, log, baseUrl, new IndexRows(db), retentionDays),
    events: new SearchEventsService(db, queryIds, retentionDays),
    analytics: new AnalyticsService(db, log),
    log,
    async start() {
      await engine.start?.();
    },
    async close() {
      await log.flush();
      await engine.close();
    },
  };
}
