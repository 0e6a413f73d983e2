/**
 * The scale path as a growing shop takes it: three service processes, each an operating-system
 * process started as `npm start` starts it, on one PostgreSQL database reached through a real
 * PgBouncer in transaction pooling mode (`DATABASE_URL`), with `DATABASE_DIRECT_URL` for the
 * listener and migrations. They race their migrations on an empty database at start; what one
 * changes the others serve within a second; 300 one-unit reservations spread over the three
 * against 100 units give exactly 100; refreshes and failed sign-ins made on different processes
 * count as one; and a start through the pooler without the direct URL is refused with a message
 * that names it.
 */
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { inject, beforeAll, describe, expect, it, afterAll } from 'vitest';
import { createTestDatabase, sql } from '../helpers/db';
import { startOrigin } from '../helpers/edge';
import { Browser, PASSWORD, REDIRECT_URI } from '../helpers/oauth';
import { pgBouncerAvailable, startPgBouncer, type PgBouncer } from '../helpers/pgbouncer';
import { callService, startServiceProcess, temporaryDir, type ServiceProcess } from '../helpers/service-process';
import { createCatalog, graphqlData } from './stock.fixtures';

const MASTER_KEY = 'mk_three_processes_pooled_0123456789abcdef';
/** What docs/operations/scaling.md promises through a pooler: a change made in one process is served by the others within this. */
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

/** A JSON request to a process, with the tenant's key unless told otherwise. */
const call = (
  service: ServiceProcess,
  method: string,
  path: string,
  { token = key, body }: { token?: string; body?: unknown } = {},
) => callService(service, method, path, { token, body });

/** What the test helpers call (`app.inject`), over real HTTP to a process. */
const injectorOf = (service: ServiceProcess) => ({
  inject: async (request: { method: string; url: string; headers?: Record<string, string>; payload?: string }) => {
    const response = await fetch(`http://127.0.0.1:${service.port}${request.url}`, {
      method: request.method,
      headers: request.headers,
      body: request.payload,
      redirect: 'manual',
    });
    const headers: Record<string, string | string[]> = Object.fromEntries(response.headers);
    headers['set-cookie'] = response.headers.getSetCookie();
    return { statusCode: response.status, body: await response.text(), headers };
  },
});
const overHttp = (service: ServiceProcess) => ({ app: injectorOf(service) });

const env = (name: string, pooledUrl: string, directUrl?: string) => ({
  DATABASE_URL: pooledUrl,
  ...(directUrl ? { DATABASE_DIRECT_URL: directUrl } : {}),
  DATABASE_POOL_SIZE: '5',
  // One deployment behind a load balancer: one public origin, so tokens of one process serve in all.
  PUBLIC_BASE_URL: 'http://commerce.test',
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
    bouncer?.stop();
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
    const held = await sql(
      databaseUrl,
      "SELECT count(*)::int AS count FROM pg_locks WHERE locktype = 'advisory' AND database = (SELECT oid FROM pg_database WHERE datname = current_database())",
    );
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

  it('answers five concurrent refreshes of one refresh token spread over the processes, then revokes on reuse', async () => {
    const [one] = processes as [ServiceProcess];
    const client = await call(one, 'POST', `/api/admin/tenants/${tenantId}/oauth-clients`, {
      token: MASTER_KEY,
      body: {
        data: { name: 'Tabs', redirect_uris: [REDIRECT_URI], scopes: ['proxies:read'], is_confidential: true },
      },
    });
    expect(client.status, client.text).toBe(201);
    const { client_id: clientId, client_secret: clientSecret } = client.body.data;
    const user = await call(one, 'POST', `/api/admin/tenants/${tenantId}/users`, {
      token: MASTER_KEY,
      body: { data: { email: 'tabs@example.com', password: PASSWORD } },
    });
    expect(user.status, user.text).toBe(201);
    // A refresh token of the user's authorization, as the token endpoint issues one.
    const refreshToken = randomBytes(32).toString('base64url');
    const grantId = randomUUID();
    await sql(
      databaseUrl,
      `INSERT INTO oauth_grants (id, client_id, user_id, grant_type, scopes)
       VALUES ($1, $2, $3, 'authorization_code', '{proxies:read}')`,
      [grantId, clientId, user.body.data.id],
    );
    await sql(
      databaseUrl,
      "INSERT INTO oauth_refresh_tokens (token_hash, grant_id, expires_at) VALUES ($1, $2, now() + interval '1 day')",
      [createHash('sha256').update(refreshToken).digest(), grantId],
    );
    const refresh = (service: ServiceProcess, token: string) =>
      fetch(`http://127.0.0.1:${service.port}/api/oauth/authorize`, {
        method: 'POST',
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          authorization: `Basic ${Buffer.from(`${clientId}:${clientSecret}`).toString('base64')}`,
        },
        body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: token }),
      }).then(async (response) => ({ status: response.status, body: await response.json() }));
    const spread = [0, 1, 2, 0, 1].map((index) => processes[index]!);
    const answers = await Promise.all(spread.map((service) => refresh(service, refreshToken)));
    expect(answers.map((answer) => answer.status)).toEqual([200, 200, 200, 200, 200]);
    expect(new Set(answers.map((answer) => answer.body.refresh_token)).size).toBe(5);
    for (const [index, answer] of answers.entries()) {
      const other = processes[(index + 1) % 3]!;
      expect((await call(other, 'GET', '/api/storage/edge/proxies', { token: answer.body.access_token })).status).toBe(
        200,
      );
    }
    // After the grace window: the family is revoked, in every process.
    await sql(databaseUrl, "UPDATE oauth_refresh_tokens SET rotated_at = rotated_at - interval '31 seconds'");
    expect((await refresh(processes[2]!, refreshToken)).status).toBe(400);
    await reachesOthers(
      'refresh token reuse',
      processes,
      async (service) =>
        (await call(service, 'GET', '/api/storage/edge/proxies', { token: answers[0]!.body.access_token })).status ===
        401,
    );
  });

  it('adds up failed sign-ins of one account made on different processes to one lock', async () => {
    const [one, two, three] = processes as [ServiceProcess, ServiceProcess, ServiceProcess];
    const client = await call(one, 'POST', `/api/admin/tenants/${tenantId}/oauth-clients`, {
      token: MASTER_KEY,
      body: { data: { name: 'Shop', redirect_uris: [REDIRECT_URI], scopes: ['proxies:read'], is_confidential: true } },
    });
    const user = await call(one, 'POST', `/api/admin/tenants/${tenantId}/users`, {
      token: MASTER_KEY,
      body: { data: { email: 'guessed@example.com', password: PASSWORD } },
    });
    expect(user.status, user.text).toBe(201);
    const query = new URLSearchParams({
      client_id: client.body.data.client_id,
      redirect_uri: REDIRECT_URI,
      response_type: 'code',
    });
    const session = await call(one, 'GET', `/api/oauth/session/authorize?${query}`);
    expect(session.status, session.text).toBe(200);
    const path = new URL(session.body.data.forward_uri).pathname;
    const browser = new Browser(injectorOf(one) as never);
    const csrf = Browser.csrf((await browser.request('GET', path)).body);
    const signIn = (service: ServiceProcess, password: string) =>
      browser.request(
        'POST',
        `${path}/login`,
        { csrf_token: csrf, email: 'guessed@example.com', password },
        injectorOf(service) as never,
      );
    for (const service of [one, two, three, one])
      expect((await signIn(service, 'wrong password!')).statusCode).toBe(401);
    // The 5th failure, on yet another process, locks the account everywhere: the right password too.
    expect((await signIn(two, 'wrong password!')).statusCode).toBe(429);
    for (const service of [one, two, three]) expect((await signIn(service, PASSWORD)).statusCode).toBe(429);
  });

  it('refuses to start through the pooler without DATABASE_DIRECT_URL, naming it', async () => {
    const refused = await startServiceProcess(env('refused', bouncer.pooled(databaseUrl)));
    expect(await refused.exited).toBe(1);
    expect(refused.output()).toContain('Set DATABASE_DIRECT_URL');
    expect(refused.output()).not.toContain('Server listening');
  });
});
