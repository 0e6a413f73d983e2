/**
 * Two service processes of one deployment, each an operating-system process started as `npm start`
 * starts it, on one PostgreSQL database: what one changes, the other serves. Search writes are seen
 * by the other process's next search, with no waiting; the edge and credentials follow within the
 * deadline through PostgreSQL notifications (their caches would otherwise hold for seconds).
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase } from '../helpers/db';
import { startOrigin } from '../helpers/edge';
import { callService, startServiceProcess, temporaryDir, type ServiceProcess } from '../helpers/service-process';

const MASTER_KEY = 'mk_two_processes_master_key_0123456789abcdef';
/** Shorter than the 5 s for which a process trusts a verified credential and a loaded proxy. */
const DEADLINE = { timeout: 2_000, interval: 25 };

const origin = await startOrigin((request, response) => {
  response.setHeader('content-type', 'text/plain');
  response.end(`${request.url} at ${process.hrtime.bigint()}`);
});

let one: ServiceProcess;
let two: ServiceProcess;
let key: string;
let tenantId: string;

/** A JSON request to a process, with the tenant's key unless told otherwise. */
const call = (
  service: ServiceProcess,
  method: string,
  path: string,
  { token = key, body }: { token?: string; body?: unknown } = {},
) => callService(service, method, path, { token, body });

beforeAll(async () => {
  const databaseUrl = await createTestDatabase();
  const env = (name: string) => ({
    DATABASE_URL: databaseUrl,
    MASTER_KEY,
    DATA_DIR: temporaryDir(`commerce-${name}-`),
    EDGE_ALLOW_PRIVATE_ORIGINS: 'true',
  });
  [one, two] = await Promise.all([startServiceProcess(env('one')), startServiceProcess(env('two'))]);
  const tenant = await call(one, 'POST', '/api/admin/tenants', { token: MASTER_KEY, body: { data: { name: 'Two' } } });
  expect(tenant.status, tenant.text).toBe(201);
  tenantId = tenant.body.data.id;
  const created = await call(one, 'POST', `/api/admin/tenants/${tenantId}/api-keys`, {
    token: MASTER_KEY,
    body: { data: { name: 'both processes', scopes: ['*'] } },
  });
  expect(created.status, created.text).toBe(201);
  key = created.body.data.key;
}, 60_000);

describe('search across processes', () => {
  const INDEXES = '/api/instant/indexes';
  const PRODUCTS = [
    { id: 'p1', name: 'Desk lamp', brand: 'Lumo', price: 25 },
    { id: 'p2', name: 'Floor lamp', brand: 'Lumo', price: 80 },
    { id: 'p3', name: 'Wall lamp', brand: 'Brite', price: 40 },
  ];
  const search = async (service: ServiceProcess, context: object = { q: 'lamp' }) => {
    const response = await call(service, 'POST', '/api/instant/search/indexes/lamps', { body: { data: [context] } });
    expect(response.status, response.text).toBe(201);
    return response.body.data[0].results[0] as { count: number; hits: { id: string; price: number; _rule: unknown }[] };
  };
  const ids = async (service: ServiceProcess, context?: object) =>
    (await search(service, context)).hits.map((hit) => hit.id);

  it('serves every write of one process on the next search of the other', async () => {
    const index = { name: 'Lamps', alias: 'lamps', filters: [{ key: 'brand' }, { key: 'price' }] };
    expect((await call(one, 'POST', INDEXES, { body: { data: index } })).status).toBe(201);
    expect((await call(one, 'PUT', `${INDEXES}/lamps/documents`, { body: { data: PRODUCTS } })).status).toBe(204);
    const cheap = { q: 'lamp', filters: [{ key: 'price', operator: 'lte', values: ['30'] }] };
    expect(await ids(two, cheap)).toEqual(['p1']);

    // A merge in one process: the other's index has it on its next search, and so has its stored document.
    const patched = await call(one, 'PATCH', `${INDEXES}/lamps/documents`, {
      body: { data: [{ id: 'p3', price: 20 }] },
    });
    expect(patched.status, patched.text).toBe(204);
    expect((await ids(two, cheap)).sort()).toEqual(['p1', 'p3']);
    expect((await call(two, 'GET', `${INDEXES}/lamps/documents/p3`)).body.data).toMatchObject({ price: 20 });

    // A deletion the other way round.
    expect((await call(two, 'DELETE', `${INDEXES}/lamps/documents/p1`)).status).toBe(204);
    expect(await ids(one, cheap)).toEqual(['p3']);
    expect((await call(one, 'GET', `${INDEXES}/lamps/documents/p1`)).status).toBe(404);

    // Rules set in one process pin in the other.
    const rules = [{ id: 'floor-first', query: { text: 'lamp', match: 'contains' }, pin: [{ id: 'p2', position: 1 }] }];
    expect((await call(one, 'PUT', `${INDEXES}/lamps/rules`, { body: { data: rules } })).status).toBe(200);
    expect((await search(two)).hits[0]).toMatchObject({ id: 'p2', _rule: 'floor-first' });

    // Deleting by a filter in one process empties what the other finds.
    const deleted = await call(one, 'DELETE', `${INDEXES}/lamps/documents?filter[brand][eq]=Lumo`);
    expect(deleted.status, deleted.text).toBe(200);
    expect(await ids(two)).toEqual(['p3']);
  });

  it('leaves the other process searching what it did when a write is refused', async () => {
    const before = await search(two);
    const refused = await call(one, 'PATCH', `${INDEXES}/lamps/documents`, {
      body: {
        data: [
          { id: 'p3', price: 1 },
          { id: 'missing', price: 2 },
        ],
      },
    });
    expect(refused.status).toBe(404);
    expect(await search(two)).toEqual({ ...before, query_id: expect.any(String) });
    expect((await call(two, 'GET', `${INDEXES}/lamps/documents/p3`)).body.data.price).toBe(20);
  });
});

describe('the edge and credentials across processes', () => {
  const PROXIES = '/api/storage/edge/proxies';
  const edge = (service: ServiceProcess, path: string) => fetch(`http://127.0.0.1:${service.port}/edge/shop${path}`);
  const cacheOf = async (service: ServiceProcess, path: string) => (await edge(service, path)).headers.get('x-cache');

  it('serves a replaced proxy and honours a purge made by the other process', async () => {
    const routes = (prefix: string) => [
      { path: '/', origin: { uri: `${origin.url}/${prefix}` }, settings: { cache: { age: 300, is_public: true } } },
    ];
    expect((await call(one, 'POST', PROXIES, { body: { data: { key: 'shop', routes: routes('v1') } } })).status).toBe(
      201,
    );
    await expect.poll(() => cacheOf(two, '/page'), DEADLINE).toBe('HIT');
    const cached = await (await edge(two, '/page')).text();
    expect(cached).toMatch(/^\/v1\/page at /);

    expect((await call(one, 'DELETE', `${PROXIES}/shop/cache`)).status).toBe(204);
    await expect.poll(async () => (await edge(two, '/page')).text(), DEADLINE).not.toBe(cached);

    expect(
      (await call(one, 'PUT', `${PROXIES}/shop`, { body: { data: { key: 'shop', routes: routes('v2') } } })).status,
    ).toBe(204);
    await expect.poll(async () => (await edge(two, '/page')).text(), DEADLINE).toMatch(/^\/v2\/page at /);
  });

  it('refuses an API key revoked in the other process', async () => {
    const created = await call(one, 'POST', `/api/admin/tenants/${tenantId}/api-keys`, {
      token: MASTER_KEY,
      body: { data: { name: 'revoked soon', scopes: ['proxies:read'] } },
    });
    const { id, key: revokedKey } = created.body.data as { id: string; key: string };
    expect((await call(two, 'GET', PROXIES, { token: revokedKey })).status).toBe(200);
    const revoked = await call(one, 'DELETE', `/api/admin/tenants/${tenantId}/api-keys/${id}`, { token: MASTER_KEY });
    expect(revoked.status).toBe(204);
    await expect.poll(async () => (await call(two, 'GET', PROXIES, { token: revokedKey })).status, DEADLINE).toBe(401);
  });
});
