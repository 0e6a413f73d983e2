/**
 * Background work never fails because of one bad row, and never loses the others: the search log,
 * search clicks, channel broadcasts and the reservation sweeper, each given one row that cannot be
 * stored or that a trigger of the test refuses. The app runs without its background workers, so
 * each test drives the pass itself and counts exactly what was reported.
 */
import { createHmac } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app';
import { loadConfig } from '../../src/kernel/config';
import { createDb } from '../../src/kernel/db';
import { uuidv7 } from '../../src/kernel/ids';
import { BroadcastService, DeliveryFailed } from '../../src/modules/broadcasts/broadcasts.service';
import {
  MAX_RELEASE_ATTEMPTS,
  ReleaseFailed,
  ReservationService,
} from '../../src/modules/reservations/reservations.service';
import { createQueryIdCodec, queryKeyOf } from '../../src/modules/search/analytics/query-ids';
import { SearchLog, SearchNotStored, type SearchRecord } from '../../src/modules/search/analytics/search-log';
import { createClickCodec } from '../../src/modules/search/click-codes';
import { createTenant, TEST_MASTER_KEY, type TestApp, type Tenant } from '../helpers/app';
import { createTestDatabase, sql } from '../helpers/db';
import { createRestClient } from '../helpers/rest';
import { addStock, createStockWorld, expectStockInvariants, type StockWorld } from './orders.fixtures';
import { graphqlData } from './stock.fixtures';

async function startApp(): Promise<TestApp> {
  const databaseUrl = await createTestDatabase();
  const config = loadConfig({
    DATABASE_URL: databaseUrl,
    MASTER_KEY: TEST_MASTER_KEY,
    LOG_LEVEL: 'silent',
    // The channels of the test run on 127.0.0.1; a failed attempt is not due again during the test.
    BROADCAST_ALLOW_PRIVATE_WEBHOOKS: 'true',
    BROADCAST_TIMEOUT_MS: '2000',
    BROADCAST_BACKOFF_MS: '600000',
    BROADCAST_MAX_ATTEMPTS: '3',
  });
  const db = createDb(databaseUrl, { poolSize: 5 });
  const { app, services } = await buildApp({ config, db, masterKey: TEST_MASTER_KEY, backgroundWorkers: false });
  await app.ready();
  afterAll(async () => {
    await app.close();
    await db.$disconnect();
  });
  return { app, services, db, databaseUrl, config, rest: createRestClient(app) };
}

const t = await startApp();

/**
 * A trigger refusing, with a PL/pgSQL exception, `event` on `table` for the rows matching `when`
 * (in terms of OLD/NEW). Returns the function that drops it again.
 */
async function refuseRows(table: string, event: 'INSERT' | 'UPDATE', when: string) {
  const name = `refuse_${table}_${event.toLowerCase()}`;
  await sql(
    t.databaseUrl,
    `CREATE FUNCTION ${name}() RETURNS trigger LANGUAGE plpgsql
       AS $$ BEGIN RAISE EXCEPTION 'refused by the test'; END $$`,
  );
  await sql(
    t.databaseUrl,
    `CREATE TRIGGER ${name} BEFORE ${event} ON ${table} FOR EACH ROW WHEN (${when}) EXECUTE FUNCTION ${name}()`,
  );
  return async () => {
    await sql(t.databaseUrl, `DROP TRIGGER ${name} ON ${table}`);
    await sql(t.databaseUrl, `DROP FUNCTION ${name}()`);
  };
}

/** A port on 127.0.0.1 that nothing listens on. */
async function closedPort() {
  const server: Server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe('search log', () => {
  let a: Tenant;
  let b: Tenant;
  const indexIds = new Map<string, { id: string; tenantId: string }>();

  beforeAll(async () => {
    a = await createTenant(t.rest, 'Search A');
    b = await createTenant(t.rest, 'Search B');
    for (const [tenant, alias] of [
      [a, 'shop-a'],
      [b, 'shop-b'],
    ] as const) {
      const created = await t.rest.post('/api/instant/indexes', {
        token: tenant.key,
        body: { data: { name: alias, alias } },
      });
      expect(created.status, created.rawBody).toBe(201);
      const [row] = await sql<{ id: string }>(t.databaseUrl, 'SELECT id FROM search_indexes WHERE tenant_id = $1', [
        tenant.id,
      ]);
      indexIds.set(alias, { id: row!.id, tenantId: tenant.id });
    }
  });

  const search = (alias: string, fields: Partial<SearchRecord> = {}): SearchRecord => {
    const record = {
      tenantId: indexIds.get(alias)!.tenantId,
      indexId: indexIds.get(alias)!.id,
      searchedAt: Math.floor(Date.now() / 1000),
      query: 'lamp',
      resultCount: 3,
      ...fields,
    };
    return { queryKey: queryKeyOf(record.query), ...record };
  };
  /** The searches counted per index alias and query, for the queries given. */
  const counted = async (queries: string[]) =>
    (
      await sql<{ alias: string; query: string; searches: number }>(
        t.databaseUrl,
        `SELECT i.alias, s.query, sum(s.searches)::int AS searches
           FROM search_query_stats s JOIN search_indexes i ON i.id = s.index_id
          WHERE s.query = ANY($1) GROUP BY i.alias, s.query ORDER BY i.alias, s.query`,
        [queries],
      )
    ).map((row) => `${row.alias} ${row.query} ×${row.searches}`);

  it('drops and counts a search whose text cannot be stored, before any batch; the others are counted', async () => {
    const reported: unknown[] = [];
    const log = new SearchLog(t.db, (error) => reported.push(error));
    const nul = search('shop-b', { query: 'lamp\u0000' });
    const surrogate = search('shop-a', { query: 'lamp \ud800' });
    log.record([
      search('shop-a', { query: 'lamp one' }),
      nul,
      search('shop-b', { query: 'lamp one' }),
      surrogate,
      search('shop-a', { query: 'ünï 😀' }),
      search('shop-a', { query: 'lamp one' }),
    ]);
    await log.flush();

    expect(await counted(['lamp one', 'ünï 😀', 'lamp \ufffd'])).toEqual([
      'shop-a lamp one ×2',
      'shop-a ünï 😀 ×1',
      'shop-b lamp one ×1',
    ]);
    expect(log.dropped).toBe(2);
    expect(reported).toHaveLength(2);
    for (const error of reported) expect(error).toBeInstanceOf(SearchNotStored);
    expect((reported as SearchNotStored[]).map((error) => error.searches)).toEqual(
      [nul, surrogate].map(({ tenantId, indexId, searchedAt }) => ({
        tenantId,
        indexId,
        hour: new Date(Math.floor(searchedAt / 3600) * 3600_000).toISOString(),
        count: 1,
      })),
    );
    // A report names no query: what people search for is not logged.
    for (const error of reported as SearchNotStored[]) expect(error.message).not.toContain('lamp');
  });

  it('stores the rest of a batch refused for one row, whose searches alone are dropped, counted and reported', async () => {
    const reported: unknown[] = [];
    const log = new SearchLog(t.db, (error) => reported.push(error));
    const bad = search('shop-b', { query: 'lamp refused' });
    const allow = await refuseRows('search_query_stats', 'INSERT', `NEW.query = '${bad.query}'`);
    try {
      log.record([search('shop-a', { query: 'lamp two' }), bad, search('shop-b', { query: 'lamp two' }), bad]);
      log.record([search('shop-a', { query: 'lamp two', resultCount: 0 })]);
      await log.flush();
    } finally {
      await allow();
    }

    expect(await counted(['lamp two', bad.query])).toEqual(['shop-a lamp two ×2', 'shop-b lamp two ×1']);
    expect(log.dropped).toBe(2);
    expect(reported).toHaveLength(1);
    const [error] = reported as SearchNotStored[];
    expect(error).toBeInstanceOf(SearchNotStored);
    expect(error!.searches).toMatchObject({ indexId: bad.indexId, count: 2 });
    expect(error!.message).toContain(`2 searches of index ${bad.indexId} (tenant ${b.id})`);
    expect(error!.message).toContain('P0001');
  });

  it('does not count an unreachable database as bad rows: one report, nothing dropped', async () => {
    const down = createDb(`postgresql://nobody:nothing@127.0.0.1:${await closedPort()}/none`, { poolSize: 1 });
    const reported: unknown[] = [];
    const log = new SearchLog(down, (error) => reported.push(error));
    try {
      log.record([search('shop-a'), search('shop-b'), search('shop-a', { query: 'chair' })]);
      await log.flush();
    } finally {
      await down.$disconnect();
    }
    expect(log.dropped).toBe(0);
    expect(reported).toHaveLength(1);
    expect(reported[0]).not.toBeInstanceOf(SearchNotStored);
  });

  it('stores a query whose lowercase form passes 512 units without splitting a surrogate pair', async () => {
    // 'İ' lowercases to two code units, which pushes the emoji across the 512th unit.
    const q = `İ${'a'.repeat(509)}😀`;
    const response = await t.rest.post('/api/instant/search/indexes/shop-a', {
      token: a.key,
      body: { data: [{ q }] },
    });
    expect(response.status, response.rawBody).toBe(201);
    await t.services.search.log.flush();
    expect(t.services.search.log.dropped).toBe(0);
    const rows = await sql<{ query: string }>(
      t.databaseUrl,
      'SELECT query FROM search_query_stats WHERE query LIKE $1',
      ['i%😀'],
    );
    expect(rows).toEqual([{ query: q.toLowerCase() }]);
  });
});

describe('search clicks', () => {
  it('refuses, as a 400 and before any write, a signed click code whose values could not be stored', async () => {
    const tenant = await createTenant(t.rest, 'Clicks');
    const created = await t.rest.post('/api/instant/indexes', {
      token: tenant.key,
      body: { data: { name: 'Clicks', alias: 'clicks' } },
    });
    expect(created.status, created.rawBody).toBe(201);
    const [index] = await sql<{ id: string }>(t.databaseUrl, 'SELECT id FROM search_indexes WHERE tenant_id = $1', [
      tenant.id,
    ]);
    // Signed as the app signs (the secrets derive from the master key), so only the values are wrong.
    const codec = createClickCodec(createHmac('sha256', TEST_MASTER_KEY).update('search-click-codes').digest());
    const queryIds = createQueryIdCodec(createHmac('sha256', TEST_MASTER_KEY).update('search-query-ids').digest());
    const click = {
      indexId: index!.id,
      searchId: queryIds.issue(index!.id, { searchedAt: Math.floor(Date.now() / 1000), queryKey: queryKeyOf('lamp') }),
      documentId: 'p1',
      position: 1,
      url: 'https://shop.example.com/p1',
    };
    for (const bad of [{ documentId: 'p1\u0000' }, { documentId: 'p\ud800' }, { searchId: 'not-a-uuid' }]) {
      const response = await t.rest.get(`/api/instant/search/clicks/click/${codec.encode({ ...click, ...bad })}`);
      expect(response.status, response.rawBody).toBe(400);
      expect(response.body.error.details).toEqual([{ field: 'path.code', message: 'is not a valid click code' }]);
    }
    expect(await sql(t.databaseUrl, 'SELECT id FROM search_clicks WHERE tenant_id = $1', [tenant.id])).toEqual([]);
    // A code made before query ids carried their search (a UUIDv7) still leads to the document, but its click
    // could never count with its search and is not stored.
    const older = await t.rest.get(
      `/api/instant/search/clicks/click/${codec.encode({ ...click, searchId: uuidv7() })}`,
    );
    expect(older.status, older.rawBody).toBe(307);
    expect(older.headers.location).toBe(click.url);
    expect(await sql(t.databaseUrl, 'SELECT id FROM search_clicks WHERE tenant_id = $1', [tenant.id])).toEqual([]);
    // The same code with storable values is recorded.
    const good = await t.rest.get(`/api/instant/search/clicks/click/${codec.encode(click)}`);
    expect(good.status, good.rawBody).toBe(307);
    expect(await sql(t.databaseUrl, 'SELECT document_id FROM search_clicks WHERE tenant_id = $1', [tenant.id])).toEqual(
      [{ document_id: 'p1' }],
    );
  });
});

describe('channel broadcasts', () => {
  let world: StockWorld;
  const SECRET = 'channel-secret-0123456789';

  /** A channel on 127.0.0.1 answering every delivery with `status` and `body`; keeps what it received. */
  async function channel(status: number, body: string) {
    const received: string[] = [];
    const server = createServer((request, response) => {
      received.push(String(request.headers['x-delivery-id']));
      request.resume().on('end', () => response.writeHead(status).end(body));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));
    return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/stock`, received };
  }

  async function createChannelWithWebhook(name: string, url: string) {
    const created = await graphqlData(
      t,
      world.tenant.key,
      `mutation($input: CreateSalesChannelInput!) { createSalesChannel(input: $input) { sales_channel { id } } }`,
      { input: { name } },
    );
    const channelId = created.createSalesChannel.sales_channel.id as string;
    await graphqlData(
      t,
      world.tenant.key,
      `mutation($input: SetSalesChannelWebhookInput!) { setSalesChannelWebhook(input: $input) { url } }`,
      { input: { channel_id: channelId, url, secret: SECRET } },
    );
    return channelId;
  }

  beforeAll(async () => {
    world = await createStockWorld(t, 'Broadcasts', 2);
  });

  it('a delivery that cannot be read, sent or recorded fails alone; the others of the pass are recorded', async () => {
    const accepting = await channel(200, 'ok');
    const nulAnswer = await channel(500, 'broken\u0000answer');
    const unrecorded = await channel(200, 'ok');
    const channels = {
      accepting: await createChannelWithWebhook('Accepting', accepting.url),
      nulAnswer: await createChannelWithWebhook('Answers U+0000', nulAnswer.url),
      unparsableUrl: await createChannelWithWebhook('Unparsable URL', accepting.url),
      damaged: await createChannelWithWebhook('Damaged', accepting.url),
      unrecorded: await createChannelWithWebhook('Unrecorded', unrecorded.url),
    };
    // Rows the API would refuse, written behind its back: a URL that does not parse, a secret gone.
    await sql(t.databaseUrl, `UPDATE channel_webhooks SET url = 'http://exa mple.com/stock' WHERE channel_id = $1`, [
      channels.unparsableUrl,
    ]);
    await sql(t.databaseUrl, 'ALTER TABLE channel_webhooks ALTER COLUMN secret DROP NOT NULL');
    await sql(t.databaseUrl, 'UPDATE channel_webhooks SET secret = NULL WHERE channel_id = $1', [channels.damaged]);

    await addStock(t, world, 'SKU-1', 4);
    const deliveries = async () =>
      Object.fromEntries(
        (
          await sql<{ id: string; channel_id: string; status: string; attempts: number; last_message: string | null }>(
            t.databaseUrl,
            `SELECT id, channel_id, status::text, attempts, last_message, next_attempt_at > now() AS later,
                    claimed_until IS NOT NULL AS claimed
               FROM stock_broadcasts WHERE tenant_id = $1`,
            [world.tenant.id],
          )
        ).map((row) => [row.channel_id, row]),
      );
    const before = await deliveries();
    expect(Object.keys(before)).toHaveLength(5);
    const unrecordedId = before[channels.unrecorded]!.id;
    // Its attempt is made, but recording the outcome (the update that releases the claim) is refused.
    const allow = await refuseRows(
      'stock_broadcasts',
      'UPDATE',
      `OLD.id = '${unrecordedId}' AND NEW.claimed_until IS NULL`,
    );

    const service = new BroadcastService(t.db, t.config.broadcasts);
    const reported: DeliveryFailed[] = [];
    try {
      expect(await service.deliverDue((error) => reported.push(error))).toBe(5);
    } finally {
      await allow();
    }

    const after = await deliveries();
    expect(after[channels.accepting]).toMatchObject({ status: 'PROCESSED', attempts: 1, last_message: 'HTTP 200' });
    // Failed attempts, each due again after its own backoff.
    expect(after[channels.nulAnswer]).toMatchObject({
      status: 'PENDING',
      attempts: 1,
      last_message: 'HTTP 500 (answer not shown: not storable text)',
      later: true,
      claimed: false,
    });
    expect(after[channels.unparsableUrl]).toMatchObject({
      status: 'PENDING',
      attempts: 1,
      later: true,
      claimed: false,
    });
    expect(after[channels.unparsableUrl]!.last_message).toMatch(/^not reachable/);
    expect(after[channels.damaged]).toMatchObject({
      status: 'PENDING',
      attempts: 1,
      last_message: 'not sent: its stored data is damaged',
      later: true,
      claimed: false,
    });
    // Sent, but its outcome could not be written: it keeps its claim until that runs out.
    expect(after[channels.unrecorded]).toMatchObject({
      status: 'PENDING',
      attempts: 1,
      last_message: null,
      claimed: true,
    });
    expect(unrecorded.received).toEqual([unrecordedId]);
    expect(accepting.received).toEqual([before[channels.accepting]!.id]);

    // Reported: the two that failed for a reason of their own, each by itself.
    expect(reported.map((error) => error.delivery.id).sort()).toEqual(
      [before[channels.damaged]!.id, unrecordedId].sort(),
    );
    for (const error of reported) {
      expect(error).toBeInstanceOf(DeliveryFailed);
      expect(error.message).toContain(`tenant ${world.tenant.id}`);
    }

    // Once its claim runs out, a later pass delivers and records it (the same delivery id again).
    await sql(t.databaseUrl, `UPDATE stock_broadcasts SET claimed_until = now() - interval '1 second' WHERE id = $1`, [
      unrecordedId,
    ]);
    const again: DeliveryFailed[] = [];
    expect(await service.deliverDue((error) => again.push(error))).toBe(1);
    expect(again).toEqual([]);
    expect((await deliveries())[channels.unrecorded]).toMatchObject({
      status: 'PROCESSED',
      attempts: 2,
      last_message: 'HTTP 200',
    });
    expect(unrecorded.received).toEqual([unrecordedId, unrecordedId]);
  });
});

describe('reservation sweeps', () => {
  let world: StockWorld;
  const CREATE = `mutation($input: CreateReservationInput!) {
    createReservation(input: $input) { reservation { id } } }`;

  beforeAll(async () => {
    world = await createStockWorld(t, 'Reservations', 2);
    await addStock(t, world, 'SKU-1', 20);
    await addStock(t, world, 'SKU-2', 20);
  });

  /**
   * `count` reservations of one unit of each SKU, all created before any expires: an allocating
   * write releases the expired reservations of its SKUs itself, which would leave the sweeper nothing to do.
   */
  async function reservations(count: number) {
    const ids: string[] = [];
    for (let i = 0; i < count; i += 1) {
      const data = await graphqlData(t, world.tenant.key, CREATE, {
        input: {
          business_id: world.catalog.businessId,
          warehouse_id: world.warehouseId,
          channel_id: world.channelId,
          customer: { name: 'Ada Lovelace', email: 'ada@example.com' },
          items: [
            { sku: 'SKU-1', quantity: 1 },
            { sku: 'SKU-2', quantity: 1 },
          ],
          expires_at: Date.now() + 3_600_000,
        },
      });
      ids.push(data.createReservation.reservation.id as string);
    }
    return ids;
  }

  const expire = (id: string, secondsAgo: number) =>
    sql(t.databaseUrl, `UPDATE reservations SET expires_at = now() - make_interval(secs => $2) WHERE id = $1`, [
      id,
      secondsAgo,
    ]);

  /** How many ledger entries the sweeper wrote for each reservation (one per SKU when released once). */
  async function releasesOf(ids: string[]) {
    const counts: number[] = [];
    for (const id of ids) {
      const rows = await sql(
        t.databaseUrl,
        `SELECT id FROM stock_mutations WHERE tenant_id = $1 AND "references" @> $2::jsonb AND actor_type = 'system'`,
        [world.tenant.id, JSON.stringify([{ type: 'Reservation', id }])],
      );
      counts.push(rows.length);
    }
    return counts;
  }

  const statusesOf = async (ids: string[]) =>
    (
      await sql<{ status: string }>(
        t.databaseUrl,
        'SELECT status::text FROM reservations WHERE id = ANY($1) ORDER BY array_position($1, id)',
        [ids],
      )
    ).map((row) => row.status);

  it('releases the others of a batch, once each with concurrent sweepers, and reports the one that fails', async () => {
    const [bad, ...good] = (await reservations(4)) as [string, ...string[]];
    for (const [i, id] of [bad, ...good].entries()) await expire(id, 300 - i * 60);
    const allow = await refuseRows('reservations', 'UPDATE', `OLD.id = '${bad}'`);
    const reported: ReleaseFailed[] = [];
    const sweepers = [0, 1, 2].map(
      () =>
        new ReservationService(t.db, t.services.cursors, t.services.channelWarehouses, t.services.reservationBatches),
    );
    try {
      const released = await Promise.all(
        sweepers.map((sweeper) => sweeper.releaseExpired(100, (error) => reported.push(error))),
      );
      expect(released.reduce((sum, count) => sum + count, 0)).toBe(3);
    } finally {
      await allow();
    }
    expect(await statusesOf([bad, ...good])).toEqual(['ACTIVE', 'EXPIRED', 'EXPIRED', 'EXPIRED']);
    expect(await releasesOf([bad, ...good])).toEqual([0, 2, 2, 2]);
    // Each sweeper tried the bad one once and said so, naming it alone.
    expect(reported).toHaveLength(3);
    for (const error of reported) {
      expect(error).toBeInstanceOf(ReleaseFailed);
      expect(error).toMatchObject({ reservationId: bad, tenantId: world.tenant.id, attempts: 1 });
    }
    // Released now that its rows are accepted, and still only once.
    expect(await sweepers[0]!.releaseExpired()).toBe(1);
    expect(await releasesOf([bad, ...good])).toEqual([2, 2, 2, 2]);
    await expectStockInvariants(t, world.tenant.id);
  });

  it(`skips one failed ${MAX_RELEASE_ATTEMPTS} times in later sweeps: the ones behind it are released`, async () => {
    const [bad, behind, next] = (await reservations(3)) as [string, string, string];
    await expire(bad, 3_600);
    await expire(behind, 60);
    const allow = await refuseRows('reservations', 'UPDATE', `OLD.id = '${bad}'`);
    const sweeper = new ReservationService(
      t.db,
      t.services.cursors,
      t.services.channelWarehouses,
      t.services.reservationBatches,
    );
    const other = new ReservationService(
      t.db,
      t.services.cursors,
      t.services.channelWarehouses,
      t.services.reservationBatches,
    );
    const reported: ReleaseFailed[] = [];
    try {
      // Batches of one: the bad reservation, oldest, comes first until this process gives up on it.
      for (let sweep = 0; sweep < MAX_RELEASE_ATTEMPTS; sweep += 1) {
        expect(await sweeper.releaseExpired(1, (error) => reported.push(error))).toBe(0);
      }
      expect(await sweeper.releaseExpired(1, (error) => reported.push(error))).toBe(1);
      expect(await sweeper.releaseExpired(1, (error) => reported.push(error))).toBe(0);
      // Another process has not given up on it: without a reporter, its failure is thrown once the
      // rest of the batch is released.
      await expire(next, 30);
      await expect(other.releaseExpired(100)).rejects.toBeInstanceOf(AggregateError);
    } finally {
      await allow();
    }
    expect(reported.map((error) => [error.reservationId, error.attempts])).toEqual([
      [bad, 1],
      [bad, 2],
      [bad, 3],
    ]);
    expect(reported.at(-1)!.message).toContain('no more attempts by this process');
    expect(await statusesOf([bad, behind, next])).toEqual(['ACTIVE', 'EXPIRED', 'EXPIRED']);
    expect(await releasesOf([bad, behind, next])).toEqual([0, 2, 2]);
    expect(await other.releaseExpired()).toBe(1);
    expect(await releasesOf([bad, behind, next])).toEqual([2, 2, 2]);
    await expectStockInvariants(t, world.tenant.id);
  });
});
