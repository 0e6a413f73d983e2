import type { Module } from '../context';
import { createSearchServices, type SearchServices } from './search.module';
import { searchOperations } from './search.routes';

declare module '../context' {
  interface Services {
    search: SearchServices;
  }
}

/** Search indexes, documents, searches, settings, clicks and analytics. */
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
  // Searches waiting for their batch are written before the database closes.
  close: ({ search }) => search.close(),
};
