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

/**
 * The whole application on a fresh database of its own (or on `databaseUrl`, for a second process
 * of a deployment), called in-process (no port). Closed after the test file.
 */
export async function startTestApp(
  options: { authCacheTtlMs?: number; databaseUrl?: string; env?: Record<string, string> } = {},
): Promise<TestApp> {
  const databaseUrl = options.databaseUrl ?? (await createTestDatabase());
  const config = loadConfig({
    ...options.env,
    DATABASE_URL: databaseUrl,
    MASTER_KEY: TEST_MASTER_KEY,
    LOG_LEVEL: 'silent',
  });
  const db = createDb(databaseUrl, { poolSize: 5 });
  const { app, services } = await buildApp({
    config,
    db,
    masterKey: TEST_MASTER_KEY,
    authCacheTtlMs: options.authCacheTtlMs,
  });
  await app.ready();
  afterAll(async () => {
    await app.close();
    await db.$disconnect();
  });
  return { app, services, db, databaseUrl, config, rest: createRestClient(app) };
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
