/**
 * The operator's side of OAuth: registering clients and creating the users who sign in on the
 * login page, through the admin API behind the master key. Bad input changes nothing.
 */
import { createHash } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { createTenant, startTestApp, TEST_MASTER_KEY, type Tenant } from '../helpers/app';
import { sql } from '../helpers/db';
import { expectRestError } from '../helpers/rest';

const { rest, databaseUrl, services } = await startTestApp();

let tenant: Tenant;
let other: Tenant;

beforeAll(async () => {
  tenant = await createTenant(rest, 'Acme');
  other = await createTenant(rest, 'Other');
});

const count = async (table: string) =>
  Number((await sql<{ n: string }>(databaseUrl, `SELECT count(*) AS n FROM ${table}`))[0]!.n);

/** `token` null sends no Authorization header. */
const postClient = (tenantId: string, body: unknown, token: string | null = TEST_MASTER_KEY) =>
  rest.post(`/api/admin/tenants/${tenantId}/oauth-clients`, { token: token ?? undefined, body });
const postUser = (tenantId: string, body: unknown, token: string | null = TEST_MASTER_KEY) =>
  rest.post(`/api/admin/tenants/${tenantId}/users`, { token: token ?? undefined, body });

const validClient = {
  name: 'Back office',
  redirect_uris: ['https://app.example.com/callback', 'http://127.0.0.1:8080/cb', 'http://localhost/cb'],
  scopes: ['proxies:read', 'openid'],
  is_confidential: true,
};

describe('POST /api/admin/tenants/{tenant_id}/oauth-clients', () => {
  it('registers a confidential client, shows its secret once and stores only its SHA-256', async () => {
    const response = await postClient(tenant.id, { data: validClient });
    expect(response.status).toBe(201);
    const data = response.body.data;
    expect(data).toEqual({
      client_id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      client_secret: expect.stringMatching(/^cps_[A-Za-z0-9_-]{43}$/),
      name: 'Back office',
      redirect_uris: validClient.redirect_uris,
      scopes: ['proxies:read', 'openid'],
      // Without a list of its own, a client may ask for every protected resource.
      resources: [services.baseUrl, `${services.baseUrl}/mcp`],
      is_confidential: true,
      tenant_id: tenant.id,
      created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
    });
    const [row] = await sql<{ secret_hash: Buffer; tenant_id: string; redirect_uris: string[] }>(
      databaseUrl,
      'SELECT secret_hash, tenant_id, redirect_uris FROM oauth_clients WHERE id = $1',
      [data.client_id],
    );
    expect(row!.secret_hash.equals(createHash('sha256').update(data.client_secret).digest())).toBe(true);
    expect(row!.tenant_id).toBe(tenant.id);
    expect(row!.redirect_uris).toEqual(validClient.redirect_uris);
  });

  it('registers a public client without a secret', async () => {
    const response = await postClient(tenant.id, { data: { ...validClient, is_confidential: false } });
    expect(response.status).toBe(201);
    expect(response.body.data.client_secret).toBeNull();
    const [row] = await sql(databaseUrl, 'SELECT secret_hash, is_confidential FROM oauth_clients WHERE id = $1', [
      response.body.data.client_id,
    ]);
    expect(row).toEqual({ secret_hash: null, is_confidential: false });
  });

  it('refuses bad input and stores nothing', async () => {
    const before = await count('oauth_clients');
    const bad: unknown[] = [
      { data: { ...validClient, redirect_uris: ['http://app.example.com/callback'] } },
      { data: { ...validClient, redirect_uris: ['https://app.example.com/callback#frag'] } },
      { data: { ...validClient, redirect_uris: ['/relative'] } },
      { data: { ...validClient, redirect_uris: ['javascript:alert(1)'] } },
      { data: { ...validClient, redirect_uris: [] } },
      { data: { ...validClient, scopes: ['admin'] } },
      { data: { ...validClient, scopes: [] } },
      { data: { ...validClient, is_confidential: 'yes' } },
      { data: { ...validClient, name: '' } },
      { data: { ...validClient, client_secret: 'chosen' } },
      { data: { name: 'x', redirect_uris: validClient.redirect_uris, scopes: ['search'] } },
      { name: 'x' },
    ];
    for (const body of bad) expectRestError(await postClient(tenant.id, body), 400);
    expect(await count('oauth_clients')).toBe(before);
  });

  it('answers 404 for an unknown tenant and 401 without the master key', async () => {
    const before = await count('oauth_clients');
    expectRestError(await postClient('0190a5f4-0000-7000-8000-000000000000', { data: validClient }), 404);
    expectRestError(await postClient(tenant.id, { data: validClient }, tenant.key), 401);
    expectRestError(await postClient(tenant.id, { data: validClient }, null), 401);
    expect(await count('oauth_clients')).toBe(before);
  });
});

describe('POST /api/admin/tenants/{tenant_id}/users', () => {
  it('creates a user with a lowercased e-mail and a salted scrypt hash', async () => {
    const response = await postUser(tenant.id, {
      data: { email: 'Grace@Example.com', password: 'a long enough password' },
    });
    expect(response.status).toBe(201);
    expect(response.body.data).toEqual({
      id: expect.any(String),
      email: 'grace@example.com',
      tenant_id: tenant.id,
      created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
    });
    const [row] = await sql<{ password_hash: string }>(databaseUrl, 'SELECT password_hash FROM users WHERE id = $1', [
      response.body.data.id,
    ]);
    expect(row!.password_hash).toMatch(/^scrypt\$15\$8\$1\$/);
    expect(row!.password_hash).not.toContain('a long enough password');
  });

  it('refuses a second user with the same e-mail in a tenant (409), but not in another tenant', async () => {
    const before = await count('users');
    expectRestError(
      await postUser(tenant.id, { data: { email: 'GRACE@example.com', password: 'another password!' } }),
      409,
    );
    expect(await count('users')).toBe(before);
    expect(
      (await postUser(other.id, { data: { email: 'grace@example.com', password: 'another password!' } })).status,
    ).toBe(201);
  });

  it('refuses bad input, unknown tenants and missing master key, and stores nothing', async () => {
    const before = await count('users');
    expectRestError(
      await postUser(tenant.id, { data: { email: 'not-an-email', password: 'a long enough password' } }),
      400,
    );
    expectRestError(await postUser(tenant.id, { data: { email: 'short@example.com', password: 'short' } }), 400);
    expectRestError(await postUser(tenant.id, { data: { email: 'x@example.com' } }), 400);
    expectRestError(
      await postUser(tenant.id, { data: { email: 'x@example.com', password: 'a long enough password', admin: true } }),
      400,
    );
    expectRestError(
      await postUser('0190a5f4-0000-7000-8000-000000000000', {
        data: { email: 'x@example.com', password: 'a long enough password' },
      }),
      404,
    );
    expectRestError(
      await postUser(tenant.id, { data: { email: 'x@example.com', password: 'a long enough password' } }, tenant.key),
      401,
    );
    expect(await count('users')).toBe(before);
  });
});
