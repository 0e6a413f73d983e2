import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/kernel/config';

describe('loadConfig', () => {
  it('has defaults that serve on 127.0.0.1:3000 with data in ./.data', () => {
    const config = loadConfig({});
    expect(config).toMatchObject({ port: 3000, host: '127.0.0.1', dataDir: './.data', logLevel: 'info', databaseUrl: undefined });
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

  it.each([
    [{ PORT: 'eighty' }, 'PORT'],
    [{ PORT: '70000' }, 'PORT'],
    [{ DATABASE_URL: 'mysql://x' }, 'DATABASE_URL'],
    [{ MASTER_KEY: 'short' }, 'MASTER_KEY'],
    [{ LOG_LEVEL: 'loud' }, 'LOG_LEVEL'],
    [{ PUBLIC_BASE_URL: 'not a url' }, 'PUBLIC_BASE_URL'],
  ])('refuses %o naming %s', (env, name) => {
    expect(() => loadConfig(env)).toThrow(ConfigError);
    expect(() => loadConfig(env)).toThrow(new RegExp(`^Invalid configuration: ${name}`));
  });
});
