import Fastify from 'fastify';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig, type Config } from '../../src/kernel/config';
import { createDb, type Db } from '../../src/kernel/db';
import { startEmbeddedPostgres } from '../../src/kernel/embedded-postgres';
import { uuidv7 } from '../../src/kernel/ids';
import { applyMigrations } from '../../src/kernel/migrations';
import type { Principal } from '../../src/kernel/principal';
import { createServices } from '../../src/app';
import type { Services } from '../../src/modules/context';
import type { Teardown } from './teardown';

/** A migrated database on a throwaway embedded PostgreSQL with one tenant's data in it. */
export interface Fixture {
  databaseUrl: string;
  masterKey: string;
  config: Config;
  db: Db;
  /** Services over `db`, for seeding and for servers that bypass the HTTP layer. */
  services: Services;
  tenantId: string;
  /** Bearer token of an API key with scope `*`. */
  apiKey: string;
  /** What authenticating `apiKey` yields; for servers that skip authentication. */
  principal: Principal;
  /** Key of the one seeded proxy. */
  proxyKey: string;
  productCount: number;
}

export interface FixtureOptions {
  productCount?: number;
  /** Prisma pool size; the same for every server under test, since they share the client. */
  poolSize?: number;
  log?: (line: string) => void;
}

/**
 * Starts embedded PostgreSQL in a fresh temporary directory, migrates it and seeds a tenant, an
 * API key with every scope, one proxy and `productCount` products. Everything it starts is
 * registered on `teardown`.
 */
export async function startFixture(teardown: Teardown, options: FixtureOptions = {}): Promise<Fixture> {
  const log = options.log ?? (() => {});
  const productCount = options.productCount ?? 50;

  const dataDir = mkdtempSync(join(tmpdir(), 'commerce-bench-'));
  const removeDataDir = () => rmSync(dataDir, { recursive: true, force: true });
  teardown.add('remove the temporary data directory', removeDataDir);
  // If the process ends before the asynchronous teardown finishes, 'exit' still runs synchronous code.
  process.once('exit', removeDataDir);
  log(`starting embedded PostgreSQL in ${dataDir}`);
  const postgres = await startEmbeddedPostgres(dataDir);
  teardown.add('stop PostgreSQL', () => postgres.stop());
  await applyMigrations(postgres.url);

  const masterKey = `mk_bench_${randomBytes(24).toString('hex')}`;
  const config = loadConfig({
    DATABASE_URL: postgres.url,
    MASTER_KEY: masterKey,
    LOG_LEVEL: 'silent',
    HOST: '127.0.0.1',
    PORT: '0',
  });
  const db = createDb(postgres.url, { poolSize: options.poolSize });
  teardown.add('disconnect Prisma', () => db.$disconnect());
  const services = createServices({ config, db, masterKey, log: Fastify({ logger: false }).log });

  const tenant = await services.admin.createTenant('Bench tenant');
  const { key: apiKey } = await services.admin.createApiKey(tenant.id, { name: 'bench', scopes: ['*'] });
  // The principal comes from the real authenticator, so it is exactly what a request would carry.
  const principal = await services.authenticator.authenticate(`Bearer ${apiKey}`);

  // A proxy with several routes and every optional block filled in, so that reading and
  // serialising it is representative rather than trivially small.
  const proxy = await services.proxies.create(principal, {
    key: 'bench-shop',
    routes: [
      {
        path: '/images',
        origin: { uri: 'https://cdn.example.com/images', is_bucket: true },
        settings: { cache: { age: 3600, is_public: true } },
      },
      {
        path: '/api',
        origin: { uri: 'https://api.example.com/' },
        settings: { auth: { is_required: true, scope: 'proxies:read' } },
      },
      { path: '*', origin: { uri: 'https://www.example.com/' } },
    ],
    auth: { signature: { secret: 'bench-signature-secret-0123456789', cache: { age: 60 } } },
    oauth: {
      issuer: 'https://id.example.com',
      client_id: 'bench',
      authorize_url: 'https://id.example.com/authorize',
      return_url_key: 'return_to',
    },
  });

  // createMany is one INSERT; ids are UUIDv7 a millisecond apart so id order is insertion order.
  const start = Date.now();
  await db.product.createMany({
    data: Array.from({ length: productCount }, (_, i) => ({
      id: uuidv7(start + i),
      tenantId: tenant.id,
      sku: `BENCH-${String(i).padStart(4, '0')}`,
      name: `Bench product ${i}`,
      gtin: [`40000000${String(i).padStart(5, '0')}`],
    })),
  });
  log(`seeded tenant ${tenant.id}: proxy "${proxy.key}", ${productCount} products`);

  return {
    databaseUrl: postgres.url,
    masterKey,
    config,
    db,
    services,
    tenantId: tenant.id,
    apiKey,
    principal,
    proxyKey: proxy.key,
    productCount,
  };
}
