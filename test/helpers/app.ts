import type { FastifyInstance } from 'fastify';
import { afterAll } from 'vitest';
import { buildApp } from '../../src/app';
import { loadConfig, type Config } from '../../src/kernel/config';
import { createDb, type Db } from '../../src/kernel/db';
import type { Services } from '../../src/modules/context';
import { createTestDatabase } from './db';
import { createRestClient, type RestClient } from './rest';

export const TEST_MASTER_KEY = 'mk_test_master_key_0123456789abcdefghijklmnop';

export interface TestApp {
  app: FastifyInstance;
  services: Services;
  db: Db;
  databaseUrl: string;
  config: Config;
  /** Every REST call of the tests goes through this client, which checks responses against openapi.yaml. */
  rest: RestClient;
}

/** How a test app is built, beyond its database and configuration. */
export interface TestAppOptions {
  /** How long a verified API key is trusted without asking the database again. */
  authCacheTtlMs?: number;
  /** Run the reservation sweeper and the broadcast worker (default true). */
  backgroundWorkers?: boolean;
  /** The connections of its own pool (default 5). */
  poolSize?: number;
  /** A database client of the test's own (one that logs its queries, say) instead of a new pool. */
  db?: Db;
  /** Where JSON log lines go instead of stdout. */
  logStream?: { write(line: string): void };
  /** Set on the loaded configuration (values that have no environment variable). */
  config?: Partial<Config>;
}

/** The configuration a test app loads: the test master key, silent logs, and `env`. */
export const testConfig = (databaseUrl: string, env: Record<string, string> = {}): Config =>
  loadConfig({ ...env, DATABASE_URL: databaseUrl, MASTER_KEY: TEST_MASTER_KEY, LOG_LEVEL: 'silent' });

async function startApp(databaseUrl: string, loaded: Config, options: TestAppOptions): Promise<TestApp> {
  const config = { ...loaded, ...options.config };
  const db = options.db ?? createDb(databaseUrl, { poolSize: options.poolSize ?? 5 });
  const { app, services } = await buildApp({
    config,
    db,
    masterKey: TEST_MASTER_KEY,
    authCacheTtlMs: options.authCacheTtlMs,
    backgroundWorkers: options.backgroundWorkers,
    logStream: options.logStream,
  });
  await app.ready();
  afterAll(async () => {
    await app.close();
    await db.$disconnect();
  });
  return { app, services, db, databaseUrl, config, rest: createRestClient(app) };
}

/**
 * The whole application on a fresh database of its own (or on `databaseUrl`), called in-process
 * (no port), configured by `env`. Closed after the test file.
 */
export async function startTestApp(
  options: TestAppOptions & { databaseUrl?: string; env?: Record<string, string> } = {},
): Promise<TestApp> {
  const databaseUrl = options.databaseUrl ?? (await createTestDatabase());
  return startApp(databaseUrl, testConfig(databaseUrl, options.env), options);
}

/**
 * Another process of the deployment `first` belongs to: its own app and pool on the same database
 * and with the same configuration (or, with `env` or without `first.config`, the test configuration
 * with `env`), called
 * in-process. Closed after the test file. For an operating-system process, see
 * `startServiceProcess` in service-process.ts.
 */
export async function startSecondProcess(
  first: { databaseUrl: string; config?: Config },
  options: TestAppOptions & { env?: Record<string, string> } = {},
): Promise<TestApp> {
  const config = options.env || !first.config ? testConfig(first.databaseUrl, options.env) : first.config;
  return startApp(first.databaseUrl, config, options);
}

export interface Tenant {
  id: string;
  /** A key with every scope. */
  key: string;
}

/** Creates a tenant and an API key with the given scopes through the admin API. */
export async function createTenant(rest: RestClient, name = 'Tenant', scopes: string[] = ['*']): Promise<Tenant> {
  const tenant = await rest.post('/api/admin/tenants', { token: TEST_MASTER_KEY, body: { data: { name } } });
  if (tenant.status !== 201) throw new Error(`tenant creation failed: ${JSON.stringify(tenant.body)}`);
  const id = (tenant.body as { data: { id: string } }).data.id;
  return { id, key: await createKey(rest, id, scopes) };
}

export async function createKey(rest: RestClient, tenantId: string, scopes: string[]): Promise<string> {
  const key = await rest.post(`/api/admin/tenants/${tenantId}/api-keys`, {
    token: TEST_MASTER_KEY,
    body: { data: { name: 'test key', scopes } },
  });
  if (key.status !== 201) throw new Error(`key creation failed: ${JSON.stringify(key.body)}`);
  return (key.body as { data: { key: string } }).data.key;
}
