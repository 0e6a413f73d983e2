/**
 * The operator's view of tenants and API keys behind the master key: listing with cursor
 * pagination, reading, renaming and deleting; API keys never shown with their secret. Every
 * refused request is checked to have changed nothing in the database.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { createTenant, startTestApp, TEST_MASTER_KEY, type Tenant } from '../helpers/app';
import { databaseDigest, sql } from '../helpers/db';
import { expectRestError, type RestResponse } from '../helpers/rest';

const { rest, databaseUrl, services } = await startTestApp();

const TENANTS = '/api/admin/tenants';
const PROXIES = '/api/storage/edge/proxies';
const UNKNOWN_ID = '0190b0a4-0000-7000-8000-000000000000';
const ISO_TIME = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

const admin = {
  get: (url: string) => rest.get(url, { token: TEST_MASTER_KEY }),
  patch: (url: string, body: unknown) => rest.patch(url, { token: TEST_MASTER_KEY, body }),
  post: (url: string, body: unknown) => rest.post(url, { token: TEST_MASTER_KEY, body }),
  delete: (url: string) => rest.delete(url, { token: TEST_MASTER_KEY }),
};

const keysUrl = (tenantId: string) => `${TENANTS}/${tenantId}/api-keys`;
const idsOf = (response: RestResponse) => (response.body.data as { id: string }[]).map((item) => item.id);
/** A page link as the request target of the in-process client. */
const target = (link: string) => {
  expect(link.startsWith(services.baseUrl), link).toBe(true);
  const url = new URL(link);
  return `${url.pathname}${url.search}`;
};

async function issueKey(tenantId: string, name: string, scopes = ['proxies:read']) {
  const response = await admin.post(keysUrl(tenantId), { data: { name, scopes } });
  expect(response.status, response.rawBody).toBe(201);
  return response.body.data as { id: string; key: string; name: string; scopes: string[] };
}

/** Runs requests that must all be refused with `status`, and checks that the database did not change. */
async function expectRefusedWithoutChange(status: number, requests: (() => Promise<RestResponse>)[], field?: string) {
  const before = await databaseDigest(databaseUrl);
  for (const request of requests) expectRestError(await request(), status, field);
  expect(await databaseDigest(databaseUrl)).toEqual(before);
}

let acme: Tenant;
let other: Tenant;

beforeAll(async () => {
  acme = await createTenant(rest, 'Acme');
  other = await createTenant(rest, 'Other');
});

describe('GET /api/admin/tenants', () => {
  it('lists every tenant in order of creation, 25 a page by default, and pages both ways', async () => {
    for (let index = 0; index < 26; index++) await admin.post(TENANTS, { data: { name: `Bulk ${index}` } });
    const stored = (await sql<{ id: string }>(databaseUrl, 'SELECT id::text FROM tenants ORDER BY id')).map(
      (row) => row.id,
    );
    expect(stored.length).toBeGreaterThan(25);

    const first = await admin.get(TENANTS);
    expect(first.status).toBe(200);
    expect(idsOf(first)).toEqual(stored.slice(0, 25));
    expect(first.body.page).toMatchObject({ first: `${services.baseUrl}${TENANTS}`, previous: null, before: null });
    expect(first.body.data[0]).toEqual({
      id: acme.id,
      name: 'Acme',
      rate_limit_per_minute: null,
      created_at: expect.stringMatching(ISO_TIME),
    });

    const second = await admin.get(target(first.body.page.next));
    expect(idsOf(second)).toEqual(stored.slice(25));
    expect(second.body.page.next).toBeNull();
    const back = await admin.get(target(second.body.page.previous));
    expect(idsOf(back)).toEqual(stored.slice(0, 25));

    const walked: string[] = [];
    for (let link: string | null = `${TENANTS}?page[size]=7`; link;) {
      const page: RestResponse = await admin.get(link);
      walked.push(...idsOf(page));
      link = page.body.page.next ? target(page.body.page.next) : null;
    }
    expect(walked).toEqual(stored);
  });

  it('refuses bad pages, cursors of other lists and unknown parameters, and changes nothing', async () => {
    const keysPage = await admin.get(`${keysUrl(acme.id)}?page[size]=1`);
    await issueKey(acme.id, 'second key');
    const foreignCursor = (await admin.get(`${keysUrl(acme.id)}?page[size]=1`)).body.page.after as string;
    expect(keysPage.status).toBe(200);
    await expectRefusedWithoutChange(400, [
      () => admin.get(`${TENANTS}?page[size]=0`),
      () => admin.get(`${TENANTS}?page[size]=101`),
      () => admin.get(`${TENANTS}?page[size]=ten`),
      () => admin.get(`${TENANTS}?page[after]=not-a-cursor`),
      () => admin.get(`${TENANTS}?page[after]=${encodeURIComponent(foreignCursor)}`),
      () => admin.get(`${TENANTS}?page[after]=${encodeURIComponent(foreignCursor)}&page[before]=x`),
      () => admin.get(`${TENANTS}?filter[name][eq]=Acme`),
    ]);
    expectRestError(await admin.get(`${TENANTS}?page[size]=101`), 400, 'query.page[size]');
    expectRestError(await admin.get(`${TENANTS}?page[after]=forged`), 400, 'page[after]');
  });

  it('answers 401 to anything but the master key', async () => {
    await expectRefusedWithoutChange(401, [
      () => rest.get(TENANTS, { token: acme.key }),
      () => rest.get(TENANTS),
      () => rest.get(`${TENANTS}/${acme.id}`, { token: acme.key }),
      () => rest.delete(`${TENANTS}/${acme.id}`, { token: acme.key }),
      () => rest.get(keysUrl(acme.id), { token: acme.key }),
      () => rest.patch(`${keysUrl(acme.id)}/${UNKNOWN_ID}`, { token: acme.key, body: { data: { name: 'x' } } }),
    ]);
  });
});

describe('GET, PATCH /api/admin/tenants/{tenant_id}', () => {
  it('reads a tenant, and renames it (trimmed) without touching its rate limit', async () => {
    const tenant = await createTenant(rest, 'Before');
    await admin.patch(`${TENANTS}/${tenant.id}`, { data: { rate_limit_per_minute: 600 } });
    const renamed = await admin.patch(`${TENANTS}/${tenant.id}`, { data: { name: '  After  ' } });
    expect(renamed.status).toBe(200);
    expect(renamed.body.data).toMatchObject({ id: tenant.id, name: 'After', rate_limit_per_minute: 600 });
    const read = await admin.get(`${TENANTS}/${tenant.id}`);
    expect(read.body).toEqual({ data: renamed.body.data, page: null, meta: null });
    expect(read.body.data.created_at).toMatch(ISO_TIME);
  });

  it('answers 404 for an unknown tenant and 400 for an id that is not a UUID, and changes nothing', async () => {
    await expectRefusedWithoutChange(404, [
      () => admin.get(`${TENANTS}/${UNKNOWN_ID}`),
      () => admin.patch(`${TENANTS}/${UNKNOWN_ID}`, { data: { name: 'Ghost' } }),
      () => admin.delete(`${TENANTS}/${UNKNOWN_ID}`),
      () => admin.get(keysUrl(UNKNOWN_ID)),
    ]);
    await expectRefusedWithoutChange(400, [() => admin.get(`${TENANTS}/acme`)], 'path.tenant_id');
  });

  it.each([
    ['an empty name', { data: { name: '' } }, 'body.data.name'],
    ['a blank name', { data: { name: '    ' } }, 'body.data.name'],
    ['a name with control characters', { data: { name: 'a\u0007b' } }, 'body.data.name'],
    ['a name of 100 000 characters', { data: { name: 'x'.repeat(100_000) } }, 'body.data.name'],
    ['a name that is a list', { data: { name: ['Acme'] } }, 'body.data.name'],
    ['an unknown member', { data: { name: 'Acme', plan: 'gold' } }, 'body.data.plan'],
    [
      '900 unknown members',
      { data: Object.fromEntries([...Array(900).keys()].map((i) => [`k${i}`, i])) },
      'body.data.k0',
    ],
    [
      '10 000 unknown members, past the members of an object at the door',
      { data: Object.fromEntries([...Array(10_000).keys()].map((i) => [`k${i}`, i])) },
      'body',
    ],
    ['a rate limit of 0', { data: { rate_limit_per_minute: 0 } }, 'body.data.rate_limit_per_minute'],
  ])('refuses %s with a 400 naming the field, and changes nothing', async (_name, body, field) => {
    await expectRefusedWithoutChange(400, [() => admin.patch(`${TENANTS}/${acme.id}`, body)], field);
  });
});

describe('DELETE /api/admin/tenants/{tenant_id}', () => {
  it("deletes the tenant: its keys answer 401 at once, it is gone from the list, others' keys still work", async () => {
    const doomed = await createTenant(rest, 'Doomed');
    expect((await rest.get(PROXIES, { token: doomed.key })).status).toBe(200);
    const deleted = await admin.delete(`${TENANTS}/${doomed.id}`);
    expect(deleted.status).toBe(204);
    expect(deleted.rawBody).toBe('');
    expectRestError(await rest.get(PROXIES, { token: doomed.key }), 401);
    expectRestError(await admin.get(`${TENANTS}/${doomed.id}`), 404);
    expectRestError(await admin.delete(`${TENANTS}/${doomed.id}`), 404);
    expect(idsOf(await admin.get(`${TENANTS}?page[size]=100`))).not.toContain(doomed.id);
    expect((await rest.get(PROXIES, { token: other.key })).status).toBe(200);
  });
});

describe('API keys: GET, PATCH /api/admin/tenants/{tenant_id}/api-keys[/{key_id}]', () => {
  it('lists the keys of one tenant in order of creation, revoked ones with revoked_at, never a secret', async () => {
    const tenant = await createTenant(rest, 'Keys');
    const second = await issueKey(tenant.id, 'storefront', ['search', 'proxies:read']);
    const third = await issueKey(tenant.id, 'retired');
    expect((await admin.delete(`${keysUrl(tenant.id)}/${third.id}`)).status).toBe(204);
    await issueKey(other.id, 'not theirs');

    const listed = await admin.get(keysUrl(tenant.id));
    expect(listed.status).toBe(200);
    const stored = await sql<{ id: string; secret_hash: Buffer }>(
      databaseUrl,
      'SELECT id::text, secret_hash FROM api_keys WHERE tenant_id = $1 ORDER BY id',
      [tenant.id],
    );
    expect(idsOf(listed)).toEqual(stored.map((row) => row.id));
    expect(listed.body.data[1]).toEqual({
      id: second.id,
      name: 'storefront',
      scopes: ['search', 'proxies:read'],
      created_at: expect.stringMatching(ISO_TIME),
      revoked_at: null,
    });
    expect(listed.body.data[2]).toMatchObject({ id: third.id, revoked_at: expect.stringMatching(ISO_TIME) });
    for (const key of listed.body.data) {
      expect(Object.keys(key).sort()).toEqual(['created_at', 'id', 'name', 'revoked_at', 'scopes']);
    }
    for (const secret of [tenant.key, second.key, third.key, ...stored.map((row) => row.secret_hash.toString('hex'))]) {
      expect(listed.rawBody).not.toContain(secret);
      expect(listed.rawBody).not.toContain(secret.slice(-43));
    }
    const one = await admin.get(`${keysUrl(tenant.id)}/${second.id}`);
    expect(one.body).toEqual({ data: listed.body.data[1], page: null, meta: null });
    expect(one.rawBody).not.toContain(second.key.slice(-43));

    const paged = await admin.get(`${keysUrl(tenant.id)}?page[size]=2`);
    expect(idsOf(paged)).toEqual(stored.slice(0, 2).map((row) => row.id));
    const remaining = await admin.get(target(paged.body.page.next));
    expect(idsOf(remaining)).toEqual([third.id]);
  });

  it("refuses another tenant's cursor and key ids, and changes nothing", async () => {
    await issueKey(other.id, 'other one');
    const otherCursor = (await admin.get(`${keysUrl(other.id)}?page[size]=1`)).body.page.after as string;
    const acmeKey = await issueKey(acme.id, 'acme only');
    await expectRefusedWithoutChange(
      400,
      [() => admin.get(`${keysUrl(acme.id)}?page[after]=${encodeURIComponent(otherCursor)}`)],
      'page[after]',
    );
    await expectRefusedWithoutChange(404, [
      () => admin.get(`${keysUrl(other.id)}/${acmeKey.id}`),
      () => admin.patch(`${keysUrl(other.id)}/${acmeKey.id}`, { data: { name: 'stolen' } }),
      () => admin.get(`${keysUrl(acme.id)}/${UNKNOWN_ID}`),
    ]);
    await expectRefusedWithoutChange(400, [() => admin.get(`${keysUrl(acme.id)}/not-a-key`)], 'path.key_id');
  });

  it('renames a key (a revoked one too); the key keeps working with its scopes', async () => {
    const key = await issueKey(acme.id, 'old name');
    const renamed = await admin.patch(`${keysUrl(acme.id)}/${key.id}`, { data: { name: ' new name ' } });
    expect(renamed.status).toBe(200);
    expect(renamed.body.data).toMatchObject({
      id: key.id,
      name: 'new name',
      scopes: ['proxies:read'],
      revoked_at: null,
    });
    expect((await rest.get(PROXIES, { token: key.key })).status).toBe(200);
    await admin.delete(`${keysUrl(acme.id)}/${key.id}`);
    const again = await admin.patch(`${keysUrl(acme.id)}/${key.id}`, { data: { name: 'retired' } });
    expect(again.body.data).toMatchObject({ name: 'retired', revoked_at: expect.stringMatching(ISO_TIME) });
    expectRestError(await rest.get(PROXIES, { token: key.key }), 401);
  });

  it.each([
    ['no name', { data: {} }, 'body.data.name'],
    ['a name over 200 characters', { data: { name: 'k'.repeat(201) } }, 'body.data.name'],
    ['a megabyte-sized name', { data: { name: 'k'.repeat(1_000_000) } }, 'body.data.name'],
    ['new scopes', { data: { name: 'k', scopes: ['*'] } }, 'body.data.scopes'],
    ['a new secret', { data: { name: 'k', key: 'cpk_mine' } }, 'body.data.key'],
    [
      '900 unknown members',
      { data: Object.fromEntries([...Array(900).keys()].map((i) => [`m${i}`, 'x'])) },
      'body.data.m0',
    ],
    [
      '5 000 unknown members, past the members of an object at the door',
      { data: Object.fromEntries([...Array(5_000).keys()].map((i) => [`m${i}`, 'x'])) },
      'body',
    ],
  ])('refuses renaming with %s, and changes nothing', async (_name, body, field) => {
    const key = await issueKey(acme.id, 'stays');
    await expectRefusedWithoutChange(400, [() => admin.patch(`${keysUrl(acme.id)}/${key.id}`, body)], field);
  });
});
