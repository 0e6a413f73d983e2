/**
 * Typesense that lags or fails, against the stand-in (test/helpers/typesense-stand-in.ts) made to
 * answer 503, to never answer, or to fail one step of a rebuild: deliveries come from the queue in
 * PostgreSQL and are retried until the index matches; requests move to the next node of the
 * cluster; a failed rebuild leaves the alias and the old collection as they were; `/metrics` shows
 * what waits and `/readyz` whether Typesense can be reached.
 */
import { afterAll, describe, expect, it, vi } from 'vitest';
import { poolOf } from '../../src/kernel/db';
import type { Principal } from '../../src/kernel/principal';
import { SearchDeliveryFailed } from '../../src/modules/search/delivery/delivery-queue';
import type { SearchServices } from '../../src/modules/search/search.module';
import type { IndexInputData } from '../../src/modules/search/search.schemas';
import { createTenant, startTestApp, type TestApp } from '../helpers/app';
import { searchServicesOf } from '../helpers/search-services';
import { NOT_READY, STAND_IN_API_KEY, TypesenseStandIn } from '../helpers/typesense-stand-in';

const { rest, db, config, services: appServices } = await startTestApp();
const tenant = await createTenant(rest, 'Typesense deliveries');
const principal: Principal = { tenantId: tenant.id, scopes: new Set(['*']), actor: { type: 'api_key', id: 'd' } };

const standIns: TypesenseStandIn[] = [];
afterAll(async () => {
  for (const standIn of standIns) await standIn.close();
});

async function standIn(version = '30.0', nodes = 1) {
  const started = await TypesenseStandIn.start(version, { nodes });
  standIns.push(started);
  return started;
}

/** The search services of one process on the test database, talking to `url` with short timeouts and waits. */
async function processOn(url: string, failures: unknown[]): Promise<SearchServices> {
  const services = searchServicesOf(
    { config, db, services: appServices },
    {
      typesenseUrl: url,
      typesenseApiKey: STAND_IN_API_KEY,
      config: {
        typesense: { ...config.typesense, timeoutSeconds: 0.3, retryIntervalSeconds: 0.01 },
        searchDelivery: { backoffMs: 20, maxBackoffMs: 80 },
      },
      onBackgroundError: (error) => failures.push(error),
    },
  );
  await services.start();
  return services;
}

const typedFields: IndexInputData['fields'] = [
  { from: 'name', to: 'name', type: 'STRING' },
  { from: 'price', to: 'price', type: 'NUMBER' },
];
const products = [
  { id: 'p1', name: 'Desk lamp', price: 25.5 },
  { id: 'p2', name: 'Office chair', price: 150 },
];

let counter = 0;
async function createIndex(services: SearchServices, settings: Partial<IndexInputData> = {}) {
  const alias = `delivery-${++counter}`;
  const { id } = await services.indexes.create(principal, { name: alias, alias, fields: typedFields, ...settings });
  return { alias, id, typesenseAlias: `idx_${id.replaceAll('-', '')}` };
}

const pending = async (services: SearchServices, alias: string) =>
  (await services.indexes.get(principal, alias)).has_pending_updates;
const queueRow = (indexId: string) =>
  db.$queryRaw<{ attempts: number }[]>`SELECT attempts FROM search_deliveries WHERE index_id = ${indexId}::uuid`;
const attemptsOf = (failures: unknown[]) =>
  failures.map((failure) => {
    expect(failure).toBeInstanceOf(SearchDeliveryFailed);
    return (failure as SearchDeliveryFailed).attempts;
  });

describe('deliveries from the queue in PostgreSQL', () => {
  it('a write answers while Typesense answers 503; its delivery is retried until the index matches', async () => {
    const server = await standIn();
    // Hits are the documents the collection holds: what a search finds once they are delivered.
    server.answerSearch = (_search, collection) => ({
      found: collection.documents.size,
      hits: [...collection.documents.values()].map((document) => ({ document, highlight: {} })),
      facet_counts: [],
      out_of: collection.documents.size,
      page: 1,
      search_time_ms: 0,
      request_params: {},
    });
    const failures: unknown[] = [];
    const services = await processOn(server.url, failures);
    const { alias, id, typesenseAlias } = await createIndex(services);
    const collection = server.aliases.get(typesenseAlias)!;

    // Each delivery asks 3 times (2 retries on the one node) before it fails: 4 deliveries fail.
    server.failNext(12);
    await services.indexes.upsertDocuments(principal, alias, products);
    expect(await pending(services, alias)).toBe(true);
    expect(server.collections.get(collection)!.documents.size).toBe(0);
    expect(await queueRow(id)).toEqual([{ attempts: 1 }]);

    const worker = services.deliveries!.startWorker((error) => failures.push(error), 5);
    try {
      await vi.waitFor(async () => expect(await pending(services, alias)).toBe(false), { timeout: 5_000 });
    } finally {
      await worker.stop();
    }
    expect(server.collections.get(collection)!.documents.size).toBe(2);
    const [found] = await services.search.searchIndex(principal, alias, [{ q: 'desk' } as never]);
    expect(found!.results[0]!.count).toBe(2);
    expect(await queueRow(id)).toEqual([]);
    // Waits double from 20 ms up to 80 ms, each drawn between half and all of it.
    expect(attemptsOf(failures)).toEqual([1, 2, 3, 4]);
    (failures as SearchDeliveryFailed[]).forEach(({ attempts, retryInMs }) => {
      const ceiling = Math.min(20 * 2 ** (attempts - 1), 80);
      expect(retryInMs).toBeGreaterThanOrEqual(ceiling / 2);
      expect(retryInMs).toBeLessThanOrEqual(ceiling);
    });
  });

  it('processes deliver an index one at a time: of two asking at once, one sends the change', async () => {
    const server = await standIn();
    const failures: unknown[] = [];
    const [first, second] = [await processOn(server.url, failures), await processOn(server.url, failures)];
    const { alias, id } = await createIndex(first);
    server.failNext(3);
    await first.indexes.upsertDocuments(principal, alias, products);
    expect(attemptsOf(failures.splice(0))).toEqual([1]);
    await vi.waitFor(async () => {
      const [row] = await db.$queryRaw<{ due: boolean }[]>`
        SELECT next_attempt_at <= now() AS due FROM search_deliveries WHERE index_id = ${id}::uuid`;
      expect(row!.due).toBe(true);
    });
    const from = server.requests.length;
    const outcomes = await Promise.all([first.deliveries!.deliver(id), second.deliveries!.deliver(id)]);
    expect(outcomes.sort()).toEqual(['delivered', 'skipped']);
    expect(server.lines(from).filter((line) => line.endsWith('/import'))).toHaveLength(1);
    expect(failures).toEqual([]);
  });

  it('a deleted index waits in the queue until Typesense answers; then its alias and collection go', async () => {
    const server = await standIn();
    const failures: unknown[] = [];
    const services = await processOn(server.url, failures);
    const { alias, id, typesenseAlias } = await createIndex(services);
    const collection = server.aliases.get(typesenseAlias)!;
    server.failNext(3);
    await services.indexes.remove(principal, alias);
    expect(attemptsOf(failures)).toEqual([1]);
    expect(server.aliases.get(typesenseAlias)).toBe(collection);
    await vi.waitFor(async () => expect(await services.deliveries!.deliver(id)).toBe('delivered'));
    expect(server.aliases.has(typesenseAlias)).toBe(false);
    expect(server.collections.has(collection)).toBe(false);
    expect(await queueRow(id)).toEqual([]);
  });
});

describe('the nodes of TYPESENSE_URL', () => {
  /**
   * Node 0 was sent one request (the client starts at a random node and goes round them), which
   * failed and went on to node 1 at once; node 0 was then left out, so node 1 had all the others.
   */
  const expectFailedOverOnce = (cluster: TypesenseStandIn) => {
    const lines = cluster.nodeLines();
    const onFirstNode = lines.flatMap((line, i) => (line.startsWith('0 ') ? [i] : []));
    expect(onFirstNode).toHaveLength(1);
    expect(lines[onFirstNode[0]! + 1]).toBe(lines[onFirstNode[0]!]!.replace(/^0 /, '1 '));
  };

  it('a request answered 503 by one node is sent again to the next; no delivery fails', async () => {
    const cluster = await standIn('30.0', 2);
    // The first node lags behind the cluster for the whole test.
    cluster.failNext(Infinity, { node: 0 });
    const failures: unknown[] = [];
    const services = await processOn(cluster.clusterUrl, failures);
    const { alias, typesenseAlias } = await createIndex(services);
    await services.indexes.upsertDocuments(principal, alias, products);
    await services.search.searchIndex(principal, alias, [{ q: 'lamp' } as never]);
    expect(failures).toEqual([]);
    expect(await pending(services, alias)).toBe(false);
    expect(cluster.collections.get(cluster.aliases.get(typesenseAlias)!)!.documents.size).toBe(2);
    expectFailedOverOnce(cluster);
  });

  it('a node that never answers: its request goes to the next node after the timeout, once', async () => {
    const cluster = await standIn('30.0', 2);
    cluster.stall('*', /.*/, Infinity, { node: 0 });
    const failures: unknown[] = [];
    const started = Date.now();
    const services = await processOn(cluster.clusterUrl, failures);
    const { alias, typesenseAlias } = await createIndex(services);
    await services.indexes.upsertDocuments(principal, alias, products);
    await services.search.searchIndex(principal, alias, [{ q: 'lamp' } as never]);
    expect(failures).toEqual([]);
    expect(cluster.collections.get(cluster.aliases.get(typesenseAlias)!)!.documents.size).toBe(2);
    expectFailedOverOnce(cluster);
    // One timeout of 0.3 s was waited for, not one per request.
    expect(Date.now() - started).toBeLessThan(3_000);
  });
});

for (const version of ['30.0', '29.0']) {
  describe(`a rebuild that fails (Typesense ${version})`, () => {
    /** An index of 1 200 documents (imported in two chunks) with a synonym and a stop word: sets of its own. */
    async function fullIndex() {
      const server = await standIn(version);
      const failures: unknown[] = [];
      const services = await processOn(server.url, failures);
      const settings = { synonyms: [{ synonyms: ['lamp', 'light'] }], stop_words: ['the'] };
      const index = await createIndex(services, settings);
      const documents = Array.from({ length: 1_200 }, (_, i) => ({ id: `d${i}`, name: `Lamp ${i}`, price: i }));
      await services.indexes.upsertDocuments(principal, index.alias, documents.slice(0, 1_000));
      await services.indexes.upsertDocuments(principal, index.alias, documents.slice(1_000));
      const old = server.aliases.get(index.typesenseAlias)!;
      expect(server.collections.get(old)!.documents.size).toBe(1_200);
      const state = () => ({
        alias: server.aliases.get(index.typesenseAlias),
        collections: [...server.collections.keys()],
        synonymSets: [...server.synonymSets.keys()],
        stopwordSets: [...server.stopwordSets.keys()],
      });
      /** A new definition: the collection is rebuilt, in the background of the request. */
      const rebuild = async () => {
        await services.indexes.replace(principal, index.alias, {
          name: index.alias,
          fields: typedFields,
          search_fields: ['name'],
          ...settings,
        } as IndexInputData);
        await vi.waitFor(() => expect(failures).toHaveLength(1));
        return ((failures.pop() as SearchDeliveryFailed).cause as Error).message;
      };
      /** After the failure, the delivery tried again builds the new collection and drops the old one. */
      const retried = async () => {
        server.recover();
        await vi.waitFor(async () => expect(await services.deliveries!.deliver(index.id)).toBe('delivered'));
        const now = server.aliases.get(index.typesenseAlias)!;
        expect(now).not.toBe(old);
        expect(server.collections.get(now)!.documents.size).toBe(1_200);
        expect([...server.collections.keys()]).toEqual(before.collections.map((name) => (name === old ? now : name)));
        expect(failures).toEqual([]);
        expect(await pending(services, index.alias)).toBe(false);
      };
      const before = state();
      return { server, services, index, old, state, before, rebuild, retried };
    }

    it('a failure mid-import leaves the alias and the old collection, and drops the new one and its sets', async () => {
      const { server, services, index, old, state, before, rebuild, retried } = await fullIndex();
      // The first chunk of the new collection goes in; the second fails on every try.
      server.fail('POST', /\/documents\/import$/, 503, NOT_READY, 3, { after: 1 });
      const from = server.requests.length;
      expect(await rebuild()).toBe('Request failed with HTTP code 503 | Server said: Not Ready or Lagging');
      const imports = server.lines(from).filter((line) => line.endsWith('/import'));
      expect(imports).toHaveLength(4);
      expect(imports[0]).not.toContain(old);
      expect(state()).toEqual(before);
      expect(server.collections.get(old)!.documents.size).toBe(1_200);
      expect(await pending(services, index.alias)).toBe(true);
      await retried();
    });

    it('a failure at the alias swap leaves the alias and the old collection, and drops the new one', async () => {
      const { server, index, old, state, before, rebuild, retried } = await fullIndex();
      server.fail('PUT', /^\/aliases\//, 503, NOT_READY, 3);
      const from = server.requests.length;
      await rebuild();
      // The alias is read back: the swap did not happen, so the new collection goes.
      const lines = server.lines(from);
      const fresh = lines.find((line) => line.endsWith('/import'))!.split('/')[2]!;
      const swap = lines.indexOf(`PUT /aliases/${index.typesenseAlias}`);
      expect(lines.slice(swap, swap + 5)).toEqual([
        ...Array(3).fill(`PUT /aliases/${index.typesenseAlias}`),
        `GET /aliases/${index.typesenseAlias}`,
        `DELETE /collections/${fresh}`,
      ]);
      expect(state()).toEqual(before);
      expect(server.collections.get(old)!.documents.size).toBe(1_200);
      await retried();
    });

    it('a swap that fails where the alias cannot be read back keeps the new collection, whole, for the retry', async () => {
      const { server, old, state, before, rebuild, retried } = await fullIndex();
      server.fail('PUT', /^\/aliases\//, 503, NOT_READY, 3);
      // The rebuild reads the alias first; reading it back after the failed swap fails too.
      server.fail('GET', /^\/aliases\//, 503, NOT_READY, 3, { after: 1 });
      await rebuild();
      const kept = state().collections.find((name) => !before.collections.includes(name))!;
      expect(state().alias).toBe(old);
      expect(server.collections.get(kept)!.documents.size).toBe(1_200);
      expect(server.collections.get(old)!.documents.size).toBe(1_200);
      // The retry builds the same version again in its place.
      await retried();
    });
  });
}

describe('/metrics and /readyz', () => {
  let app: TestApp;
  let server: TypesenseStandIn;
  const call = async (url: string) => {
    const response = await app.app.inject({ method: 'GET', url });
    return { status: response.statusCode, body: url === '/metrics' ? response.body : response.json() };
  };
  /** The value of a series in the metrics text, or undefined without it. */
  const series = (text: string, name: string) => {
    const line = text.split('\n').find((candidate) => candidate.startsWith(`${name} `));
    return line === undefined ? undefined : Number(line.split(' ')[1]);
  };

  it('show the deliveries waiting per index and their age; /readyz says Typesense is down, then up', async () => {
    server = await standIn();
    app = await startTestApp({
      env: {
        TYPESENSE_URL: server.url,
        TYPESENSE_API_KEY: STAND_IN_API_KEY,
        TYPESENSE_TIMEOUT_SECONDS: '0.3',
        SEARCH_DELIVERY_BACKOFF_MS: '20',
        SEARCH_DELIVERY_MAX_BACKOFF_MS: '100',
      },
    });
    const owner = await createTenant(app.rest, 'Metrics');
    const caller: Principal = { tenantId: owner.id, scopes: new Set(['*']), actor: { type: 'api_key', id: 'm' } };
    const indexes = app.services.search.indexes;
    const { id } = await indexes.create(caller, { name: 'Watched', alias: 'watched', fields: typedFields });
    const pendingVersions = `commerce_search_delivery_pending_versions{index="${id}"}`;
    const age = `commerce_search_delivery_oldest_age_seconds{index="${id}"}`;
    expect(await call('/readyz')).toEqual({
      status: 200,
      body: { status: 'ready', database: 'up', typesense: 'up', down: [] },
    });

    server.failNext(Infinity);
    expect(await call('/readyz')).toEqual({
      status: 503,
      body: { status: 'unavailable', database: 'up', typesense: 'down', down: ['typesense'] },
    });
    await indexes.upsertDocuments(caller, 'watched', products.slice(0, 1));
    const first = (await call('/metrics')).body as string;
    expect(series(first, pendingVersions)).toBe(1);
    expect(series(first, 'commerce_search_delivery_pending_indexes')).toBe(1);
    await new Promise((resolve) => setTimeout(resolve, 50));
    await indexes.upsertDocuments(caller, 'watched', products.slice(1));
    const second = (await call('/metrics')).body as string;
    expect(series(second, pendingVersions)).toBe(2);
    expect(series(second, age)).toBeGreaterThan(series(first, age)!);
    expect(series(second, age)).toBeGreaterThanOrEqual(0.05);

    server.recover();
    await vi.waitFor(
      async () => expect(series((await call('/metrics')).body as string, pendingVersions)).toBeUndefined(),
      { timeout: 5_000 },
    );
    const after = (await call('/metrics')).body as string;
    expect(series(after, age)).toBeUndefined();
    expect(series(after, 'commerce_search_delivery_pending_indexes')).toBe(0);
    expect(await call('/readyz')).toEqual({
      status: 200,
      body: { status: 'ready', database: 'up', typesense: 'up', down: [] },
    });
    const collection = server.aliases.get(`idx_${id.replaceAll('-', '')}`)!;
    expect(server.collections.get(collection)!.documents.size).toBe(2);
  });

  it('/readyz says the database is down while it refuses connections', async () => {
    const name = app.databaseUrl.split('/').at(-1)!.split('?')[0]!;
    // The pool's idle connections are cut: the pool reports each, and replaces it once connections are allowed.
    poolOf(app.db).on('error', () => undefined);
    const refuse = async (refused: boolean) => {
      await db.$executeRawUnsafe(`ALTER DATABASE "${name}" WITH ALLOW_CONNECTIONS ${refused ? 'false' : 'true'}`);
      if (refused) await db.$queryRaw`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = ${name}`;
    };
    await refuse(true);
    try {
      expect(await call('/readyz')).toEqual({
        status: 503,
        body: { status: 'unavailable', database: 'down', typesense: 'up', down: ['database'] },
      });
    } finally {
      await refuse(false);
    }
    await vi.waitFor(async () => expect((await call('/readyz')).status).toBe(200));
  });
});
