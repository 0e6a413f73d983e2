/**
 * Soft purges (`DELETE .../cache?soft=true`): by path, prefix and tag, responses are marked stale
 * rather than removed, served at once (X-Cache: STALE) while exactly one request per response
 * fetches them again, in this process and in another service process on the same database.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { createTenant, TEST_MASTER_KEY, type Tenant } from '../helpers/app';
import { edgeGet, proxyWith, startEdgeApp, startOrigin } from '../helpers/edge';
import { expectRestError } from '../helpers/rest';
import { startServiceProcess, type ServiceProcess } from '../helpers/service-process';

const DEADLINE = { timeout: 2_000, interval: 20 };
const PROXIES = '/api/storage/edge/proxies';

const one = await startEdgeApp();
let version = 1;
const origin = await startOrigin((request, response) => {
  const path = request.url!.split('?')[0]!;
  response.setHeader('content-type', 'text/plain');
  if (path.includes('/tagged/')) response.setHeader('cache-tag', path.endsWith('/red') ? 'red' : 'blue');
  if (path.includes('/slow/')) return void setTimeout(() => response.end(`${path.slice(2)} v${version}`), 500);
  response.end(`${path.slice(2)} v${version}`);
});
const originCount = (path: string) => origin.requests.filter((r) => r.url === `/s${path}`).length;

let tenant: Tenant;
let other: ServiceProcess;
beforeAll(async () => {
  tenant = await createTenant(one.rest, 'Soft purge tenant');
  const route = { path: '/', origin: { uri: `${origin.url}/s` }, settings: { cache: { age: 300 } } };
  const created = await one.rest.post(PROXIES, { token: tenant.key, body: proxyWith('soft', route) });
  expect(created.status).toBe(201);
  other = await startServiceProcess({
    DATABASE_URL: one.databaseUrl,
    MASTER_KEY: TEST_MASTER_KEY,
    EDGE_ALLOW_PRIVATE_ORIGINS: 'true',
  });
}, 60_000);

const get = (path: string) => edgeGet(`${one.baseUrl}/edge/soft${path}`);
const getOther = (path: string) => edgeGet(`http://127.0.0.1:${other.port}/edge/soft${path}`);
const purge = (query: string) => one.rest.delete(`${PROXIES}/soft/cache${query}`, { token: tenant.key });

describe('soft purge', () => {
  it('serves the stale response at once while one request fetches it again', async () => {
    version = 1;
    expect((await get('/slow/page')).text).toBe('/slow/page v1');
    expect((await get('/slow/page')).headers['x-cache']).toBe('HIT');
    version = 2;
    expect((await purge('?path=/slow/page&soft=true')).status).toBe(204);
    const answers = await Promise.all(Array.from({ length: 20 }, () => get('/slow/page')));
    for (const answer of answers) {
      expect(answer.headers['x-cache']).toBe('STALE');
      expect(answer.text).toBe('/slow/page v1');
    }
    await expect.poll(async () => (await get('/slow/page')).text, DEADLINE).toBe('/slow/page v2');
    expect((await get('/slow/page')).headers['x-cache']).toBe('HIT');
    expect(originCount('/slow/page')).toBe(2);
  });

  it('marks a prefix or a tag stale and leaves the rest fresh', async () => {
    version = 1;
    for (const path of ['/tagged/red', '/tagged/blue', '/kept/a']) await get(path);
    expect((await purge('?tag=red&soft=true')).status).toBe(204);
    expect((await get('/tagged/red')).headers['x-cache']).toBe('STALE');
    expect((await get('/tagged/blue')).headers['x-cache']).toBe('HIT');
    expect((await purge('?path=/kept/&soft=true')).status).toBe(204);
    expect((await get('/kept/a')).headers['x-cache']).toBe('STALE');
    expect((await get('/tagged/blue')).headers['x-cache']).toBe('HIT');
  });

  it('reaches another process, where one request per response goes to the origin', async () => {
    version = 1;
    await getOther('/slow/shared');
    await get('/slow/shared');
    expect((await getOther('/slow/shared')).headers['x-cache']).toBe('HIT');
    expect((await get('/slow/shared')).headers['x-cache']).toBe('HIT');
    expect(originCount('/slow/shared')).toBe(2);
    version = 3;
    expect((await purge('?path=/slow/shared&soft=true')).status).toBe(204);
    await expect.poll(async () => (await getOther('/slow/shared')).headers['x-cache'], DEADLINE).toBe('STALE');
    const answers = await Promise.all(Array.from({ length: 20 }, () => getOther('/slow/shared')));
    for (const answer of answers) expect(answer.text).toMatch(/^\/slow\/shared v[13]$/);
    await expect.poll(async () => (await getOther('/slow/shared')).text, DEADLINE).toBe('/slow/shared v3');
    // One refetch by the other process; this one has not been asked since.
    expect(originCount('/slow/shared')).toBe(3);
  });

  it('refuses a soft value other than true or false with a 400 that purges nothing', async () => {
    await get('/refused');
    expect((await get('/refused')).headers['x-cache']).toBe('HIT');
    for (const query of ['?soft=yes', '?soft=', '?soft=1', `?soft=${'t'.repeat(10_000)}`, '?soft=true&soft=false']) {
      expectRestError(await purge(query), 400);
    }
    expect((await get('/refused')).headers['x-cache']).toBe('HIT');
  });

  it('purges hard by default', async () => {
    await get('/hard');
    expect((await purge('?path=/hard&soft=false')).status).toBe(204);
    expect((await get('/hard')).headers['x-cache']).toBe('MISS');
  });
});
