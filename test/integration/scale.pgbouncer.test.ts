/**
 * The scale path as a growing shop takes it: three service processes, each an operating-system
 * process started as `npm start` starts it, on one PostgreSQL database reached through a real
 * PgBouncer in transaction pooling mode (`DATABASE_URL`), with `DATABASE_DIRECT_URL` for the
 * listener and migrations. They race their migrations on an empty database at start; what one
 * changes the others serve within a second; 300 one-unit reservations spread over the three
 * against 100 units give exactly 100; and a start through the pooler without the direct URL is
 * refused with a message that names it.
 */
import { inject, beforeAll, describe, expect, it, afterAll } from 'vitest';
import { createTestDatabase, sql } from '../helpers/db';
import { startOrigin } from '../helpers/edge';
import { pgBouncerAvailable, startPgBouncer, type PgBouncer } from '../helpers/pgbouncer';
import { startServiceProcess, temporaryDir, type ServiceProcess } from '../helpers/service-process';
import { createCatalog, graphqlData } from './stock.fixtures';

const MASTER_KEY = 'mk_three_processes_pooled_0123456789abcdef';
/** What the README promises through a pooler: a change made in one process is served by the others within this. */
const DEADLINE = { timeout: 1_000, interval: 10 };
const available = pgBouncerAvailable();

let bouncer: PgBouncer;
let databaseUrl: string;
let processes: ServiceProcess[];
let key: string;
let tenantId: string;
/** How long each change took to reach every other process, for the record. */
const propagation: Record<string, number> = {};

const origin = await startOrigin((request, response) => {
  response.setHeader('content-type', 'text/plain');
  response.end(`${request.url} at ${process.hrtime.bigint()}`);
});

async function call(
  service: ServiceProcess,
  method: string,
  path: string,
  { token = key, body }: { token?: string; body?: unknown } = {},
) {
  const response = await fetch(`http://127.0.0.1:${service.port}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${token}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, headers: response.headers, body: text ? JSON.parse(text) : undefined, text };
}

/** The shape the GraphQL fixtures call (`app.inject`), over real HTTP to a process. */
const overHttp = (service: ServiceProcess) => ({
  app: {
    inject: async (request: { method: string; url: string; headers: Record<string, string>; payload: string }) => {
      const response = await fetch(`http://127.0.0.1:${service.port}${request.url}`, {
        method: request.method,
        headers: request.headers,
        body: request.payload,
      });
      return { statusCode: response.status, body: await response.text() };
    },
  },
});

const env = (name: string, pooledUrl: string, directUrl?: string) => ({
  DATABASE_URL: pooledUrl,
  ...(directUrl ? { DATABASE_DIRECT_URL: directUrl } : {}),
  DATABASE_POOL_SIZE: '5',
  MASTER_KEY,
  DATA_DIR: temporaryDir(`commerce-${name}-`),
  EDGE_ALLOW_PRIVATE_ORIGINS: 'true',
});

/** Waits until `seen` holds in every other process; records how long that took. */
async function reachesOthers(
  name: string,
  others: ServiceProcess[],
  seen: (service: ServiceProcess) => Promise<boolean>,
) {
  const started = performance.now();
  await Promise.all(others.map((service) => expect.poll(() => seen(service), DEADLINE).toBe(true)));
  propagation[name] = Math.round(performance.now() - started);
}

describe.skipIf(!available)('three processes through PgBouncer in transaction mode', () => {
  beforeAll(async () => {
    bouncer = await startPgBouncer(inject('adminDatabaseUrl'));
    databaseUrl = await createTestDatabase({ migrated: false });
    // All three migrate the empty database at once, each through the direct URL.
    processes = await Promise.all(
      ['one', 'two', 'three'].map((name) => startServiceProcess(env(name, bouncer.pooled(databaseUrl), databaseUrl))),
    );
    for (const service of processes) expect(service.output()).toContain('Server listening');
    const tenant = await call(processes[0]!, 'POST', '/api/admin/tenants', {
      token: MASTER_KEY,
      body: { data: { name: 'Pooled' } },
    });
    expect(tenant.status, tenant.text).toBe(201);
    tenantId = tenant.body.data.id;
    const created = await call(processes[1]!, 'POST', `/api/admin/tenants/${tenantId}/api-keys`, {
      token: MASTER_KEY,
      body: { data: { name: 'all processes', scopes: ['*'] } },
    });
    expect(created.status, created.text).toBe(201);
    key = created.body.data.key;
  }, 120_000);

  afterAll(() => {
    console.log(`propagation through PgBouncer (ms to reach both other processes): ${JSON.stringify(propagation)}`);
  });

  it('applied every migration exactly once while the three raced at start', async () => {
    const rows = await sql<{ migration_name: string; count: string }>(
      databaseUrl,
      'SELECT migration_name, count(*) FROM _prisma_migrations GROUP BY 1 HAVING count(*) > 1',
    );
    expect(rows).toEqual([]);
    const applied = await sql(databaseUrl, 'SELECT count(*)::int AS count FROM _prisma_migrations');
    expect(applied[0]!.count).toBeGreaterThan(10);
    const held = await sql(databaseUrl, "SELECT count(*)::int AS count FROM pg_locks WHERE locktype = 'advisory'");
    expect(held[0]!.count).toBe(0);
  });

  it('serves a purge, a replaced proxy and a revoked key of one process in the others within a second', async () => {
    const [one, two, three] = processes as [ServiceProcess, ServiceProcess, ServiceProcess];
    const PROXIES = '/api/storage/edge/proxies';
    const page = async (service: ServiceProcess) => {
      const response = await fetch(`http://127.0.0.1:${service.port}/edge/shop/page`);
      return { cache: response.headers.get('x-cache'), text: await response.text() };
    };
    const routes = (prefix: string) => [
      { path: '/', origin: { uri: `${origin.url}/${prefix}` }, settings: { cache: { age: 300, is_public: true } } },
    ];
    const created = await call(one, 'POST', PROXIES, { body: { data: { key: 'shop', routes: routes('v1') } } });
    expect(created.status, created.text).toBe(201);
    const cached = new Map<ServiceProcess, string>();
    for (const service of [two, three]) {
      await expect.poll(async () => (await page(service)).cache, { timeout: 5_000 }).toBe('HIT');
      cached.set(service, (await page(service)).text);
    }

    expect((await call(one, 'DELETE', `${PROXIES}/shop/cache`)).status).toBe(204);
    await reachesOthers('purge', [two, three], async (service) => (await page(service)).text !== cached.get(service));

    const replaced = await call(one, 'PUT', `${PROXIES}/shop`, {
      body: { data: { key: 'shop', routes: routes('v2') } },
    });
    expect(replaced.status).toBe(204);
    await reachesOthers('replaced proxy', [two, three], async (service) =>
      (await page(service)).text.startsWith('/v2/page at '),
    );

    const narrow = await call(one, 'POST', `/api/admin/tenants/${tenantId}/api-keys`, {
      token: MASTER_KEY,
      body: { data: { name: 'revoked soon', scopes: ['proxies:read'] } },
    });
    const { id, key: revokedKey } = narrow.body.data as { id: string; key: string };
    for (const service of [two, three])
      expect((await call(service, 'GET', PROXIES, { token: revokedKey })).status).toBe(200);
    const revoked = await call(one, 'DELETE', `/api/admin/tenants/${tenantId}/api-keys/${id}`, { token: MASTER_KEY });
    expect(revoked.status).toBe(204);
    await reachesOthers(
      'revoked key',
      [two, three],
      async (service) => (await call(service, 'GET', PROXIES, { token: revokedKey })).status === 401,
    );
  });

  it('serves a search write of one process in the others, with no prepared statement errors', async () => {
    const [one, two, three] = processes as [ServiceProcess, ServiceProcess, ServiceProcess];
    const INDEXES = '/api/instant/indexes';
    const index = { name: 'Lamps', alias: 'lamps', filters: [{ key: 'brand' }] };
    expect((await call(one, 'POST', INDEXES, { body: { data: index } })).status).toBe(201);
    const found = async (service: ServiceProcess) => {
      const response = await call(service, 'POST', '/api/instant/search/indexes/lamps', {
        body: { data: [{ q: 'lamp' }] },
      });
      expect(response.status, response.text).toBe(201);
      return response.body.data[0].results[0].hits.map((hit: { id: string }) => hit.id).sort();
    };
    for (const service of [two, three]) expect(await found(service)).toEqual([]);
    const upserted = await call(one, 'PUT', `${INDEXES}/lamps/documents`, {
      body: { data: [{ id: 'p1', name: 'Desk lamp', brand: 'Lumo' }] },
    });
    expect(upserted.status).toBe(204);
    await reachesOthers('search write', [two, three], async (service) => (await found(service)).join() === 'p1');
    // Many searches at once in every process: the version check runs through the pooler each time.
    const searches = await Promise.all(Array.from({ length: 90 }, (_, index) => found(processes[index % 3]!)));
    expect(searches.every((ids) => ids.join() === 'p1')).toBe(true);
    for (const service of processes) expect(service.output()).not.toMatch(/prepared statement/);
  });

  it('gives exactly 100 of 300 concurrent one-unit reservations over the three processes against 100 units', async () => {
    const [one] = processes as [ServiceProcess];
    const catalog = await createCatalog(overHttp(one) as never, key, { products: 1 });
    const channel = await graphqlData<{ createSalesChannel: { sales_channel: { id: string } } }>(
      overHttp(one) as never,
      key,
      'mutation($input: CreateSalesChannelInput!) { createSalesChannel(input: $input) { sales_channel { id } } }',
      { input: { name: 'Web shop' } },
    );
    const stocked = await call(one, 'POST', '/api/inventory/items', {
      body: {
        data: [{ sku: 'SKU-1', quantity: 100, warehouseId: catalog.warehouseIds[0], businessId: catalog.businessId }],
      },
    });
    expect(stocked.status, stocked.text).toBe(201);
    const reserve = (service: ServiceProcess) =>
      call(service, 'POST', '/graphql', {
        body: {
          query:
            'mutation($input: CreateReservationInput!) { createReservation(input: $input) { reservation { id } } }',
          variables: {
            input: {
              business_id: catalog.businessId,
              warehouse_id: catalog.warehouseIds[0],
              channel_id: channel.createSalesChannel.sales_channel.id,
              customer: { name: 'Client' },
              items: [{ sku: 'SKU-1', quantity: 1 }],
              expires_at: Date.now() + 3_600_000,
            },
          },
        },
      });
    const answers = await Promise.all(Array.from({ length: 300 }, (_, index) => reserve(processes[index % 3]!)));
    const reserved = answers.filter((answer) => answer.body?.data?.createReservation?.reservation?.id);
    const refusals = answers
      .filter((answer) => answer.body?.errors)
      .map((answer) => answer.body.errors[0].extensions.code);
    expect(reserved.length).toBe(100);
    expect(refusals.length).toBe(200);
    expect(new Set(refusals)).toEqual(new Set(['OUT_OF_STOCK']));
    const lines = await sql<{ state: string; quantity: string }>(
      databaseUrl,
      `SELECT state::text, sum(quantity)::text AS quantity FROM inventory_items WHERE tenant_id = $1 GROUP BY 1`,
      [tenantId],
    );
    const byState = Object.fromEntries(lines.map((line) => [line.state, Number(line.quantity)]));
    expect(byState.RESERVED).toBe(100);
    expect(byState.AVAILABLE ?? 0).toBe(0);
  });

  it('refuses to start through the pooler without DATABASE_DIRECT_URL, naming it', async () => {
    const refused = await startServiceProcess(env('refused', bouncer.pooled(databaseUrl)));
    expect(await refused.exited).toBe(1);
    expect(refused.output()).toContain('Set DATABASE_DIRECT_URL');
    expect(refused.output()).not.toContain('Server listening');
  });
});
