/**
 * Managing OAuth clients behind the master key: listing, reading, changing, rotating the secret and
 * deleting, with what each does to the tokens, codes and pending authorizations already issued.
 * Secrets never appear after their one showing; refused requests change nothing.
 */
import { createHash } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { createTenant, startTestApp, TEST_MASTER_KEY, type Tenant } from '../helpers/app';
import { databaseDigest, sql } from '../helpers/db';
import {
  authorizationCode,
  clientToken,
  createOAuthClient,
  createUser,
  REDIRECT_URI,
  startAuthorization,
  tokenRequest,
  userTokens,
} from '../helpers/oauth';
import { expectRestError, type RestResponse } from '../helpers/rest';

const { rest, app, databaseUrl, services } = await startTestApp();

const PROXIES = '/api/storage/edge/proxies';
const UNKNOWN_ID = '0190a5f4-0000-7000-8000-000000000000';
const ISO_TIME = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;
const OTHER_REDIRECT = 'https://other.example.com/callback';

const clientsUrl = (tenantId: string) => `/api/admin/tenants/${tenantId}/oauth-clients`;
const clientUrl = (tenantId: string, clientId: string) => `${clientsUrl(tenantId)}/${clientId}`;
const admin = {
  get: (url: string) => rest.get(url, { token: TEST_MASTER_KEY }),
  patch: (url: string, body: unknown) => rest.patch(url, { token: TEST_MASTER_KEY, body }),
  post: (url: string) => rest.post(url, { token: TEST_MASTER_KEY }),
  delete: (url: string) => rest.delete(url, { token: TEST_MASTER_KEY }),
};
const callApi = async (token: string) => (await rest.get(PROXIES, { token })).status;

async function expectRefusedWithoutChange(status: number, requests: (() => Promise<RestResponse>)[], field?: string) {
  const before = await databaseDigest(databaseUrl);
  for (const request of requests) expectRestError(await request(), status, field);
  expect(await databaseDigest(databaseUrl)).toEqual(before);
}

let tenant: Tenant;
let other: Tenant;
let user: { id: string; email: string };

beforeAll(async () => {
  tenant = await createTenant(rest, 'Acme');
  other = await createTenant(rest, 'Other');
  user = await createUser(rest, tenant.id, 'ada@example.com');
});

const newClient = (scopes = ['proxies:read', 'proxies:write', 'openid'], extra: Record<string, unknown> = {}) =>
  createOAuthClient(rest, tenant.id, { scopes, redirect_uris: [REDIRECT_URI, OTHER_REDIRECT], ...extra });

describe('GET /api/admin/tenants/{tenant_id}/oauth-clients[/{client_id}]', () => {
  it("lists the tenant's clients in order of registration, pages them, and never shows a secret", async () => {
    const listedTenant = await createTenant(rest, 'Lister');
    const first = await createOAuthClient(rest, listedTenant.id, { name: 'First' });
    const second = await createOAuthClient(rest, listedTenant.id, { name: 'Second', is_confidential: false });
    await createOAuthClient(rest, other.id, { name: 'Not theirs' });

    const listed = await admin.get(clientsUrl(listedTenant.id));
    expect(listed.status).toBe(200);
    expect(listed.body.data).toEqual([
      {
        client_id: first.client_id,
        name: 'First',
        redirect_uris: [REDIRECT_URI],
        scopes: ['proxies:read', 'proxies:write', 'openid'],
        resources: [services.baseUrl, `${services.baseUrl}/mcp`],
        is_confidential: true,
        tenant_id: listedTenant.id,
        created_at: expect.stringMatching(ISO_TIME),
      },
      expect.objectContaining({ client_id: second.client_id, name: 'Second', is_confidential: false }),
    ]);
    const [stored] = await sql<{ secret_hash: Buffer }>(
      databaseUrl,
      'SELECT secret_hash FROM oauth_clients WHERE id = $1',
      [first.client_id],
    );
    expect(listed.rawBody).not.toContain(first.client_secret!);
    expect(listed.rawBody).not.toContain(stored!.secret_hash.toString('hex'));
    expect(listed.rawBody).not.toContain('secret');

    const page = await admin.get(`${clientsUrl(listedTenant.id)}?page[size]=1`);
    expect(page.body.data.map((client: { client_id: string }) => client.client_id)).toEqual([first.client_id]);
    const next = new URL(page.body.page.next);
    expect(next.href.startsWith(services.baseUrl)).toBe(true);
    const nextPage = await admin.get(`${next.pathname}${next.search}`);
    expect(nextPage.body.data.map((client: { client_id: string }) => client.client_id)).toEqual([second.client_id]);

    const one = await admin.get(clientUrl(listedTenant.id, first.client_id));
    expect(one.body).toEqual({ data: listed.body.data[0], page: null, meta: null });
  });

  it("answers 404 for an unknown tenant or client and for another tenant's client, 400 for bad ids and pages", async () => {
    const client = await newClient();
    await expectRefusedWithoutChange(404, [
      () => admin.get(clientsUrl(UNKNOWN_ID)),
      () => admin.get(clientUrl(tenant.id, UNKNOWN_ID)),
      () => admin.get(clientUrl(other.id, client.client_id)),
      () => admin.patch(clientUrl(other.id, client.client_id), { data: { name: 'Stolen' } }),
      () => admin.post(`${clientUrl(other.id, client.client_id)}/secret`),
      () => admin.delete(clientUrl(other.id, client.client_id)),
    ]);
    await expectRefusedWithoutChange(400, [() => admin.get(clientUrl(tenant.id, 'client'))], 'path.client_id');
    await expectRefusedWithoutChange(
      400,
      [() => admin.get(`${clientsUrl(tenant.id)}?page[size]=500`)],
      'query.page[size]',
    );
    expect(await callApi(await clientToken(rest, client, 'proxies:read'))).toBe(200);
  });

  it('answers 401 without the master key, and changes nothing', async () => {
    const client = await newClient();
    await expectRefusedWithoutChange(401, [
      () => rest.get(clientsUrl(tenant.id), { token: tenant.key }),
      () => rest.get(clientUrl(tenant.id, client.client_id), { token: tenant.key }),
      () => rest.patch(clientUrl(tenant.id, client.client_id), { token: tenant.key, body: { data: { name: 'x' } } }),
      () => rest.post(`${clientUrl(tenant.id, client.client_id)}/secret`, { token: tenant.key }),
      () => rest.delete(clientUrl(tenant.id, client.client_id), { token: tenant.key }),
      () => rest.delete(clientUrl(tenant.id, client.client_id)),
    ]);
  });
});

describe('PATCH /api/admin/tenants/{tenant_id}/oauth-clients/{client_id}', () => {
  it('renames a client and leaves everything else, tokens included, as it was', async () => {
    const client = await newClient();
    const token = await clientToken(rest, client, 'proxies:read');
    const renamed = await admin.patch(clientUrl(tenant.id, client.client_id), { data: { name: '  Back office  ' } });
    expect(renamed.status).toBe(200);
    expect(renamed.body.data).toMatchObject({
      name: 'Back office',
      redirect_uris: [REDIRECT_URI, OTHER_REDIRECT],
      scopes: ['proxies:read', 'proxies:write', 'openid'],
      is_confidential: true,
    });
    expect(await callApi(token)).toBe(200);
    expect(await callApi(await clientToken(rest, client))).toBe(200);
  });

  it('narrows the scopes: grants holding a lost scope are revoked, pending requests for one dropped', async () => {
    const client = await newClient();
    const writer = await clientToken(rest, client, 'proxies:read proxies:write');
    const reader = await clientToken(rest, client, 'proxies:read');
    const signedIn = await userTokens(app, rest, client, user.email, 'openid proxies:read');
    const pendingWrite = await startAuthorization(rest, client, { scope: 'proxies:write' });
    const pendingRead = await startAuthorization(rest, client, { scope: 'proxies:read' });
    const sessionId = (response: RestResponse) => new URL(response.body.data.forward_uri).pathname.split('/').at(-1);

    const narrowed = await admin.patch(clientUrl(tenant.id, client.client_id), {
      data: { scopes: ['proxies:read', 'openid'] },
    });
    expect(narrowed.status).toBe(200);
    expect(narrowed.body.data.scopes).toEqual(['proxies:read', 'openid']);

    expectRestError(await rest.get(PROXIES, { token: writer }), 401);
    expect(await callApi(reader)).toBe(200);
    expect(await callApi(signedIn.access_token)).toBe(200);
    const sessions = await sql<{ id: string }>(
      databaseUrl,
      'SELECT id FROM oauth_authorization_sessions WHERE client_id = $1',
      [client.client_id],
    );
    const ids = sessions.map((session) => session.id);
    expect(ids).not.toContain(sessionId(pendingWrite));
    expect(ids).toContain(sessionId(pendingRead));
    const refused = await tokenRequest(rest, {
      grant_type: 'client_credentials',
      client_id: client.client_id,
      client_secret: client.client_secret!,
      scope: 'proxies:write',
    });
    expectRestError(refused, 400);
    expect(refused.body.error.message).toContain('invalid_scope');
  });

  it('replaces the redirect URIs: codes and requests for a removed one are dropped', async () => {
    const client = await newClient();
    const code = await authorizationCode(app, rest, client, user.email, 'proxies:read');
    const changed = await admin.patch(clientUrl(tenant.id, client.client_id), {
      data: { redirect_uris: [OTHER_REDIRECT] },
    });
    expect(changed.body.data.redirect_uris).toEqual([OTHER_REDIRECT]);
    const exchanged = await tokenRequest(rest, {
      grant_type: 'authorization_code',
      code,
      redirect_uri: REDIRECT_URI,
      client_id: client.client_id,
      client_secret: client.client_secret!,
    });
    expectRestError(exchanged, 400);
    expect(exchanged.body.error.message).toContain('invalid_grant');
    expectRestError(await startAuthorization(rest, client, { scope: 'proxies:read' }), 400);
  });

  it.each([
    [
      'an http redirect URI off loopback',
      { redirect_uris: ['http://app.example.com/cb'] },
      'body.data.redirect_uris[0]',
    ],
    [
      'a redirect URI with a fragment',
      { redirect_uris: ['https://app.example.com/cb#x'] },
      'body.data.redirect_uris[0]',
    ],
    ['no redirect URI', { redirect_uris: [] }, 'body.data.redirect_uris'],
    [
      '21 redirect URIs',
      { redirect_uris: Array.from({ length: 21 }, (_, i) => `https://a.example.com/${i}`) },
      'body.data.redirect_uris',
    ],
    [
      '30 000 redirect URIs',
      { redirect_uris: Array.from({ length: 30_000 }, () => 'https://a.example/') },
      'body.data.redirect_uris',
    ],
    [
      'a redirect URI of 5 000 characters',
      { redirect_uris: [`https://a.example.com/${'x'.repeat(5000)}`] },
      'body.data.redirect_uris[0]',
    ],
    ['an unknown scope', { scopes: ['proxies:admin'] }, 'body.data.scopes[0]'],
    ['no scope', { scopes: [] }, 'body.data.scopes'],
    ['an empty name', { name: ' ' }, 'body.data.name'],
    ['a name of 100 000 characters', { name: 'n'.repeat(100_000) }, 'body.data.name'],
    ['a secret of its own', { client_secret: 'chosen-by-me' }, 'body.data.client_secret'],
    ['a change of confidentiality', { is_confidential: false }, 'body.data.is_confidential'],
    ['900 unknown members', Object.fromEntries(Array.from({ length: 900 }, (_, i) => [`k${i}`, i])), 'body.data.k0'],
    [
      '10 000 unknown members, past the members of an object at the door',
      Object.fromEntries(Array.from({ length: 10_000 }, (_, i) => [`k${i}`, i])),
      'body',
    ],
  ])('refuses %s with a 400 naming the field, and changes nothing', async (_name, data, field) => {
    const client = await newClient();
    await expectRefusedWithoutChange(400, [() => admin.patch(clientUrl(tenant.id, client.client_id), { data })], field);
  });
});

describe('POST /api/admin/tenants/{tenant_id}/oauth-clients/{client_id}/secret', () => {
  it('shows a new secret once; the old one and the tokens the client got with it stop working, users stay', async () => {
    const client = await newClient();
    const own = await clientToken(rest, client, 'proxies:read');
    const signedIn = await userTokens(app, rest, client, user.email, 'proxies:read');

    const rotated = await admin.post(`${clientUrl(tenant.id, client.client_id)}/secret`);
    expect(rotated.status).toBe(201);
    const secret: string = rotated.body.data.client_secret;
    expect(secret).toMatch(/^cps_[A-Za-z0-9_-]{43}$/);
    expect(secret).not.toBe(client.client_secret);
    expect(rotated.body.data).toMatchObject({ client_id: client.client_id, is_confidential: true });
    const [row] = await sql<{ secret_hash: Buffer }>(
      databaseUrl,
      'SELECT secret_hash FROM oauth_clients WHERE id = $1',
      [client.client_id],
    );
    expect(row!.secret_hash.equals(createHash('sha256').update(secret).digest())).toBe(true);
    expect((await admin.get(clientUrl(tenant.id, client.client_id))).rawBody).not.toContain(secret);

    const withOld = await tokenRequest(rest, {
      grant_type: 'client_credentials',
      client_id: client.client_id,
      client_secret: client.client_secret!,
    });
    expectRestError(withOld, 401);
    expectRestError(await rest.get(PROXIES, { token: own }), 401);
    expect(await callApi(await clientToken(rest, { ...client, client_secret: secret }))).toBe(200);

    expect(await callApi(signedIn.access_token)).toBe(200);
    const refreshed = await tokenRequest(rest, {
      grant_type: 'refresh_token',
      refresh_token: signedIn.refresh_token,
      client_id: client.client_id,
      client_secret: secret,
    });
    expect(refreshed.status, refreshed.rawBody).toBe(201);
  });

  it('answers 409 for a public client, which has no secret, and changes nothing', async () => {
    const client = await newClient(['proxies:read'], { is_confidential: false });
    await expectRefusedWithoutChange(409, [() => admin.post(`${clientUrl(tenant.id, client.client_id)}/secret`)]);
  });
});

describe('DELETE /api/admin/tenants/{tenant_id}/oauth-clients/{client_id}', () => {
  it('deletes the client with its grants, tokens, codes, requests and consents; its tokens answer 401 at once', async () => {
    const client = await newClient();
    const kept = await newClient();
    const own = await clientToken(rest, client);
    const signedIn = await userTokens(app, rest, client, user.email, 'openid proxies:read');
    await authorizationCode(app, rest, client, user.email, 'proxies:read');
    await startAuthorization(rest, client, { scope: 'proxies:read' });
    const keptToken = await clientToken(rest, kept);

    const deleted = await admin.delete(clientUrl(tenant.id, client.client_id));
    expect(deleted.status).toBe(204);
    expectRestError(await rest.get(PROXIES, { token: own }), 401);
    expectRestError(await rest.get(PROXIES, { token: signedIn.access_token }), 401);
    const refreshed = await tokenRequest(rest, {
      grant_type: 'refresh_token',
      refresh_token: signedIn.refresh_token,
      client_id: client.client_id,
      client_secret: client.client_secret!,
    });
    expectRestError(refreshed, 401);
    for (const table of [
      'oauth_grants',
      'oauth_authorization_codes',
      'oauth_authorization_sessions',
      'oauth_consents',
    ]) {
      const rows = await sql(databaseUrl, `SELECT 1 FROM ${table} WHERE client_id = $1`, [client.client_id]);
      expect(rows, table).toEqual([]);
    }
    const tokens = await sql(
      databaseUrl,
      'SELECT 1 FROM oauth_refresh_tokens t LEFT JOIN oauth_grants g ON g.id = t.grant_id WHERE g.id IS NULL',
    );
    expect(tokens).toEqual([]);
    expectRestError(await admin.get(clientUrl(tenant.id, client.client_id)), 404);
    expectRestError(await admin.delete(clientUrl(tenant.id, client.client_id)), 404);
    expect(await callApi(keptToken)).toBe(200);
    expect((await admin.get(`/api/admin/tenants/${tenant.id}/users/${user.id}`)).status).toBe(200);
  });
});
