/**
 * Edge proxy configuration (`/api/storage/edge/proxies`): create, read, replace and delete, the
 * round trip of every field, tenancy and duplicate keys. Pagination lives in proxies.list.test.ts,
 * rejected input and credentials in proxies.errors.test.ts.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { createTenant, startTestApp, type Tenant } from '../helpers/app';
import { sql } from '../helpers/db';
import { expectRestError } from '../helpers/rest';

const { rest, databaseUrl } = await startTestApp();

const PROXIES = '/api/storage/edge/proxies';
const NOT_FOUND = 'Not found: could not find requested entity';

const NULL_CACHE = {
  age: null,
  is_as_origin: null,
  is_public: null,
  stale_while_revalidate: null,
  key: null,
  compression: null,
};
const NULL_AUTH = { is_required: null, scope: null };
const NULL_SIGNATURE = { secret: null, cache: NULL_CACHE, auth: NULL_AUTH };
const NULL_OAUTH = { issuer: null, client_id: null, authorize_url: null, return_url_key: null };

/** The least a proxy needs: a key and one route. */
const minimalProxy = (key: string) => ({ key, routes: { path: '/', origin: { uri: 'https://shop.example.com' } } });

/** How `minimalProxy(key)` comes back: every optional field spelled out as null, flags at their defaults. */
const minimalProxyOutput = (key: string) => ({
  key,
  routes: {
    path: '/',
    origin: { uri: 'https://shop.example.com', is_bucket: null },
    settings: { cache: NULL_CACHE, auth: NULL_AUTH, image: null },
  },
  auth: { signature: NULL_SIGNATURE },
  oauth: NULL_OAUTH,
  is_active: true,
  is_suspended: false,
});

/**
 * A proxy with every field set. Booleans alternate between true and false so that a field read
 * from the wrong place, or a false turned into null, shows.
 */
const fullRoute = {
  path: '/images',
  origin: { uri: 'https://cdn.example.com/images', is_bucket: true },
  settings: {
    cache: {
      age: 3600,
      is_as_origin: false,
      is_public: true,
      stale_while_revalidate: 30,
      key: {
        ignore_query: null,
        only_query: ['page', 'sort*'],
        ignore_tracking_query: true,
        sort_query: false,
        headers: ['x-country'],
        cookies: ['currency'],
        origin_query: 'keyed',
      },
      compression: { is_enabled: true, min_bytes: 512 },
    },
    auth: { is_required: true, scope: 'proxies:read' },
    image: { is_enabled: true, sizes: ['200x200', '640x0'], max_input_pixels: 1_000_000 },
  },
};
const wildcardRoute = {
  path: '*',
  origin: { uri: 'http://origin.example.org:8080/base?x=1', is_bucket: false },
  settings: {
    cache: { age: 0, is_as_origin: true, is_public: false, stale_while_revalidate: null, key: null, compression: null },
    auth: { is_required: false, scope: 'search' },
    image: null,
  },
};
const fullProxy = (key: string) => ({
  key,
  routes: fullRoute,
  auth: {
    signature: {
      secret: 'sig-0123456789abcdef-SECRET',
      cache: { age: 60, is_as_origin: true, is_public: false, stale_while_revalidate: 0, key: null, compression: null },
      auth: { is_required: false, scope: 'catalog:read' },
    },
  },
  oauth: {
    issuer: 'https://auth.example.com/',
    client_id: 'shop-frontend',
    authorize_url: 'https://auth.example.com/authorize',
    return_url_key: 'return_to',
  },
  is_active: false,
  is_suspended: true,
});

/** Stored rows, for asserting that a request changed (or did not change) the database. */
const storedProxies = () =>
  sql(
    databaseUrl,
    'SELECT key, tenant_id, routes, auth, oauth, is_active, is_suspended, created_at, updated_at FROM proxies ORDER BY key',
  );
const storedProxy = async (key: string) => (await sql(databaseUrl, 'SELECT * FROM proxies WHERE key = $1', [key]))[0];

/** An ISO 8601 UTC timestamp within a minute of now. */
function expectRecentTimestamp(value: unknown) {
  expect(value).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
  expect(Math.abs(Date.parse(value as string) - Date.now())).toBeLessThan(60_000);
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

let tenantA: Tenant;
let tenantB: Tenant;

beforeAll(async () => {
  tenantA = await createTenant(rest, 'Tenant A');
  tenantB = await createTenant(rest, 'Tenant B');
});

const create = (token: string, proxy: object) => rest.post(PROXIES, { token, body: { data: proxy } });
const get = (token: string, key: string) => rest.get(`${PROXIES}/${key}`, { token });
const replace = (token: string, key: string, proxy: object) =>
  rest.put(`${PROXIES}/${key}`, { token, body: { data: proxy } });
const remove = (token: string, key: string) => rest.delete(`${PROXIES}/${key}`, { token });

describe('create, get, replace and delete', () => {
  it("creates a proxy: 201 with the proxy, stored under the caller's tenant", async () => {
    const response = await create(tenantA.key, minimalProxy('crud-create'));

    expect(response.status).toBe(201);
    expect(response.body).toEqual({
      data: {
        ...minimalProxyOutput('crud-create'),
        tenant_id: tenantA.id,
        created_at: expect.any(String),
        updated_at: expect.any(String),
      },
      page: null,
      meta: null,
    });
    expectRecentTimestamp(response.body.data.created_at);
    expect(response.body.data.updated_at).toBe(response.body.data.created_at);

    const row = await storedProxy('crud-create');
    expect(row).toMatchObject({ key: 'crud-create', tenant_id: tenantA.id, is_active: true, is_suspended: false });
    expect((row!.created_at as Date).toISOString()).toBe(response.body.data.created_at);
  });

  it('gets a proxy: 200 with the same proxy and page null', async () => {
    const created = await create(tenantA.key, minimalProxy('crud-get'));
    const response = await get(tenantA.key, 'crud-get');

    expect(response.status).toBe(200);
    expect(response.body).toEqual({ data: created.body.data, page: null, meta: null });
  });

  it('PUT replaces the whole proxy: 204 with an empty body, left-out fields back to defaults, created_at kept, updated_at moves', async () => {
    const created = await create(tenantA.key, fullProxy('crud-replace'));
    expect(created.status).toBe(201);
    await sleep(10);

    const response = await replace(tenantA.key, 'crud-replace', {
      routes: { path: '/new', origin: { uri: 'https://new.example.com' } },
    });

    expect(response.status).toBe(204);
    expect(response.rawBody).toBe('');
    const after = await get(tenantA.key, 'crud-replace');
    expect(after.body.data).toEqual({
      key: 'crud-replace',
      routes: {
        path: '/new',
        origin: { uri: 'https://new.example.com', is_bucket: null },
        settings: { cache: NULL_CACHE, auth: NULL_AUTH, image: null },
      },
      auth: { signature: NULL_SIGNATURE },
      oauth: NULL_OAUTH,
      is_active: true,
      is_suspended: false,
      tenant_id: tenantA.id,
      created_at: created.body.data.created_at,
      updated_at: expect.any(String),
    });
    expect(Date.parse(after.body.data.updated_at)).toBeGreaterThan(Date.parse(created.body.data.updated_at));

    const row = await storedProxy('crud-replace');
    expect(row).toMatchObject({
      is_active: true,
      is_suspended: false,
      oauth: NULL_OAUTH,
      auth: { signature: NULL_SIGNATURE },
    });
    expect((row!.updated_at as Date).toISOString()).toBe(after.body.data.updated_at);
  });

  it('PUT accepts a body key equal to the path key', async () => {
    await create(tenantA.key, minimalProxy('crud-same-key'));
    const response = await replace(tenantA.key, 'crud-same-key', {
      ...minimalProxy('crud-same-key'),
      is_active: false,
    });

    expect(response.status).toBe(204);
    expect((await get(tenantA.key, 'crud-same-key')).body.data.is_active).toBe(false);
  });

  it('PUT of a key that does not exist is a 404 and creates nothing (PUT is not an upsert)', async () => {
    const before = await storedProxies();
    const response = await replace(tenantA.key, 'crud-never-created', minimalProxy('crud-never-created'));

    expectRestError(response, 404, { message: NOT_FOUND });
    expect(await storedProxies()).toEqual(before);
  });

  it('deletes a proxy: 204 with an empty body, then get is a 404, and a second delete is a 404', async () => {
    await create(tenantA.key, minimalProxy('crud-delete'));

    const deleted = await remove(tenantA.key, 'crud-delete');
    expect(deleted.status).toBe(204);
    expect(deleted.rawBody).toBe('');
    expect(await storedProxy('crud-delete')).toBeUndefined();

    expectRestError(await get(tenantA.key, 'crud-delete'), 404, { message: NOT_FOUND });
    expectRestError(await remove(tenantA.key, 'crud-delete'), 404, { message: NOT_FOUND });
  });

  it('a deleted key can be created again', async () => {
    await create(tenantA.key, minimalProxy('crud-recreate'));
    await remove(tenantA.key, 'crud-recreate');

    const response = await create(tenantA.key, fullProxy('crud-recreate'));
    expect(response.status).toBe(201);
    expect(response.body.data.is_suspended).toBe(true);
  });
});

describe('every field round-trips', () => {
  const expectedFull = (key: string, tenantId: string) => ({
    ...fullProxy(key),
    tenant_id: tenantId,
    created_at: expect.any(String),
    updated_at: expect.any(String),
  });

  it('returns every field as sent, on create, get and list, and stores it so', async () => {
    const created = await create(tenantA.key, fullProxy('fields-full'));
    expect(created.status).toBe(201);
    expect(created.body.data).toEqual(expectedFull('fields-full', tenantA.id));

    const fetched = await get(tenantA.key, 'fields-full');
    expect(fetched.body.data).toEqual(created.body.data);

    const listed = await rest.get(`${PROXIES}?page[size]=100`, { token: tenantA.key });
    expect(listed.body.data.find((proxy: { key: string }) => proxy.key === 'fields-full')).toEqual(created.body.data);

    const row = await storedProxy('fields-full');
    const sent = fullProxy('fields-full');
    expect(row).toMatchObject({
      key: 'fields-full',
      tenant_id: tenantA.id,
      routes: sent.routes,
      auth: sent.auth,
      oauth: sent.oauth,
      is_active: false,
      is_suspended: true,
    });
  });

  it('routes sent as an array come back as an array, in order', async () => {
    const routes = [fullRoute, wildcardRoute, { path: '/plain', origin: { uri: 'https://plain.example.com' } }];
    const created = await create(tenantA.key, { ...fullProxy('fields-array'), routes });

    const expectedRoutes = [
      fullRoute,
      wildcardRoute,
      {
        path: '/plain',
        origin: { uri: 'https://plain.example.com', is_bucket: null },
        settings: { cache: NULL_CACHE, auth: NULL_AUTH, image: null },
      },
    ];
    expect(created.status).toBe(201);
    expect(created.body.data.routes).toEqual(expectedRoutes);
    expect((await get(tenantA.key, 'fields-array')).body.data.routes).toEqual(expectedRoutes);
    expect((await storedProxy('fields-array'))!.routes).toEqual(expectedRoutes);
  });

  it('a one-element routes array stays an array; one route object stays an object', async () => {
    await create(tenantA.key, { ...minimalProxy('fields-one-array'), routes: [fullRoute] });
    await create(tenantA.key, { ...minimalProxy('fields-one-object'), routes: fullRoute });

    expect((await get(tenantA.key, 'fields-one-array')).body.data.routes).toEqual([fullRoute]);
    expect((await get(tenantA.key, 'fields-one-object')).body.data.routes).toEqual(fullRoute);
  });

  it('omitted optional fields come back as null (flags at their defaults)', async () => {
    const created = await create(tenantA.key, minimalProxy('fields-omitted'));
    expect(created.body.data).toEqual({
      ...minimalProxyOutput('fields-omitted'),
      tenant_id: tenantA.id,
      created_at: expect.any(String),
      updated_at: expect.any(String),
    });
  });

  it('explicit nulls are the same as omitted fields, at every level', async () => {
    const created = await create(tenantA.key, {
      key: 'fields-nulls',
      routes: {
        path: '/',
        origin: { uri: 'https://shop.example.com', is_bucket: null },
        settings: {
          cache: { age: null, is_as_origin: null, is_public: null, stale_while_revalidate: null },
          auth: null,
        },
      },
      auth: { signature: { secret: null, cache: null, auth: { is_required: null, scope: null } } },
      oauth: { issuer: null, client_id: null, authorize_url: null, return_url_key: null },
      is_active: null,
      is_suspended: null,
    });
    expect(created.status).toBe(201);
    expect(created.body.data).toMatchObject(minimalProxyOutput('fields-nulls'));

    const nullBlocks = await create(tenantA.key, { ...minimalProxy('fields-null-blocks'), auth: null, oauth: null });
    expect(nullBlocks.body.data).toMatchObject(minimalProxyOutput('fields-null-blocks'));
    const nullSignature = await create(tenantA.key, {
      ...minimalProxy('fields-null-signature'),
      auth: { signature: null },
      routes: { ...minimalProxy('x').routes, settings: null },
    });
    expect(nullSignature.body.data).toMatchObject(minimalProxyOutput('fields-null-signature'));
  });

  it('PUT round-trips every field too', async () => {
    const created = await create(tenantA.key, minimalProxy('fields-put'));
    const response = await replace(tenantA.key, 'fields-put', fullProxy('fields-put'));

    expect(response.status).toBe(204);
    const fetched = await get(tenantA.key, 'fields-put');
    expect(fetched.body.data).toEqual({
      ...expectedFull('fields-put', tenantA.id),
      created_at: created.body.data.created_at,
    });
  });

  it('the boundaries of each field are accepted: 1- and 63-character keys, 16- and 256-character secrets, cache age 0 and one year', async () => {
    const longKey = `k${'0'.repeat(61)}z`;
    expect(longKey).toHaveLength(63);
    for (const key of ['a', '7', longKey]) expect((await create(tenantA.key, minimalProxy(key))).status).toBe(201);

    for (const [key, secret, age] of [
      ['bounds-low', 'x'.repeat(16), 0],
      ['bounds-high', 'y'.repeat(256), 31_536_000],
    ] as const) {
      const proxy = {
        ...minimalProxy(key),
        routes: { ...minimalProxy(key).routes, settings: { cache: { age } } },
        auth: { signature: { secret, cache: { age } } },
      };
      const created = await create(tenantA.key, proxy);
      expect(created.status).toBe(201);
      expect(created.body.data.auth.signature.secret).toBe(secret);
      expect(created.body.data.routes.settings.cache.age).toBe(age);
      expect(created.body.data.auth.signature.cache.age).toBe(age);
    }
  });
});

describe('read-only fields come from the server', () => {
  it("a tenant_id of another tenant in the body is ignored: the proxy lands in the caller's tenant", async () => {
    const response = await create(tenantA.key, { ...minimalProxy('tenant-from-caller'), tenant_id: tenantB.id });

    expect(response.status).toBe(201);
    expect(response.body.data.tenant_id).toBe(tenantA.id);
    expect((await storedProxy('tenant-from-caller'))!.tenant_id).toBe(tenantA.id);
    expectRestError(await get(tenantB.key, 'tenant-from-caller'), 404, { message: NOT_FOUND });
    expect((await get(tenantA.key, 'tenant-from-caller')).status).toBe(200);
  });

  it("PUT with another tenant's tenant_id does not move the proxy", async () => {
    await create(tenantA.key, minimalProxy('tenant-put-move'));
    const response = await replace(tenantA.key, 'tenant-put-move', {
      ...minimalProxy('tenant-put-move'),
      tenant_id: tenantB.id,
    });

    expect(response.status).toBe(204);
    expect((await storedProxy('tenant-put-move'))!.tenant_id).toBe(tenantA.id);
    expectRestError(await get(tenantB.key, 'tenant-put-move'), 404, { message: NOT_FOUND });
  });

  it('created_at and updated_at in the body are ignored', async () => {
    const response = await create(tenantA.key, {
      ...minimalProxy('timestamps-ignored'),
      created_at: '2001-01-01T00:00:00.000Z',
      updated_at: '2001-01-01T00:00:00.000Z',
    });

    expect(response.status).toBe(201);
    expectRecentTimestamp(response.body.data.created_at);
    expectRecentTimestamp(response.body.data.updated_at);
    const replaced = await replace(tenantA.key, 'timestamps-ignored', {
      ...minimalProxy('timestamps-ignored'),
      created_at: '2001-01-01T00:00:00.000Z',
      updated_at: null,
    });
    expect(replaced.status).toBe(204);
    const fetched = await get(tenantA.key, 'timestamps-ignored');
    expect(fetched.body.data.created_at).toBe(response.body.data.created_at);
    expectRecentTimestamp(fetched.body.data.updated_at);
  });
});

describe('SQL and script text in string fields', () => {
  it('is stored and returned verbatim, and the table survives', async () => {
    const hostile = {
      key: 'hostile-text',
      routes: [
        {
          path: "/';DROP/**/TABLE/**/proxies;--",
          origin: { uri: "https://example.com/?q=';DROP%20TABLE%20proxies;--" },
        },
        { path: '/<script>alert(1)</script>', origin: { uri: 'https://example.com/' } },
        { path: '/"quoted"\\backslash$1%00', origin: { uri: 'https://example.com/' } },
      ],
      auth: { signature: { secret: '<script>alert(1)</script>xxxxxxxx' } },
      oauth: { client_id: 'x\'); DELETE FROM proxies; -- "${{7*7}}" ünïcødé 🛒', return_url_key: 'return.url_KEY-1' },
    };
    const keysBefore = (await sql(databaseUrl, 'SELECT key FROM proxies ORDER BY key')).map((row) => row.key);
    const created = await create(tenantA.key, hostile);
    expect(created.status).toBe(201);

    const fetched = await get(tenantA.key, 'hostile-text');
    expect(fetched.body.data.routes.map((route: { path: string }) => route.path)).toEqual(
      hostile.routes.map((route) => route.path),
    );
    expect(fetched.body.data.routes[0].origin.uri).toBe(hostile.routes[0]!.origin.uri);
    expect(fetched.body.data.auth.signature.secret).toBe(hostile.auth.signature.secret);
    expect(fetched.body.data.oauth.client_id).toBe(hostile.oauth.client_id);
    expect(fetched.body.data.oauth.return_url_key).toBe(hostile.oauth.return_url_key);

    const [table] = await sql(databaseUrl, "SELECT to_regclass('public.proxies') IS NOT NULL AS exists");
    expect(table!.exists).toBe(true);
    const row = await storedProxy('hostile-text');
    expect(row!.oauth).toMatchObject({ client_id: hostile.oauth.client_id });
    expect((row!.auth as { signature: { secret: string } }).signature.secret).toBe(hostile.auth.signature.secret);
    // The other proxies are all still there: nothing in the text ran as SQL.
    const keysAfter = (await sql(databaseUrl, 'SELECT key FROM proxies ORDER BY key')).map((row) => row.key);
    expect([...keysAfter].sort()).toEqual([...keysBefore, 'hostile-text'].sort());
    expect(keysBefore.length).toBeGreaterThan(0);
  });
});

describe('duplicate keys', () => {
  it('creating a key the same tenant already has is a 409 and changes nothing', async () => {
    await create(tenantA.key, fullProxy('dup-same-tenant'));
    const before = await storedProxies();

    const response = await create(tenantA.key, minimalProxy('dup-same-tenant'));

    expectRestError(response, 409, { message: 'Conflict:' });
    expect(response.body.error.message).toContain('dup-same-tenant');
    expect(await storedProxies()).toEqual(before);
  });

  it('keys are globally unique: creating a key that another tenant has is a 409 and changes nothing', async () => {
    await create(tenantA.key, fullProxy('dup-other-tenant'));
    const before = await storedProxies();

    const response = await create(tenantB.key, minimalProxy('dup-other-tenant'));

    expectRestError(response, 409, { message: 'Conflict:' });
    expect(await storedProxies()).toEqual(before);
    expect((await storedProxy('dup-other-tenant'))!.tenant_id).toBe(tenantA.id);
    expect((await get(tenantA.key, 'dup-other-tenant')).body.data).toMatchObject(fullProxy('dup-other-tenant'));
  });

  it('of concurrent creates of one key exactly one wins; the others are 409', async () => {
    const responses = await Promise.all(
      [tenantA, tenantB, tenantA, tenantB, tenantA].map((tenant, index) =>
        create(tenant.key, {
          ...minimalProxy('dup-race'),
          routes: { path: `/${index}`, origin: { uri: 'https://race.example.com' } },
        }),
      ),
    );

    expect(responses.map((response) => response.status).sort()).toEqual([201, 409, 409, 409, 409]);
    const winner = responses.find((response) => response.status === 201)!;
    const rows = await sql(databaseUrl, 'SELECT tenant_id, routes FROM proxies WHERE key = $1', ['dup-race']);
    expect(rows).toEqual([{ tenant_id: winner.body.data.tenant_id, routes: winner.body.data.routes }]);
  });
});

describe('tenant isolation', () => {
  it('another tenant cannot get, replace, delete or list a proxy, and the proxy stays as it was', async () => {
    const created = await create(tenantA.key, fullProxy('isolated'));
    expect(created.status).toBe(201);
    const before = await storedProxies();

    expectRestError(await get(tenantB.key, 'isolated'), 404, { message: NOT_FOUND });
    expectRestError(await replace(tenantB.key, 'isolated', minimalProxy('isolated')), 404, { message: NOT_FOUND });
    expectRestError(await replace(tenantB.key, 'isolated', { routes: minimalProxy('isolated').routes }), 404, {
      message: NOT_FOUND,
    });
    expectRestError(await remove(tenantB.key, 'isolated'), 404, { message: NOT_FOUND });

    const listed = await rest.get(`${PROXIES}?page[size]=100`, { token: tenantB.key });
    expect(listed.status).toBe(200);
    expect(listed.body.data.map((proxy: { key: string }) => proxy.key)).not.toContain('isolated');
    expect(listed.body.data.every((proxy: { tenant_id: string }) => proxy.tenant_id === tenantB.id)).toBe(true);

    expect(await storedProxies()).toEqual(before);
    expect((await get(tenantA.key, 'isolated')).body.data).toEqual(created.body.data);
  });

  it("the 404 for another tenant's proxy is the same as for a key nobody has", async () => {
    await create(tenantA.key, minimalProxy('isolated-shape'));
    const foreign = await get(tenantB.key, 'isolated-shape');
    const missing = await get(tenantB.key, 'isolated-nobody');

    expect(foreign.status).toBe(missing.status);
    expect(foreign.body.error.message.replace('isolated-shape', 'K')).toBe(
      missing.body.error.message.replace('isolated-nobody', 'K'),
    );
  });
});
