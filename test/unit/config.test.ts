import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/kernel/config';

describe('loadConfig', () => {
  it('has defaults that serve on 127.0.0.1:3000 with data in ./.data', () => {
    const config = loadConfig({});
    expect(config).toMatchObject({
      port: 3000,
      host: '127.0.0.1',
      dataDir: './.data',
      logLevel: 'info',
      databaseUrl: undefined,
    });
  });

  it('reads every variable and treats empty ones as unset', () => {
    const config = loadConfig({
      PORT: '8080',
      HOST: '0.0.0.0',
      DATABASE_URL: 'postgresql://u:p@db:5432/commerce',
      DATA_DIR: '/var/lib/commerce',
      MASTER_KEY: 'x'.repeat(32),
      TYPESENSE_URL: 'http://typesense:8108',
      TYPESENSE_API_KEY: 'ts',
      LOG_LEVEL: 'debug',
      PUBLIC_BASE_URL: 'https://api.example.com/',
      UNRELATED: 'ignored',
    });
    expect(config).toMatchObject({
      port: 8080,
      host: '0.0.0.0',
      databaseUrl: 'postgresql://u:p@db:5432/commerce',
      publicBaseUrl: 'https://api.example.com',
      logLevel: 'debug',
    });
    expect(loadConfig({ PORT: '' }).port).toBe(3000);
  });

  it('reads the edge data plane variables, with safe defaults', () => {
    expect(loadConfig({}).edge).toEqual({
      domain: undefined,
      originTimeoutMs: 30_000,
      cacheMaxBytes: 256 * 1024 * 1024,
      staleIfErrorSeconds: 300,
      maxResponseBytes: 1024 * 1024 * 1024,
      maxRequestBytes: 10 * 1024 * 1024,
      allowPrivateOrigins: false,
    });
    expect(
      loadConfig({
        EDGE_DOMAIN: 'edge.example.com',
        EDGE_ORIGIN_TIMEOUT_MS: '5000',
        EDGE_CACHE_MAX_BYTES: '0',
        EDGE_STALE_IF_ERROR_SECONDS: '60',
        EDGE_MAX_RESPONSE_BYTES: '1048576',
        EDGE_MAX_REQUEST_BYTES: '0',
        EDGE_ALLOW_PRIVATE_ORIGINS: 'true',
      }).edge,
    ).toEqual({
      domain: 'edge.example.com',
      originTimeoutMs: 5000,
      cacheMaxBytes: 0,
      staleIfErrorSeconds: 60,
      maxResponseBytes: 1048576,
      maxRequestBytes: 0,
      allowPrivateOrigins: true,
    });
    expect(loadConfig({ EDGE_ALLOW_PRIVATE_ORIGINS: '1' }).edge.allowPrivateOrigins).toBe(true);
  });

  it('takes a direct database URL beside a pooled one, and the pool size', () => {
    const config = loadConfig({
      DATABASE_URL: 'postgresql://app@pgbouncer:6432/shop',
      DATABASE_DIRECT_URL: 'postgresql://app@db:5432/shop',
      DATABASE_POOL_SIZE: '20',
    });
    expect(config).toMatchObject({
      databaseUrl: 'postgresql://app@pgbouncer:6432/shop',
      databaseDirectUrl: 'postgresql://app@db:5432/shop',
      databasePoolSize: 20,
    });
    expect(loadConfig({}).databasePoolSize).toBe(10);
    // The embedded database is direct: a direct URL alone says nothing.
    expect(() => loadConfig({ DATABASE_DIRECT_URL: 'postgresql://app@db:5432/shop' })).toThrow(/DATABASE_DIRECT_URL/);
  });

  it('gives refresh tokens a 30 s grace window and publishes signing keys 300 s before they sign', () => {
    expect(loadConfig({}).oauth).toMatchObject({ refreshGraceSeconds: 30, jwksMaxAgeSeconds: 300 });
    expect(loadConfig({ OAUTH_REFRESH_GRACE_SECONDS: '0', OAUTH_JWKS_MAX_AGE_SECONDS: '60' }).oauth).toMatchObject({
      refreshGraceSeconds: 0,
      jwksMaxAgeSeconds: 60,
    });
  });

  it('fetches client metadata documents from public addresses only, trusting extra CAs from a file', () => {
    expect(loadConfig({}).oauth).toMatchObject({ allowPrivateClientMetadata: false, clientMetadataCaFile: undefined });
    const set = loadConfig({
      OAUTH_ALLOW_PRIVATE_CLIENT_METADATA: 'true',
      OAUTH_CLIENT_METADATA_CA_FILE: '/etc/ca.pem',
    });
    expect(set.oauth).toMatchObject({ allowPrivateClientMetadata: true, clientMetadataCaFile: '/etc/ca.pem' });
    expect(() => loadConfig({ OAUTH_ALLOW_PRIVATE_CLIENT_METADATA: 'yes' })).toThrow(
      'OAUTH_ALLOW_PRIVATE_CLIENT_METADATA',
    );
  });

  it('keeps search analytics 90 days unless SEARCH_ANALYTICS_RETENTION_DAYS says otherwise', () => {
    expect(loadConfig({}).searchAnalyticsRetentionDays).toBe(90);
    expect(loadConfig({ SEARCH_ANALYTICS_RETENTION_DAYS: '7' }).searchAnalyticsRetentionDays).toBe(7);
    expect(loadConfig({ SEARCH_ANALYTICS_RETENTION_DAYS: '' }).searchAnalyticsRetentionDays).toBe(90);
  });

  it.each([
    [{ OAUTH_REFRESH_GRACE_SECONDS: '-1' }, 'OAUTH_REFRESH_GRACE_SECONDS'],
    [{ DATABASE_POOL_SIZE: '0' }, 'DATABASE_POOL_SIZE'],
    [{ DATABASE_URL: 'postgresql://a@b/c', DATABASE_DIRECT_URL: 'http://db' }, 'DATABASE_DIRECT_URL'],
    [{ OAUTH_JWKS_MAX_AGE_SECONDS: 'five minutes' }, 'OAUTH_JWKS_MAX_AGE_SECONDS'],
    [{ PORT: 'eighty' }, 'PORT'],
    [{ PORT: '70000' }, 'PORT'],
    [{ DATABASE_URL: 'mysql://x' }, 'DATABASE_URL'],
    [{ MASTER_KEY: 'short' }, 'MASTER_KEY'],
    [{ LOG_LEVEL: 'loud' }, 'LOG_LEVEL'],
    [{ PUBLIC_BASE_URL: 'not a url' }, 'PUBLIC_BASE_URL'],
    [{ EDGE_DOMAIN: 'Edge.Example.com' }, 'EDGE_DOMAIN'],
    [{ EDGE_DOMAIN: 'https://edge.example.com' }, 'EDGE_DOMAIN'],
    [{ EDGE_ORIGIN_TIMEOUT_MS: '0' }, 'EDGE_ORIGIN_TIMEOUT_MS'],
    [{ EDGE_CACHE_MAX_BYTES: '-1' }, 'EDGE_CACHE_MAX_BYTES'],
    [{ EDGE_STALE_IF_ERROR_SECONDS: 'soon' }, 'EDGE_STALE_IF_ERROR_SECONDS'],
    [{ EDGE_MAX_RESPONSE_BYTES: '1.5' }, 'EDGE_MAX_RESPONSE_BYTES'],
    [{ EDGE_ALLOW_PRIVATE_ORIGINS: 'yes' }, 'EDGE_ALLOW_PRIVATE_ORIGINS'],
    [{ SEARCH_ANALYTICS_RETENTION_DAYS: '0' }, 'SEARCH_ANALYTICS_RETENTION_DAYS'],
    [{ SEARCH_ANALYTICS_RETENTION_DAYS: '1.5' }, 'SEARCH_ANALYTICS_RETENTION_DAYS'],
    [{ SEARCH_ANALYTICS_RETENTION_DAYS: 'forever' }, 'SEARCH_ANALYTICS_RETENTION_DAYS'],
    [{ SEARCH_ANALYTICS_RETENTION_DAYS: '3651' }, 'SEARCH_ANALYTICS_RETENTION_DAYS'],
  ])('refuses %o naming %s', (env, name) => {
    expect(() => loadConfig(env)).toThrow(ConfigError);
    expect(() => loadConfig(env)).toThrow(new RegExp(`^Invalid configuration: ${name}`));
  });
});

describe('sign-in throttling configuration', () => {
  it('locks an account after 5 failures and an address after 20 within 15 minutes, for 15 minutes up to 4 hours', () => {
    expect(loadConfig({}).signInThrottle).toEqual({
      accountFailures: 5,
      addressFailures: 20,
      windowSeconds: 900,
      lockSeconds: 900,
      maxLockSeconds: 14_400,
    });
  });

  it('reads the SIGN_IN_* variables', () => {
    const config = loadConfig({
      SIGN_IN_ACCOUNT_FAILURES: '3',
      SIGN_IN_ADDRESS_FAILURES: '50',
      SIGN_IN_WINDOW_SECONDS: '600',
      SIGN_IN_LOCK_SECONDS: '60',
      SIGN_IN_MAX_LOCK_SECONDS: '60',
    });
    expect(config.signInThrottle).toEqual({
      accountFailures: 3,
      addressFailures: 50,
      windowSeconds: 600,
      lockSeconds: 60,
      maxLockSeconds: 60,
    });
  });

  it.each([
    [{ SIGN_IN_ACCOUNT_FAILURES: '0' }, 'SIGN_IN_ACCOUNT_FAILURES'],
    [{ SIGN_IN_ACCOUNT_FAILURES: 'five' }, 'SIGN_IN_ACCOUNT_FAILURES'],
    [{ SIGN_IN_ADDRESS_FAILURES: '2.5' }, 'SIGN_IN_ADDRESS_FAILURES'],
    [{ SIGN_IN_WINDOW_SECONDS: '43201' }, 'SIGN_IN_WINDOW_SECONDS'],
    [{ SIGN_IN_LOCK_SECONDS: '0' }, 'SIGN_IN_LOCK_SECONDS'],
    [{ SIGN_IN_MAX_LOCK_SECONDS: '604801' }, 'SIGN_IN_MAX_LOCK_SECONDS'],
    [{ SIGN_IN_LOCK_SECONDS: '3600', SIGN_IN_MAX_LOCK_SECONDS: '1800' }, 'SIGN_IN_MAX_LOCK_SECONDS'],
  ])('refuses %o naming %s', (env, name) => {
    expect(() => loadConfig(env)).toThrow(ConfigError);
    expect(() => loadConfig(env)).toThrow(new RegExp(`^Invalid configuration: ${name}`));
  });
});
