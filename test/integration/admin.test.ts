import { createHash, randomBytes } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { SCOPES } from '../../src/kernel/scopes';
import { createKey, createTenant, startTestApp, TEST_MASTER_KEY, type Tenant, type TestApp } from '../helpers/app';
import { sql } from '../helpers/db';
import { expectRestError } from '../helpers/rest';

const API_KEY_PATTERN = /^cpk_[0-9a-f]{32}_[A-Za-z0-9_-]{43}$/;
const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const PROXIES = '/api/storage/edge/proxies';

let t: TestApp;
let tenant: Tenant;

beforeAll(async () => {
  t = await startTestApp();
  tenant = await createTenant(t.rest, 'Admin test tenant');
});

const countRows = async (table: string) =>
  Number((await sql<{ count: string }>(t.databaseUrl, `SELECT count(*) AS count FROM ${table}`))[0]!.count);

/** `token` null sends no Authorization header. */
const postTenant = (body: unknown, token: string | null = TEST_MASTER_KEY) =>
  t.rest.post('/api/admin/tenants', { token: token ?? undefined, body });

const postKey = (tenantId: string, body: unknown, token: string | null = TEST_MASTER_KEY) =>
  t.rest.post(`/api/admin/tenants/${tenantId}/api-keys`, { token: token ?? undefined, body });

/** A well-formed key (right format) that nobody issued. */
/** The secret part of a key: everything after `cpk_<32 hex>_` (the secret itself may contain `_`). */
const secretOf = (key: string) => key.slice('cpk_'.length + 32 + 1);

const unknownKey = () => `cpk_${randomBytes(16).toString('hex')}_${randomBytes(32).toString('base64url')}`;

const proxyBody = (key: string) => ({
  data: { key, routes: { path: '/images', origin: { uri: 'https://origin.example.com/images' } } },
});

describe('POST /api/admin/tenants', () => {
  it('creates a tenant with the master key', async () => {
    const response = await postTenant({ data: { name: 'Acme Retail' } });
    expect(response.status).toBe(201);
    expect(response.body).toEqual({
      data: {
        id: expect.stringMatching(UUID_PATTERN),
        name: 'Acme Retail',
        rate_limit_per_minute: null,
        created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      },
      page: null,
      meta: null,
    });
    const rows = await sql(t.databaseUrl, 'SELECT name FROM tenants WHERE id = $1', [response.body.data.id]);
    expect(rows).toEqual([{ name: 'Acme Retail' }]);
  });

  it('trims the name', async () => {
    const response = await postTenant({ data: { name: '  Trimmed  ' } });
    expect(response.status).toBe(201);
    expect(response.body.data.name).toBe('Trimmed');
  });

  it('answers 401 without the master key, and creates nothing', async () => {
    const before = await countRows('tenants');
    const cases: [string, string | null][] = [
      ['no key', null],
      ['wrong master key', `${TEST_MASTER_KEY}x`],
      ['a tenant API key', tenant.key],
    ];
    for (const [name, token] of cases) {
      const response = await postTenant({ data: { name: `Intruder ${name}` } }, token);
      expectRestError(response, 401, { message: 'Unauthorized: ' });
    }
    const basic = await t.rest.post('/api/admin/tenants', {
      headers: { authorization: `Basic ${Buffer.from(`admin:${TEST_MASTER_KEY}`).toString('base64')}` },
      body: { data: { name: 'Intruder basic' } },
    });
    expectRestError(basic, 401, { message: 'Unauthorized: ' });
    expect(await countRows('tenants')).toBe(before);
  });

  it('answers 401 before looking at the body', async () => {
    expectRestError(await postTenant({ data: {} }, null), 401, { message: 'Unauthorized: ' });
  });

  it.each([
    ['a missing name', { data: {} }, 'body.data.name'],
    ['an empty name', { data: { name: '' } }, 'body.data.name'],
    ['a blank name', { data: { name: '   ' } }, 'body.data.name'],
    ['a name of the wrong type', { data: { name: 42 } }, 'body.data.name'],
    ['a name over 200 characters', { data: { name: 'x'.repeat(201) } }, 'body.data.name'],
    ['an unknown field in data', { data: { name: 'Acme', plan: 'gold' } }, 'body.data.plan'],
    ['an unknown top-level field', { data: { name: 'Acme' }, meta: {} }, 'body.meta'],
    ['a missing data object', { name: 'Acme' }, 'body.data'],
  ])('answers 400 for %s, and creates nothing', async (_name, body, field) => {
    const before = await countRows('tenants');
    const response = await postTenant(body);
    expectRestError(response, 400, { message: 'Bad request: ' });
    expect(response.body.error.details).toEqual(expect.arrayContaining([expect.objectContaining({ field })]));
    expect(await countRows('tenants')).toBe(before);
  });

  it('answers 400 for malformed JSON and an empty body', async () => {
    const headers = { 'content-type': 'application/json' };
    const malformed = await t.rest.post('/api/admin/tenants', {
      token: TEST_MASTER_KEY,
      rawBody: '{"data": {"name": "Acme"',
      headers,
    });
    expectRestError(malformed, 400, { message: 'Bad request: ' });
    expect(malformed.body.error.details).toEqual([{ field: 'body', message: 'is not valid JSON' }]);
    const empty = await t.rest.post('/api/admin/tenants', { token: TEST_MASTER_KEY, rawBody: '', headers });
    expectRestError(empty, 400, { message: 'Bad request: ' });
  });

  it('answers 415 for a body that is not JSON', async () => {
    const response = await t.rest.post('/api/admin/tenants', {
      token: TEST_MASTER_KEY,
      rawBody: 'name=Acme',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    expectRestError(response, 415, { message: 'Unsupported media type: ' });
  });
});

describe('POST /api/admin/tenants/{tenant_id}/api-keys', () => {
  it('issues a key with at least 128 bits of secret, shown once', async () => {
    const response = await postKey(tenant.id, {
      data: { name: 'storefront', scopes: ['proxies:read', 'catalog:read'] },
    });
    expect(response.status).toBe(201);
    expect(response.body).toEqual({
      data: {
        id: expect.stringMatching(UUID_PATTERN),
        name: 'storefront',
        key: expect.stringMatching(API_KEY_PATTERN),
        scopes: ['proxies:read', 'catalog:read'],
      },
      page: null,
      meta: null,
    });
    const { id, key } = response.body.data;
    // The key names its own id, so a lookup needs no scan.
    expect(key.slice(4, 36)).toBe(id.replaceAll('-', ''));
    // 43 base64url characters are 258 bits, of which 256 carry the secret.
    expect(Buffer.from(secretOf(key), 'base64url')).toHaveLength(32);
    const rows = await sql(t.databaseUrl, 'SELECT tenant_id, name, scopes, revoked_at FROM api_keys WHERE id = $1', [
      id,
    ]);
    expect(rows).toEqual([
      { tenant_id: tenant.id, name: 'storefront', scopes: ['proxies:read', 'catalog:read'], revoked_at: null },
    ]);
  });

  it('never issues the same key twice', async () => {
    const keys = await Promise.all(Array.from({ length: 5 }, () => createKey(t.rest, tenant.id, ['proxies:read'])));
    expect(new Set(keys).size).toBe(5);
    const secrets = keys.map(secretOf);
    expect(new Set(secrets).size).toBe(5);
  });

  it('accepts every scope and *, and lists a repeated scope once', async () => {
    const all = await postKey(tenant.id, { data: { name: 'all', scopes: [...SCOPES, '*'] } });
    expect(all.status).toBe(201);
    expect(all.body.data.scopes).toEqual([...SCOPES, '*']);
    const repeated = await postKey(tenant.id, { data: { name: 'repeated', scopes: ['search', 'search'] } });
    expect(repeated.status).toBe(201);
    expect(repeated.body.data.scopes).toEqual(['search']);
  });

  it('answers 404 for an unknown tenant, and stores nothing', async () => {
    const before = await countRows('api_keys');
    const response = await postKey('0190b0a4-0000-7000-8000-000000000000', { data: { name: 'ghost', scopes: ['*'] } });
    expectRestError(response, 404, { message: 'Not found: ' });
    expect(await countRows('api_keys')).toBe(before);
  });

  it('answers 400 for a tenant id that is not a UUID', async () => {
    const response = await postKey('not-a-uuid', { data: { name: 'bad', scopes: ['*'] } });
    expectRestError(response, 400, { message: 'Bad request: ' });
    expect(response.body.error.details).toEqual(
      expect.arrayContaining([expect.objectContaining({ field: 'path.tenant_id' })]),
    );
  });

  it.each([
    ['an unknown scope', { data: { name: 'k', scopes: ['proxies:admin'] } }, 'body.data.scopes[0]'],
    ['empty scopes', { data: { name: 'k', scopes: [] } }, 'body.data.scopes'],
    ['scopes that are not a list', { data: { name: 'k', scopes: 'proxies:read' } }, 'body.data.scopes'],
    ['missing scopes', { data: { name: 'k' } }, 'body.data.scopes'],
    ['a missing name', { data: { scopes: ['*'] } }, 'body.data.name'],
    ['an empty name', { data: { name: '', scopes: ['*'] } }, 'body.data.name'],
    ['an unknown field', { data: { name: 'k', scopes: ['*'], expires_at: 1 } }, 'body.data.expires_at'],
  ])('answers 400 for %s, and stores nothing', async (_name, body, field) => {
    const before = await countRows('api_keys');
    const response = await postKey(tenant.id, body);
    expectRestError(response, 400, { message: 'Bad request: ' });
    expect(response.body.error.details).toEqual(expect.arrayContaining([expect.objectContaining({ field })]));
    expect(await countRows('api_keys')).toBe(before);
  });

  it('answers 401 without the master key, even with a key of the same tenant', async () => {
    const before = await countRows('api_keys');
    for (const token of [null, tenant.key, 'wrong']) {
      expectRestError(await postKey(tenant.id, { data: { name: 'escalate', scopes: ['*'] } }, token), 401, {
        message: 'Unauthorized: ',
      });
    }
    expect(await countRows('api_keys')).toBe(before);
  });
});

describe('API key storage', () => {
  it('stores only a hash of the key: neither the key nor its secret is in any column', async () => {
    const name = `scan-${randomBytes(6).toString('hex')}`;
    const issued = await postKey(tenant.id, { data: { name, scopes: ['proxies:read'] } });
    expect(issued.status).toBe(201);
    const key: string = issued.body.data.key;
    const secret = secretOf(key);
    const secretBytes = Buffer.from(secret, 'base64url');

    const columns = await sql<{ table_name: string; column_name: string; data_type: string; udt_name: string }>(
      t.databaseUrl,
      `SELECT table_name, column_name, data_type, udt_name FROM information_schema.columns
        WHERE table_schema = 'public'
          AND (data_type IN ('text', 'character varying', 'character', 'bytea', 'json', 'jsonb')
               OR udt_name IN ('_text', '_varchar', '_bpchar', '_bytea'))`,
    );
    const textNeedles = [key, secret, secretBytes.toString('hex'), secretBytes.toString('base64')];
    const byteNeedles = [Buffer.from(key), Buffer.from(secret), secretBytes];
    const hits: string[] = [];
    let controlFound = false;
    for (const column of columns) {
      const target = `"${column.table_name}"."${column.column_name}"`;
      const from = `FROM "${column.table_name}"`;
      if (column.data_type === 'bytea') {
        for (const needle of byteNeedles) {
          const rows = await sql(
            t.databaseUrl,
            `SELECT 1 ${from} WHERE position($1::bytea IN "${column.column_name}") > 0`,
            [needle],
          );
          if (rows.length > 0) hits.push(`${target} contains ${needle.length} bytes of the key`);
        }
      } else if (column.udt_name === '_bytea') {
        for (const needle of byteNeedles) {
          const rows = await sql(
            t.databaseUrl,
            `SELECT 1 ${from} WHERE EXISTS (SELECT 1 FROM unnest("${column.column_name}") AS item WHERE position($1::bytea IN item) > 0)`,
            [needle],
          );
          if (rows.length > 0) hits.push(`${target} contains ${needle.length} bytes of the key`);
        }
      }
      // Every column, bytea included, also as text (bytea reads as its hex form).
      for (const needle of textNeedles) {
        const rows = await sql(t.databaseUrl, `SELECT 1 ${from} WHERE strpos("${column.column_name}"::text, $1) > 0`, [
          needle,
        ]);
        if (rows.length > 0) hits.push(`${target} contains ${needle.slice(0, 12)}...`);
      }
      const control = await sql(t.databaseUrl, `SELECT 1 ${from} WHERE strpos("${column.column_name}"::text, $1) > 0`, [
        name,
      ]);
      if (control.length > 0) controlFound = true;
    }
    // The scan does look at the api_keys rows: it finds the key's name.
    expect(columns.some((column) => column.table_name === 'api_keys' && column.column_name === 'secret_hash')).toBe(
      true,
    );
    expect(controlFound).toBe(true);
    expect(hits).toEqual([]);

    const [row] = await sql<{ secret_hash: Buffer }>(t.databaseUrl, 'SELECT secret_hash FROM api_keys WHERE id = $1', [
      issued.body.data.id,
    ]);
    expect(row!.secret_hash).toEqual(createHash('sha256').update(secret).digest());
  });
});

describe('DELETE /api/admin/tenants/{tenant_id}/api-keys/{key_id}', () => {
  it('revokes a key: requests with it answer 401 at once, even after it was cached', async () => {
    const issued = await postKey(tenant.id, { data: { name: 'to revoke', scopes: ['*'] } });
    const { id, key } = issued.body.data;
    // Used once, so that the authenticator has it cached.
    expect((await t.rest.get(PROXIES, { token: key })).status).toBe(200);

    const revoked = await t.rest.delete(`/api/admin/tenants/${tenant.id}/api-keys/${id}`, { token: TEST_MASTER_KEY });
    expect(revoked.status).toBe(204);
    expect(revoked.rawBody).toBe('');

    expectRestError(await t.rest.get(PROXIES, { token: key }), 401, { message: 'Unauthorized: ' });
    expectRestError(await t.rest.post(PROXIES, { token: key, body: proxyBody('after-revocation') }), 401, {
      message: 'Unauthorized: ',
    });
    const [row] = await sql<{ revoked_at: Date | null }>(
      t.databaseUrl,
      'SELECT revoked_at FROM api_keys WHERE id = $1',
      [id],
    );
    expect(row!.revoked_at).toBeInstanceOf(Date);
    // Other keys of the tenant keep working.
    expect((await t.rest.get(PROXIES, { token: tenant.key })).status).toBe(200);
  });

  it('answers 404 when revoking again', async () => {
    const issued = await postKey(tenant.id, { data: { name: 'twice', scopes: ['*'] } });
    const url = `/api/admin/tenants/${tenant.id}/api-keys/${issued.body.data.id}`;
    expect((await t.rest.delete(url, { token: TEST_MASTER_KEY })).status).toBe(204);
    expectRestError(await t.rest.delete(url, { token: TEST_MASTER_KEY }), 404, { message: 'Not found: ' });
  });

  it("answers 404 for another tenant's id, and the key keeps working", async () => {
    const other = await createTenant(t.rest, 'Other tenant');
    const issued = await postKey(tenant.id, { data: { name: 'not yours', scopes: ['*'] } });
    const response = await t.rest.delete(`/api/admin/tenants/${other.id}/api-keys/${issued.body.data.id}`, {
      token: TEST_MASTER_KEY,
    });
    expectRestError(response, 404, { message: 'Not found: ' });
    expect((await t.rest.get(PROXIES, { token: issued.body.data.key })).status).toBe(200);
  });

  it('answers 404 for an unknown key and 400 for ids that are not UUIDs', async () => {
    expectRestError(
      await t.rest.delete(`/api/admin/tenants/${tenant.id}/api-keys/0190b0a4-0000-7000-8000-000000000000`, {
        token: TEST_MASTER_KEY,
      }),
      404,
      { message: 'Not found: ' },
    );
    expectRestError(
      await t.rest.delete(`/api/admin/tenants/${tenant.id}/api-keys/nope`, { token: TEST_MASTER_KEY }),
      400,
      { message: 'Bad request: ' },
    );
    expectRestError(
      await t.rest.delete(`/api/admin/tenants/nope/api-keys/0190b0a4-0000-7000-8000-000000000000`, {
        token: TEST_MASTER_KEY,
      }),
      400,
      { message: 'Bad request: ' },
    );
  });

  it('answers 401 without the master key, and the key keeps working', async () => {
    const issued = await postKey(tenant.id, { data: { name: 'survivor', scopes: ['*'] } });
    const { id, key } = issued.body.data;
    for (const token of [undefined, key]) {
      expectRestError(await t.rest.delete(`/api/admin/tenants/${tenant.id}/api-keys/${id}`, { token }), 401, {
        message: 'Unauthorized: ',
      });
    }
    expect((await t.rest.get(PROXIES, { token: key })).status).toBe(200);
  });
});

describe('scopes', () => {
  it('lets a * key read and write', async () => {
    const key = await createKey(t.rest, tenant.id, ['*']);
    const created = await t.rest.post(PROXIES, { token: key, body: proxyBody('star-scope') });
    expect(created.status).toBe(201);
    const listed = await t.rest.get(PROXIES, { token: key });
    expect(listed.status).toBe(200);
    expect(listed.body.data.map((proxy: { key: string }) => proxy.key)).toContain('star-scope');
  });

  it('answers 403 to a key with proxies:read that tries to write, and writes nothing', async () => {
    const key = await createKey(t.rest, tenant.id, ['proxies:read']);
    expect((await t.rest.get(PROXIES, { token: key })).status).toBe(200);
    const response = await t.rest.post(PROXIES, { token: key, body: proxyBody('read-only-write') });
    expectRestError(response, 403, { message: 'Forbidden: ' });
    expect(await sql(t.databaseUrl, "SELECT key FROM proxies WHERE key = 'read-only-write'")).toEqual([]);
  });

  it('answers 403 to a key without any proxies scope that tries to read', async () => {
    const key = await createKey(t.rest, tenant.id, ['catalog:read', 'proxies:write']);
    expectRestError(await t.rest.get(PROXIES, { token: key }), 403, { message: 'Forbidden: ' });
  });
});

describe('bearer authentication', () => {
  it.each([
    ['a missing header', undefined],
    ['"Bearer" with nothing', 'Bearer'],
    ['"Bearer " with spaces only', 'Bearer    '],
    ['another scheme', 'Basic abc'],
    ['a token that is not a key', 'Bearer not-an-api-key'],
    ['a truncated key', () => `Bearer ${tenant.key.slice(0, -1)}`],
    ['the key without the scheme', () => tenant.key],
    ['a well-formed unknown key', () => `Bearer ${unknownKey()}`],
    [
      'the right id with a wrong secret',
      () => `Bearer ${tenant.key.slice(0, 37)}${randomBytes(32).toString('base64url')}`,
    ],
    ['the master key', `Bearer ${TEST_MASTER_KEY}`],
  ])('answers 401 to %s', async (_name, header) => {
    const authorization = typeof header === 'function' ? header() : header;
    const response = await t.rest.get(PROXIES, { headers: authorization === undefined ? {} : { authorization } });
    expectRestError(response, 401, { message: 'Unauthorized: ' });
    expect(response.body.error.details).toBeNull();
  });

  it('accepts the scheme in any case', async () => {
    expect((await t.rest.get(PROXIES, { headers: { authorization: `bearer ${tenant.key}` } })).status).toBe(200);
  });

  it('keeps answering 401 to the same wrong secret (no cached verdict)', async () => {
    const wrong = `Bearer ${tenant.key.slice(0, 37)}${randomBytes(32).toString('base64url')}`;
    for (let attempt = 0; attempt < 3; attempt++) {
      expectRestError(await t.rest.get(PROXIES, { headers: { authorization: wrong } }), 401, {
        message: 'Unauthorized: ',
      });
    }
    expect((await t.rest.get(PROXIES, { token: tenant.key })).status).toBe(200);
  });
});

describe('GET /healthz', () => {
  it('answers without authentication', async () => {
    // /healthz is outside the /api contract, so it is called directly rather than through the REST client.
    const response = await t.app.inject({ method: 'GET', url: '/healthz' });
    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual({ status: 'ok', database: 'up' });
    expect(response.headers['x-request-id']).toBeTruthy();
  });
});
