/**
 * Managing the users of the login page behind the master key: listing (and finding by e-mail),
 * reading, setting a password and deleting, with what that does to the tokens and codes they hold.
 * Password hashes never appear; refused requests change nothing.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { createTenant, startTestApp, TEST_MASTER_KEY, type Tenant } from '../helpers/app';
import { databaseDigest, sql } from '../helpers/db';
import {
  authorizationCode,
  createOAuthClient,
  createUser,
  PASSWORD,
  REDIRECT_URI,
  tokenRequest,
  userTokens,
  type TestClient,
} from '../helpers/oauth';
import { expectRestError, type RestResponse } from '../helpers/rest';

const { rest, app, databaseUrl } = await startTestApp();

const PROXIES = '/api/storage/edge/proxies';
const UNKNOWN_ID = '0190a5f4-0000-7000-8000-000000000000';
const NEW_PASSWORD = 'a brand new passphrase';

const usersUrl = (tenantId: string) => `/api/admin/tenants/${tenantId}/users`;
const userUrl = (tenantId: string, userId: string) => `${usersUrl(tenantId)}/${userId}`;
const admin = {
  get: (url: string) => rest.get(url, { token: TEST_MASTER_KEY }),
  put: (url: string, body: unknown) => rest.put(url, { token: TEST_MASTER_KEY, body }),
  delete: (url: string) => rest.delete(url, { token: TEST_MASTER_KEY }),
};
const setPassword = (tenantId: string, userId: string, body: unknown) =>
  admin.put(`${userUrl(tenantId, userId)}/password`, body);
const idsOf = (response: RestResponse) => (response.body.data as { id: string }[]).map((user) => user.id);

async function expectRefusedWithoutChange(status: number, requests: (() => Promise<RestResponse>)[], field?: string) {
  const before = await databaseDigest(databaseUrl);
  for (const request of requests) expectRestError(await request(), status, field);
  expect(await databaseDigest(databaseUrl)).toEqual(before);
}

/** Whether the login page takes the e-mail and password (the authorization code flow gets through). */
const signsIn = (email: string, password: string) =>
  authorizationCode(app, rest, client, email, 'proxies:read', password).then(
    () => true,
    () => false,
  );

let tenant: Tenant;
let other: Tenant;
let client: TestClient;

beforeAll(async () => {
  tenant = await createTenant(rest, 'Acme');
  other = await createTenant(rest, 'Other');
  client = await createOAuthClient(rest, tenant.id, { scopes: ['proxies:read', 'openid'] });
});

describe('GET /api/admin/tenants/{tenant_id}/users[/{user_id}]', () => {
  it("lists the tenant's users in order of creation, finds one by e-mail, and never shows a password hash", async () => {
    const listed = await createTenant(rest, 'Lister');
    const grace = await createUser(rest, listed.id, 'Grace@Example.com');
    const alan = await createUser(rest, listed.id, 'alan@example.com');
    await createUser(rest, other.id, 'grace@example.com');

    const all = await admin.get(usersUrl(listed.id));
    expect(all.status).toBe(200);
    expect(all.body.data).toEqual([
      { id: grace.id, email: 'grace@example.com', tenant_id: listed.id, created_at: expect.any(String) },
      { id: alan.id, email: 'alan@example.com', tenant_id: listed.id, created_at: expect.any(String) },
    ]);
    expect(all.rawBody).not.toContain('scrypt');
    expect(all.rawBody).not.toContain('password');

    const found = await admin.get(`${usersUrl(listed.id)}?filter[email][eq]=GRACE%40example.com`);
    expect(idsOf(found)).toEqual([grace.id]);
    expect(idsOf(await admin.get(`${usersUrl(listed.id)}?filter[email][eq]=nobody%40example.com`))).toEqual([]);

    const page = await admin.get(`${usersUrl(listed.id)}?page[size]=1`);
    expect(idsOf(page)).toEqual([grace.id]);
    const next = new URL(page.body.page.next);
    expect(idsOf(await admin.get(`${next.pathname}${next.search}`))).toEqual([alan.id]);

    const one = await admin.get(userUrl(listed.id, alan.id));
    expect(one.body).toEqual({ data: all.body.data[1], page: null, meta: null });
    expect(one.rawBody).not.toContain('scrypt');
  });

  it("answers 404 for an unknown tenant or user and another tenant's user, 400 for bad ids and filters", async () => {
    const user = await createUser(rest, tenant.id, 'lookup@example.com');
    await expectRefusedWithoutChange(404, [
      () => admin.get(usersUrl(UNKNOWN_ID)),
      () => admin.get(userUrl(tenant.id, UNKNOWN_ID)),
      () => admin.get(userUrl(other.id, user.id)),
      () => setPassword(other.id, user.id, { data: { password: NEW_PASSWORD } }),
      () => admin.delete(userUrl(other.id, user.id)),
    ]);
    await expectRefusedWithoutChange(400, [() => admin.get(userUrl(tenant.id, 'lookup'))], 'path.user_id');
    await expectRefusedWithoutChange(
      400,
      [() => admin.get(`${usersUrl(tenant.id)}?filter[email][eq]=${'x'.repeat(321)}`)],
      'query.filter[email][eq]',
    );
    await expectRefusedWithoutChange(400, [() => admin.get(`${usersUrl(tenant.id)}?filter[name][eq]=x`)]);
  });

  it('answers 401 without the master key, and changes nothing', async () => {
    const user = await createUser(rest, tenant.id, 'guarded@example.com');
    await expectRefusedWithoutChange(401, [
      () => rest.get(usersUrl(tenant.id), { token: tenant.key }),
      () => rest.get(userUrl(tenant.id, user.id), { token: tenant.key }),
      () =>
        rest.put(`${userUrl(tenant.id, user.id)}/password`, {
          token: tenant.key,
          body: { data: { password: NEW_PASSWORD } },
        }),
      () => rest.delete(userUrl(tenant.id, user.id), { token: tenant.key }),
      () => rest.delete(userUrl(tenant.id, user.id)),
    ]);
  });
});

describe('PUT /api/admin/tenants/{tenant_id}/users/{user_id}/password', () => {
  it('sets the password and signs the user out of every client; other users keep their tokens', async () => {
    const user = await createUser(rest, tenant.id, 'forgetful@example.com');
    const bystander = await createUser(rest, tenant.id, 'bystander@example.com');
    const tokens = await userTokens(app, rest, client, user.email, 'openid proxies:read');
    const code = await authorizationCode(app, rest, client, user.email, 'proxies:read');
    const theirs = await userTokens(app, rest, client, bystander.email, 'proxies:read');
    const [before] = await sql<{ password_hash: string }>(
      databaseUrl,
      'SELECT password_hash FROM users WHERE id = $1',
      [user.id],
    );

    const changed = await setPassword(tenant.id, user.id, { data: { password: NEW_PASSWORD } });
    expect(changed.status, changed.rawBody).toBe(204);
    expect(changed.rawBody).toBe('');

    const [after] = await sql<{ password_hash: string }>(databaseUrl, 'SELECT password_hash FROM users WHERE id = $1', [
      user.id,
    ]);
    expect(after!.password_hash).toMatch(/^scrypt\$15\$8\$1\$/);
    expect(after!.password_hash).not.toBe(before!.password_hash);
    expect(after!.password_hash).not.toContain(NEW_PASSWORD);
    expect(await signsIn(user.email, PASSWORD)).toBe(false);
    expect(await signsIn(user.email, NEW_PASSWORD)).toBe(true);

    expectRestError(await rest.get(PROXIES, { token: tokens.access_token }), 401);
    const refreshed = await tokenRequest(rest, {
      grant_type: 'refresh_token',
      refresh_token: tokens.refresh_token,
      client_id: client.client_id,
      client_secret: client.client_secret!,
    });
    expectRestError(refreshed, 400);
    expect(refreshed.body.error.message).toContain('invalid_grant');
    const exchanged = await tokenRequest(rest, {
      grant_type: 'authorization_code',
      code,
      redirect_uri: REDIRECT_URI,
      client_id: client.client_id,
      client_secret: client.client_secret!,
    });
    expectRestError(exchanged, 400);
    expect((await rest.get(PROXIES, { token: theirs.access_token })).status).toBe(200);
  });

  it.each([
    ['a password of 9 characters', { data: { password: '123456789' } }, 'body.data.password'],
    ['a password of 1025 characters', { data: { password: 'p'.repeat(1025) } }, 'body.data.password'],
    ['a password of 900 000 characters', { data: { password: 'p'.repeat(900_000) } }, 'body.data.password'],
    ['a password that is a number', { data: { password: 12345678901 } }, 'body.data.password'],
    ['no password', { data: {} }, 'body.data.password'],
    ['an e-mail change on the side', { data: { password: NEW_PASSWORD, email: 'x@example.com' } }, 'body.data.email'],
    ['a password at the top level', { password: NEW_PASSWORD }, 'body.data'],
    [
      '900 unknown members',
      { data: Object.fromEntries(Array.from({ length: 900 }, (_, i) => [`k${i}`, i])) },
      'body.data.k0',
    ],
    [
      '10 000 unknown members, past the members of an object at the door',
      { data: Object.fromEntries(Array.from({ length: 10_000 }, (_, i) => [`k${i}`, i])) },
      'body',
    ],
  ])('refuses %s with a 400 naming the field, and changes nothing', async (_name, body, field) => {
    const user = await createUser(rest, tenant.id, `refused-${Math.random().toString(36).slice(2)}@example.com`);
    await expectRefusedWithoutChange(400, [() => setPassword(tenant.id, user.id, body)], field);
  });
});

describe('DELETE /api/admin/tenants/{tenant_id}/users/{user_id}', () => {
  it('deletes the user with their grants, codes and consents; their tokens answer 401 at once', async () => {
    const user = await createUser(rest, tenant.id, 'leaving@example.com');
    const tokens = await userTokens(app, rest, client, user.email, 'openid proxies:read');
    await authorizationCode(app, rest, client, user.email, 'proxies:read');

    const deleted = await admin.delete(userUrl(tenant.id, user.id));
    expect(deleted.status).toBe(204);
    expectRestError(await rest.get(PROXIES, { token: tokens.access_token }), 401);
    for (const table of ['oauth_grants', 'oauth_authorization_codes', 'oauth_consents']) {
      expect(await sql(databaseUrl, `SELECT 1 FROM ${table} WHERE user_id = $1`, [user.id]), table).toEqual([]);
    }
    expect(await signsIn(user.email, PASSWORD)).toBe(false);
    expectRestError(await admin.get(userUrl(tenant.id, user.id)), 404);
    expectRestError(await admin.delete(userUrl(tenant.id, user.id)), 404);
    // The e-mail address is free again.
    expect((await createUser(rest, tenant.id, user.email)).email).toBe(user.email);
  });
});
