/**
 * The search module as another process of a test app builds it: the app's database, cursors and
 * base URL, with the Typesense server (or stand-in) and settings a test chooses.
 */
import type { Config } from '../../src/kernel/config';
import { createSearchServices, type SearchServices } from '../../src/modules/search/search.module';
import { TEST_MASTER_KEY, type TestApp } from './app';

/** A failure off the request path fails the test, unless the test collects them. */
const rethrow = (error: unknown) => {
  throw error;
};

export function searchServicesOf(
  app: Pick<TestApp, 'config' | 'db' | 'services'>,
  options: {
    typesenseUrl: string | undefined;
    typesenseApiKey: string | undefined;
    /** Settings besides the Typesense server's. */
    config?: Partial<Config>;
    onBackgroundError?: (error: unknown) => void;
  },
): SearchServices {
  return createSearchServices({
    config: {
      ...app.config,
      ...options.config,
      typesenseUrl: options.typesenseUrl,
      typesenseApiKey: options.typesenseApiKey,
    },
    db: app.db,
    cursors: app.services.cursors,
    masterKey: TEST_MASTER_KEY,
    baseUrl: app.services.baseUrl,
    onBackgroundError: options.onBackgroundError ?? rethrow,
  });
}
