/**
 * The token endpoint with client_credentials: both request forms, client authentication, every
 * error of RFC 6749 section 5.2 it answers, throttling; and what an access token can do on the API:
 * scopes, tenancy, expiry, revocation (RFC 7009) and introspection (RFC 7662). The authorization
 * code and refresh grants are in oauth.authorization.test.ts.
 */
import { decodeJwt, decodeProtectedHeader } from 'jose';
import { beforeAll, describe, expect, it } from 'vitest';
import { SigningKeys } from '../../src/modules/oauth/signing-keys';
import { TokenIssuer } from '../../src/modules/oauth/tokens';
import { createTenant, startTestApp, TEST_MASTER_KEY, type Tenant } from '../helpers/app';
import { sql } from '../helpers/db';
import { basicAuth, createOAuthClient, tokenRequest, type TestClient } from '../helpers/oauth';

const { rest, app, services, databaseUrl, db } = await startTestApp();

const PROXIES = '/api/storage/edge/proxies';
const grantCount = async () =>
  Number((await sql<{ n: string }>(databaseUrl, 'SELECT count(*) AS n FROM oauth_grants'))[0]!.n);

let tenant: Tenant;
let otherTenant: Tenant;
let client: TestClient;
let readOnly: TestClient;
let publicClient: TestClient;

beforeAll(async () => {
  tenant = await createTenant(rest, 'Acme');
  otherTenant = await createTenant(rest, 'Other');
  client = await createOAuthClient(rest, tenant.id, {
    scopes: ['proxies:read', 'proxies:write', 'catalog:read', 'openid'],
  });
  readOnly = await createOAuthClient(rest, tenant.id, { scopes: ['proxies:read'] });
  publicClient = await createOAuthClient(rest, tenant.id, { is_confidential: false });
});

const clientCredentials = (c: TestClient, extra: Record<string, string> = {}) =>
  tokenRequest(rest, {
    grant_type: 'client_credentials',
    client_id: c.client_id,
    client_secret: c.client_secret!,
    ...extra,
  });

async function accessToken(c: TestClient, scope?: string) {
  const response = await clientCredentials(c, scope ? { scope } : {});
  expect(response.status).toBe(201);
  return response.body.data.access_token as string;
}

function expectOAuthError(
  response: { status: number; body: any; headers: Record<string, string> },
  status: number,
  code: string,
) {
  expect(response.status).toBe(status);
  expect(response.body.error.code).toBe(status);
  expect(response.body.error.message).toContain(`${code}: `);
  expect(response.headers['cache-control']).toBe('no-store');
  if (status === 401) expect(response.headers['www-authenticate']).toMatch(/^Basic /);
}

describe('client_credentials', () => {
  it('answers a JSON request with 201, the envelope and a signed JWT access token, never cached', async () => {
    const response = await clientCredentials(client);
    expect(response.status).toBe(201);
    expect(response.headers['cache-control']).toBe('no-store');
    expect(response.headers.pragma).toBe('no-cache');
    expect(response.body.page).toBeNull();
    const data = response.body.data;
    expect(data).toEqual({
      token_type: 'Bearer',
      expires_in: 3600,
      access_token: expect.any(String),
      scope: 'proxies:read proxies:write catalog:read',
    });
    expect(data.refresh_token).toBeUndefined();

    const header = decodeProtectedHeader(data.access_token);
    expect(header).toMatchObject({ alg: 'ES256', typ: 'at+jwt', kid: expect.any(String) });
    const claims = decodeJwt(data.access_token);
    expect(claims).toMatchObject({
      iss: services.oauth.issuer,
      aud: services.oauth.issuer,
      sub: client.client_id,
      client_id: client.client_id,
      tenant_id: tenant.id,
      scope: 'proxies:read proxies:write catalog:read',
      jti: expect.any(String),
      sid: expect.any(String),
    });
    expect(claims.exp! - claims.iat!).toBe(3600);

    const jwks = await app.inject({ method: 'GET', url: '/.well-known/jwks.json' });
    expect(jwks.statusCode).toBe(200);
    expect(jwks.json().keys.map((k: { kid: string }) => k.kid)).toContain(header.kid);
    expect(jwks.json().keys[0]).not.toHaveProperty('d');

    const proxies = await rest.get(PROXIES, { token: data.access_token });
    expect(proxies.status).toBe(200);
  });

  it('answers a form request with HTTP Basic with 200 and the plain RFC 6749 token response', async () => {
    const response = await tokenRequest(
      rest,
      { grant_type: 'client_credentials', scope: 'proxies:read' },
      { form: true, authorization: basicAuth(client.client_id, client.client_secret!) },
    );
    expect(response.status).toBe(200);
    expect(response.headers['cache-control']).toBe('no-store');
    expect(response.body).toEqual({
      token_type: 'Bearer',
      expires_in: 3600,
      access_token: expect.any(String),
      scope: 'proxies:read',
    });
  });

  it('accepts client_id and client_secret in a form body, and ignores parameters it does not know', async () => {
    const response = await tokenRequest(
      rest,
      {
        grant_type: 'client_credentials',
        client_id: client.client_id,
        client_secret: client.client_secret!,
        audience: 'x',
      },
      { form: true },
    );
    expect(response.status).toBe(200);
    expect(response.body.scope).toBe('proxies:read proxies:write catalog:read');
  });

  it("grants the requested subset of the client's scopes, and the client's scopes when none are asked for", async () => {
    expect(decodeJwt(await accessToken(client, 'proxies:read')).scope).toBe('proxies:read');
    expect(decodeJwt(await accessToken(readOnly)).scope).toBe('proxies:read');
  });

  it("refuses a scope beyond the client's, an unknown scope and openid with invalid_scope", async () => {
    const before = await grantCount();
    expectOAuthError(await clientCredentials(readOnly, { scope: 'proxies:write' }), 400, 'invalid_scope');
    expectOAuthError(await clientCredentials(readOnly, { scope: 'proxies:read everything' }), 400, 'invalid_scope');
    expectOAuthError(await clientCredentials(client, { scope: 'openid proxies:read' }), 400, 'invalid_scope');
    expect(await grantCount()).toBe(before);
  });

  it('refuses a public client with unauthorized_client', async () => {
    expectOAuthError(
      await tokenRequest(rest, { grant_type: 'client_credentials', client_id: publicClient.client_id }),
      400,
      'unauthorized_client',
    );
  });
});

describe('token endpoint errors', () => {
  it('answers invalid_request without grant_type, in JSON and in a form', async () => {
    expectOAuthError(
      await tokenRequest(rest, { client_id: client.client_id, client_secret: client.client_secret! }),
      400,
      'invalid_request',
    );
    expectOAuthError(
      await tokenRequest(rest, {}, { form: true, authorization: basicAuth(client.client_id, client.client_secret!) }),
      400,
      'invalid_request',
    );
  });

  it('answers unsupported_grant_type for a grant it does not know', async () => {
    expectOAuthError(await clientCredentials(client, { grant_type: 'password' }), 400, 'unsupported_grant_type');
  });

  it('answers invalid_client (401, WWW-Authenticate) for an unknown client, a wrong secret or none at all', async () => {
    const before = await grantCount();
    expectOAuthError(
      await tokenRequest(rest, { grant_type: 'client_credentials', client_id: 'no-such-client', client_secret: 'x' }),
      401,
      'invalid_client',
    );
    expectOAuthError(
      await tokenRequest(rest, {
        grant_type: 'client_credentials',
        client_id: '0190a5f4-0000-7000-8000-000000000000',
        client_secret: 'x',
      }),
      401,
      'invalid_client',
    );
    expectOAuthError(
      await clientCredentials(readOnly, { client_secret: `${readOnly.client_secret}x` }),
      401,
      'invalid_client',
    );
    expectOAuthError(
      await tokenRequest(rest, { grant_type: 'client_credentials', client_id: readOnly.client_id }),
      401,
      'invalid_client',
    );
    expectOAuthError(await tokenRequest(rest, { grant_type: 'client_credentials' }), 401, 'invalid_client');
    expectOAuthError(
      await tokenRequest(
        rest,
        { grant_type: 'client_credentials' },
        { form: true, authorization: `Bearer ${tenant.key}` },
      ),
      401,
      'invalid_client',
    );
    expect(await grantCount()).toBe(before);
  });

  it('refuses two client authentications at once', async () => {
    expectOAuthError(
      await tokenRequest(
        rest,
        { grant_type: 'client_credentials', client_secret: client.client_secret! },
        { form: true, authorization: basicAuth(client.client_id, client.client_secret!) },
      ),
      400,
      'invalid_request',
    );
  });

  it('refuses credentials in the query string and issues nothing', async () => {
    const before = await grantCount();
    const query = new URLSearchParams({ client_id: client.client_id, client_secret: client.client_secret! });
    const response = await tokenRequest(
      rest,
      { grant_type: 'client_credentials' },
      { form: true, path: `/api/oauth/authorize?${query}` },
    );
    expectOAuthError(response, 400, 'invalid_request');
    expect(response.body.error.message).toContain('query.client_id');
    const withBody = await tokenRequest(
      rest,
      { grant_type: 'client_credentials', client_id: client.client_id, client_secret: client.client_secret! },
      {
        path: `/api/oauth/authorize?client_secret=${encodeURIComponent(client.client_secret!)}`,
      },
    );
    expectOAuthError(withBody, 400, 'invalid_request');
    expect(await grantCount()).toBe(before);
  });

  it('refuses a repeated form parameter, malformed JSON, wrong types and other media types', async () => {
    const repeated = await rest.post('/api/oauth/authorize', {
      rawBody: 'grant_type=client_credentials&grant_type=refresh_token',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        authorization: basicAuth(client.client_id, client.client_secret!),
      },
    });
    expect(repeated.status).toBe(400);
    expect(repeated.body.error.details).toEqual([{ field: 'body.grant_type', message: 'appears more than once' }]);
    const malformed = await rest.post('/api/oauth/authorize', {
      rawBody: '{"data":',
      headers: { 'content-type': 'application/json' },
    });
    expect(malformed.status).toBe(400);
    expectOAuthError(
      await rest.post('/api/oauth/authorize', { body: { data: { grant_type: 5 } } }),
      400,
      'invalid_request',
    );
    expectOAuthError(
      await rest.post('/api/oauth/authorize', { body: { grant_type: 'client_credentials' } }),
      400,
      'invalid_request',
    );
    const text = await rest.post('/api/oauth/authorize', {
      rawBody: 'grant_type=client_credentials',
      headers: { 'content-type': 'text/plain' },
    });
    expect(text.status).toBe(415);
  });

  it('does not take form bodies on other operations', async () => {
    const response = await rest.post(PROXIES, {
      token: tenant.key,
      rawBody: 'key=x',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    expect(response.status).toBe(415);
  });
});

describe('throttling of failed client authentication', () => {
  it('answers 429 with Retry-After after 10 wrong secrets for a client, even for the right secret, and only for that client', async () => {
    const victim = await createOAuthClient(rest, tenant.id, { scopes: ['proxies:read'] });
    for (let attempt = 1; attempt <= 10; attempt += 1) {
      expectOAuthError(await clientCredentials(victim, { client_secret: `wrong-${attempt}` }), 401, 'invalid_client');
    }
    const [row] = await sql(databaseUrl, 'SELECT failed_auth_count FROM oauth_clients WHERE id = $1', [
      victim.client_id,
    ]);
    expect(row!.failed_auth_count).toBe(10);

    const before = await grantCount();
    const throttled = await clientCredentials(victim);
    expect(throttled.status).toBe(429);
    expect(throttled.body.error.code).toBe(429);
    expect(Number(throttled.headers['retry-after'])).toBeGreaterThan(0);
    expect(Number(throttled.headers['retry-after'])).toBeLessThanOrEqual(300);
    expect(await grantCount()).toBe(before);

    expect((await clientCredentials(readOnly)).status).toBe(201);
  });
});

describe('access tokens on the API', () => {
  it('carry their scopes: 403 for an operation outside them, 401 for a damaged token', async () => {
    const token = await accessToken(readOnly);
    expect((await rest.get(PROXIES, { token })).status).toBe(200);
    const create = await rest.post(PROXIES, {
      token,
      body: { data: { key: 'by-token', routes: { path: '/', origin: { uri: 'https://a.example.com' } } } },
    });
    expect(create.status).toBe(403);
    expect(await sql(databaseUrl, "SELECT key FROM proxies WHERE key = 'by-token'")).toEqual([]);

    const [head, payload, signature] = token.split('.');
    const flipped = `${head}.${payload}.${signature!.slice(0, -2)}${signature!.endsWith('AA') ? 'BB' : 'AA'}`;
    const damaged = await rest.get(PROXIES, { token: flipped });
    expect(damaged.status).toBe(401);
    expect(damaged.headers['www-authenticate']).toMatch(/^Bearer resource_metadata=".*", error="invalid_token"$/);
    const forged = `${Buffer.from(JSON.stringify({ alg: 'none', typ: 'at+jwt' })).toString('base64url')}.${payload}.`;
    expect((await rest.get(PROXIES, { token: forged })).status).toBe(401);
  });

  it("write with the write scope, and never see another tenant's data", async () => {
    const token = await accessToken(client);
    const mine = await rest.post(PROXIES, {
      token,
      body: { data: { key: 'acme-by-token', routes: { path: '/', origin: { uri: 'https://a.example.com' } } } },
    });
    expect(mine.status).toBe(201);
    expect(mine.body.data.tenant_id).toBe(tenant.id);
    const theirs = await rest.post(PROXIES, {
      token: otherTenant.key,
      body: { data: { key: 'other-tenant-proxy', routes: { path: '/', origin: { uri: 'https://b.example.com' } } } },
    });
    expect(theirs.status).toBe(201);

    expect((await rest.get(`${PROXIES}/other-tenant-proxy`, { token })).status).toBe(404);
    const list = await rest.get(PROXIES, { token });
    expect(list.body.data.map((p: { key: string }) => p.key)).toEqual(['acme-by-token']);
    expect((await rest.delete(`${PROXIES}/other-tenant-proxy`, { token })).status).toBe(404);
    expect(await sql(databaseUrl, "SELECT key FROM proxies WHERE key = 'other-tenant-proxy'")).toHaveLength(1);
  });

  it('work on /graphql with the same 401 and scope rules', async () => {
    const query = { query: '{ products(first: 1) { edges { node { id } } } }' };
    const withScope = await app.inject({
      method: 'POST',
      url: '/graphql',
      headers: { authorization: `Bearer ${await accessToken(client)}` },
      payload: query,
    });
    expect(withScope.statusCode).toBe(200);
    expect(withScope.json()).toEqual({ data: { products: { edges: [] } } });
    const without = await app.inject({
      method: 'POST',
      url: '/graphql',
      headers: { authorization: `Bearer ${await accessToken(readOnly)}` },
      payload: query,
    });
    expect(without.json().errors[0].extensions.code).toBe('FORBIDDEN');
    const expired = await app.inject({
      method: 'POST',
      url: '/graphql',
      headers: { authorization: 'Bearer a.b.c' },
      payload: query,
    });
    expect(expired.statusCode).toBe(401);
  });

  it('answer 401 once expired', async () => {
    const live = decodeJwt(await accessToken(readOnly));
    const issuer = new TokenIssuer(services.oauth.keys, services.oauth.issuer);
    const { token } = await issuer.accessToken(
      {
        tenantId: tenant.id,
        clientId: readOnly.client_id,
        userId: null,
        scopes: ['proxies:read'],
        grantId: live.sid as string,
      },
      { now: Math.floor(Date.now() / 1000) - 7200 },
    );
    const response = await rest.get(PROXIES, { token });
    expect(response.status).toBe(401);
    expect(response.body.error.message).toContain('expired');
  });
});

describe('revocation (RFC 7009) and introspection (RFC 7662)', () => {
  const introspect = (c: TestClient, token: string, form = true) =>
    tokenRequest(
      rest,
      { token },
      { form, authorization: basicAuth(c.client_id, c.client_secret!), path: '/api/oauth/introspect' },
    );
  const revoke = (c: TestClient, token: string) =>
    tokenRequest(
      rest,
      { token, token_type_hint: 'access_token' },
      { form: true, authorization: basicAuth(c.client_id, c.client_secret!), path: '/api/oauth/revoke' },
    );

  it('introspects an active token, in a form (RFC 7662 object) and in JSON (envelope)', async () => {
    const token = await accessToken(client, 'proxies:read');
    const claims = decodeJwt(token);
    const form = await introspect(readOnly, token);
    expect(form.status).toBe(200);
    expect(form.body).toEqual({
      active: true,
      scope: 'proxies:read',
      client_id: client.client_id,
      sub: client.client_id,
      exp: claims.exp,
      iat: claims.iat,
      iss: services.oauth.issuer,
      aud: services.oauth.issuer,
      jti: claims.jti,
      token_type: 'Bearer',
      tenant_id: tenant.id,
    });
    const json = await tokenRequest(
      rest,
      { token, client_id: client.client_id, client_secret: client.client_secret! },
      { path: '/api/oauth/introspect' },
    );
    expect(json.status).toBe(200);
    expect(json.body.data.active).toBe(true);
    expect((await introspect(readOnly, 'not-a-token')).body).toEqual({ active: false });
  });

  it("reports another tenant's token as inactive", async () => {
    const foreignClient = await createOAuthClient(rest, otherTenant.id, { scopes: ['proxies:read'] });
    const token = await accessToken(client);
    expect((await introspect(foreignClient, token)).body).toEqual({ active: false });
  });

  it('revokes an access token: the API answers 401 at once, introspection says inactive', async () => {
    const token = await accessToken(client);
    expect((await rest.get(PROXIES, { token })).status).toBe(200);
    const response = await revoke(client, token);
    expect(response.status).toBe(200);
    expect(response.rawBody).toBe('');
    const after = await rest.get(PROXIES, { token });
    expect(after.status).toBe(401);
    expect(after.body.error.message).toContain('revoked');
    expect((await introspect(client, token)).body).toEqual({ active: false });
    const [grant] = await sql(databaseUrl, 'SELECT revoked_at FROM oauth_grants WHERE id = $1', [decodeJwt(token).sid]);
    expect(grant!.revoked_at).not.toBeNull();
  });

  it("answers 200 without effect for an unknown token or another client's token", async () => {
    expect((await revoke(client, 'unknown')).status).toBe(200);
    const token = await accessToken(client);
    expect((await revoke(readOnly, token)).status).toBe(200);
    expect((await rest.get(PROXIES, { token })).status).toBe(200);
  });

  it('authenticates the revoking client', async () => {
    expectOAuthError(
      await tokenRequest(
        rest,
        { token: 'x' },
        { form: true, authorization: basicAuth(client.client_id, 'wrong'), path: '/api/oauth/revoke' },
      ),
      401,
      'invalid_client',
    );
    expectOAuthError(
      await tokenRequest(
        rest,
        {},
        { form: true, authorization: basicAuth(client.client_id, client.client_secret!), path: '/api/oauth/revoke' },
      ),
      400,
      'invalid_request',
    );
  });
});

describe('server metadata', () => {
  it('publishes RFC 8414 metadata naming every endpoint', async () => {
    const response = await app.inject({ method: 'GET', url: '/.well-known/oauth-authorization-server' });
    expect(response.statusCode).toBe(200);
    const issuer = services.oauth.issuer;
    expect(response.json()).toMatchObject({
      issuer,
      authorization_endpoint: `${issuer}/oauth/authorize`,
      token_endpoint: `${issuer}/api/oauth/authorize`,
      jwks_uri: `${issuer}/.well-known/jwks.json`,
      revocation_endpoint: `${issuer}/api/oauth/revoke`,
      introspection_endpoint: `${issuer}/api/oauth/introspect`,
      grant_types_supported: ['authorization_code', 'client_credentials', 'refresh_token'],
      code_challenge_methods_supported: ['S256'],
    });
  });

  it('keeps the master key out of the OAuth endpoints', async () => {
    expectOAuthError(
      await tokenRequest(
        rest,
        { grant_type: 'client_credentials' },
        { form: true, authorization: `Bearer ${TEST_MASTER_KEY}` },
      ),
      401,
      'invalid_client',
    );
  });

  it('keeps one signing key in PostgreSQL, and makes a new one when MASTER_KEY changed; older tokens stay valid', async () => {
    const before = await accessToken(readOnly);
    const [stored] = await sql<{ kid: string }>(databaseUrl, 'SELECT kid FROM oauth_signing_keys');
    expect((await services.oauth.keys.signingKey()).kid).toBe(stored!.kid);
    // Another process with the same master key uses the same key.
    expect((await new SigningKeys(db, TEST_MASTER_KEY).signingKey()).kid).toBe(stored!.kid);

    const rotated = new SigningKeys(db, 'a-different-master-key-of-at-least-32-characters');
    const newKey = await rotated.signingKey();
    expect(newKey.kid).not.toBe(stored!.kid);
    const { token } = await new TokenIssuer(rotated, services.oauth.issuer).accessToken({
      tenantId: tenant.id,
      clientId: readOnly.client_id,
      userId: null,
      scopes: ['proxies:read'],
      grantId: decodeJwt(before).sid as string,
    });
    const jwks = await app.inject({ method: 'GET', url: '/.well-known/jwks.json' });
    expect(
      jwks
        .json()
        .keys.map((k: { kid: string }) => k.kid)
        .sort(),
    ).toEqual([stored!.kid, newKey.kid].sort());
    // This process has not seen the new key yet: it finds it in PostgreSQL.
    expect((await rest.get(PROXIES, { token })).status).toBe(200);
    expect((await rest.get(PROXIES, { token: before })).status).toBe(200);
  });
});
