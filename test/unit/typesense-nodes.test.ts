import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/kernel/config';
import { typesenseUrls } from '../../src/modules/search/engine/typesense-engine';

describe('the Typesense nodes of TYPESENSE_URL', () => {
  it('are one URL or several separated by commas', () => {
    expect(typesenseUrls('https://ts.example.com')).toEqual(['https://ts.example.com']);
    expect(typesenseUrls('http://ts-1:8108, http://ts-2:8108/prefix ,')).toEqual([
      'http://ts-1:8108',
      'http://ts-2:8108/prefix',
    ]);
  });

  it('must each be an http or https URL, or the service does not start', () => {
    const config = loadConfig({ TYPESENSE_URL: 'http://ts-1:8108,https://ts-2', TYPESENSE_API_KEY: 'k' });
    expect(config.typesenseUrl).toBe('http://ts-1:8108,https://ts-2');
    for (const url of ['ts-1:8108', 'http://ts-1:8108,,http://ts-2', 'http://ts-1:8108;http://ts-2', 'ftp://ts']) {
      expect(() => loadConfig({ TYPESENSE_URL: url })).toThrow(ConfigError);
    }
    expect(() => loadConfig({ TYPESENSE_URL: 'ts-1:8108' })).toThrow(
      'TYPESENSE_URL must be the URL of a Typesense node (http or https), or several separated by commas',
    );
  });

  it('are asked with the client settings given, or their defaults', () => {
    expect(loadConfig({}).typesense).toEqual({
      nearestUrl: undefined,
      timeoutSeconds: 10,
      retries: undefined,
      retryIntervalSeconds: 0.1,
      healthcheckIntervalSeconds: 60,
    });
    const config = loadConfig({
      TYPESENSE_NEAREST_URL: 'http://ts-1:8108',
      TYPESENSE_TIMEOUT_SECONDS: '2.5',
      TYPESENSE_RETRIES: '4',
      TYPESENSE_RETRY_INTERVAL_SECONDS: '0.5',
      TYPESENSE_HEALTHCHECK_INTERVAL_SECONDS: '15',
    });
    expect(config.typesense).toEqual({
      nearestUrl: 'http://ts-1:8108',
      timeoutSeconds: 2.5,
      retries: 4,
      retryIntervalSeconds: 0.5,
      healthcheckIntervalSeconds: 15,
    });
  });

  it('get failed deliveries retried from SEARCH_DELIVERY_BACKOFF_MS up to SEARCH_DELIVERY_MAX_BACKOFF_MS', () => {
    expect(loadConfig({}).searchDelivery).toEqual({ backoffMs: 1_000, maxBackoffMs: 60_000 });
    expect(() => loadConfig({ SEARCH_DELIVERY_BACKOFF_MS: '5000', SEARCH_DELIVERY_MAX_BACKOFF_MS: '1000' })).toThrow(
      'SEARCH_DELIVERY_MAX_BACKOFF_MS must be at least SEARCH_DELIVERY_BACKOFF_MS (5000)',
    );
  });
});
