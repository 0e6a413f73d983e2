/**
 * RFC 7591 dynamic client registration and RFC 7592 management: a registered client is public and
 * belongs to no tenant; a user of a tenant that allows such clients signs in (naming their tenant),
 * sees the client's name and unverified redirect host, approves, and the client's tokens (PKCE,
 * `resource`) belong to that tenant. A tenant that does not allow them refuses on the consent page;
 * turning the switch off revokes what was given. Refused requests change nothing.
 */
import { createHash } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { createKey, createTenant, startTestApp, type Tenant } from '../helpers/app';
import { Browser, createUser, mcpToolsList, PASSWORD, pkce } from '../helpers/oauth';

const t = await startTestApp();
const { app, services } = t;
const ISSUER = services.baseUrl;
const MCP = `${ISSUER}/mcp`;
const CALLBACK = 'http://127.0.0.1:7777/callback';

let open: Tenant;
let closed: Tenant;
const OPEN_EMAIL = 'open-user@example.com';
const CLOSED_EMAIL = 'closed-user@example.com';

/** Each test registers from an address of its own: registrations are limited per address. */
let addressCounter = 1;
const nextAddress = () => `198.51.100.${addressCounter++}`;

const register = (body: unknown, remoteAddress = nextAddress()) =>
  app.inject({
    method: 'POST',
    url: '/api/oauth/register',
    remoteAddress,
    headers: { 'content-type': 'application/json' },
    payload: typeof body === 'string' ? body : JSON.stringify(body),
  });

const registration = (method: 'GET' | 'DELETE', clientId: string, token?: string) =>
  app.inject({
    method,
    url: `/api/oauth/register/${clientId}`,
    headers: token === undefined ? {} : { authorization: `Bearer ${token}` },
  });

const agentMetadata = {
  client_name: 'Agent Desk',
  redirect_uris: [CALLBACK],
  token_endpoint_auth_method: 'none',
  grant_types: ['authorization_code', 'refresh_token'],
  response_types: ['code'],
  software_id: 'ignored-member',
};

interface Registered {
  client_id: string;
  registration_access_token: string;
  registration_client_uri: string;
}

async function registerAgent(): Promise<Registered> {
  const response = await register(agentMetadata);
  if (response.statusCode !== 201) throw new Error(`registration failed: ${response.body}`);
  return response.json();
}

const claims = (token: string) => JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString('utf8'));
const clientCount = () => t.db.oAuthClient.count();

const setAllowed = (key: string, allowed: unknown) =>
  app.inject({
    method: 'PUT',
    url: '/api/oauth/agent-clients',
    headers: { authorization: `Bearer ${key}` },
    payload: { data: { dynamic_clients_allowed: allowed } },
  });

const callMcp = (token: string) => mcpToolsList(app, token);

/** The authorization request a browser follows, with PKCE and the /mcp resource. */
function authorizeUrl(clientId: string, challenge: string) {
  const query = new URLSearchParams({
    client_id: clientId,
    redirect_uri: CALLBACK,
    response_type: 'code',
    scope: 'inventory:read',
    state: 'agent-state',
    code_challenge: challenge,
    code_challenge_method: 'S256',
    resource: MCP,
  });
  return `/oauth/authorize?${query}`;
}

/** Starts the authorization and signs the user in, naming their tenant; returns the session page after it. */
async function signIn(clientId: string, tenantId: string, email: string) {
  const browser = new Browser(app);
  const { verifier, challenge } = pkce();
  const start = await browser.request('GET', authorizeUrl(clientId, challenge));
  expect(start.statusCode).toBe(302);
  const pagePath = new URL(start.headers.location as string).pathname;
  const login = await browser.request('GET', pagePath);
  expect(login.statusCode).toBe(200);
  expect(login.body).toContain('name="tenant"');
  const signedIn = await browser.request('POST', `${pagePath}/login`, {
    csrf_token: Browser.csrf(login.body),
    tenant: tenantId,
    email,
    password: PASSWORD,
  });
  expect(signedIn.statusCode).toBe(303);
  const csrf = Browser.csrf(login.body);
  return { browser, pagePath, verifier, csrf, page: await browser.request('GET', pagePath) };
}

/** The whole path an agent takes, ending with its tokens. */
async function agentTokens(clientId: string) {
  const { browser, pagePath, verifier, page } = await signIn(clientId, open.id, OPEN_EMAIL);
  expect(page.statusCode).toBe(200);
  const consent = await browser.request('POST', `${pagePath}/consent`, {
    csrf_token: Browser.csrf(page.body),
    decision: 'approve',
  });
  expect(consent.statusCode).toBe(303);
  const callback = new URL(consent.headers.location as string);
  expect(callback.searchParams.get('state')).toBe('agent-state');
  const response = await app.inject({
    method: 'POST',
    url: '/api/oauth/authorize',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    payload: new URLSearchParams({
      grant_type: 'authorization_code',
      code: callback.searchParams.get('code')!,
      redirect_uri: CALLBACK,
      client_id: clientId,
      code_verifier: verifier,
      resource: MCP,
    }).toString(),
  });
  expect(response.statusCode).toBe(200);
  return { page, tokens: response.json() as { access_token: string; refresh_token: string } };
}

beforeAll(async () => {
  open = await createTenant(t.rest, 'Open tenant');
  closed = await createTenant(t.rest, 'Closed tenant');
  await createUser(t.rest, open.id, OPEN_EMAIL);
  await createUser(t.rest, closed.id, CLOSED_EMAIL);
  expect((await setAllowed(open.key, true)).statusCode).toBe(200);
});

describe('registration, authorization and management', () => {
  it('advertises the registration endpoint', async () => {
    const metadata = await app.inject({ method: 'GET', url: '/.well-known/oauth-authorization-server' });
    expect(metadata.json().registration_endpoint).toBe(`${ISSUER}/api/oauth/register`);
  });

  it('registers a public client, which a user of an open tenant approves and which then calls /mcp', async () => {
    const response = await register(agentMetadata);
    expect(response.statusCode).toBe(201);
    expect(response.headers['cache-control']).toBe('no-store');
    const client = response.json();
    expect(client).toMatchObject({
      client_name: 'Agent Desk',
      redirect_uris: [CALLBACK],
      token_endpoint_auth_method: 'none',
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      registration_client_uri: `${ISSUER}/api/oauth/register/${client.client_id}`,
    });
    expect(client.registration_access_token).toMatch(/^crt_/);
    expect(client).not.toHaveProperty('client_secret');
    const row = await t.db.oAuthClient.findUniqueOrThrow({ where: { id: client.client_id } });
    expect(row.tenantId).toBeNull();
    expect(Buffer.from(row.registrationTokenHash!).toString('hex')).toBe(
      createHash('sha256').update(client.registration_access_token).digest('hex'),
    );

    const { page, tokens } = await agentTokens(client.client_id);
    expect(page.body).toContain('Agent Desk');
    expect(page.body).toContain('127.0.0.1:7777');
    expect(page.body).toContain('unverified');
    expect(claims(tokens.access_token)).toMatchObject({ aud: MCP, tenant_id: open.id, client_id: client.client_id });
    const tools = await callMcp(tokens.access_token);
    expect(tools.statusCode).toBe(200);
    expect(JSON.stringify(tools.json().result.tools)).toContain('check_availability');

    const refreshed = await app.inject({
      method: 'POST',
      url: '/api/oauth/authorize',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams({
        grant_type: 'refresh_token',
        refresh_token: tokens.refresh_token,
        client_id: client.client_id,
      }).toString(),
    });
    expect(refreshed.statusCode).toBe(200);
    expect(claims(refreshed.json().access_token)).toMatchObject({ aud: MCP, tenant_id: open.id });
  });

  it('reads the registration with its token and refuses any other token with 401', async () => {
    const client = await registerAgent();
    const read = await registration('GET', client.client_id, client.registration_access_token);
    expect(read.statusCode).toBe(200);
    expect(read.json()).toMatchObject({
      client_id: client.client_id,
      client_name: 'Agent Desk',
      registration_access_token: client.registration_access_token,
    });
    const other = await registerAgent();
    for (const response of [
      await registration('GET', client.client_id, `${client.registration_access_token}x`),
      await registration('GET', client.client_id, other.registration_access_token),
      await registration('GET', client.client_id),
      await registration('GET', '00000000-0000-7000-8000-000000000000', client.registration_access_token),
      await registration('GET', 'not-a-uuid', client.registration_access_token),
    ]) {
      expect(response.statusCode).toBe(401);
      expect(response.headers['www-authenticate']).toBe('Bearer error="invalid_token"');
      expect(response.json().error).toBe('invalid_token');
    }
  });

  it('deletes the registration with its token only: its tokens stop working', async () => {
    const client = await registerAgent();
    const { tokens } = await agentTokens(client.client_id);
    expect((await callMcp(tokens.access_token)).statusCode).toBe(200);
    const wrong = await registration('DELETE', client.client_id, 'crt_wrong');
    expect(wrong.statusCode).toBe(401);
    expect(await t.db.oAuthClient.count({ where: { id: client.client_id } })).toBe(1);
    const deleted = await registration('DELETE', client.client_id, client.registration_access_token);
    expect(deleted.statusCode).toBe(204);
    expect(await t.db.oAuthClient.count({ where: { id: client.client_id } })).toBe(0);
    expect((await callMcp(tokens.access_token)).statusCode).toBe(401);
    expect((await registration('GET', client.client_id, client.registration_access_token)).statusCode).toBe(401);
  });

  it('refuses client_credentials for a registered client', async () => {
    const client = await registerAgent();
    const grants = await t.db.oAuthGrant.count();
    const response = await app.inject({
      method: 'POST',
      url: '/api/oauth/authorize',
      payload: { data: { grant_type: 'client_credentials', client_id: client.client_id } },
    });
    expect(response.statusCode).toBe(400);
    expect(response.json().error.message).toContain('unauthorized_client');
    expect(await t.db.oAuthGrant.count()).toBe(grants);
  });

  it('is not one of the tenant’s clients in the operator’s list', async () => {
    const client = await registerAgent();
    const listed = await t.rest.get(`/api/admin/tenants/${open.id}/oauth-clients`, {
      token: 'mk_test_master_key_0123456789abcdefghijklmnop',
    });
    expect(listed.body.data.map((c: { client_id: string }) => c.client_id)).not.toContain(client.client_id);
  });
});

describe('the tenant switch', () => {
  it('is off by default, readable and settable with scope *', async () => {
    const read = await app.inject({
      method: 'GET',
      url: '/api/oauth/agent-clients',
      headers: { authorization: `Bearer ${closed.key}` },
    });
    expect(read.statusCode).toBe(200);
    expect(read.json().data).toEqual({ dynamic_clients_allowed: false, metadata_document_clients_allowed: true });
    const narrow = await createKey(t.rest, closed.id, ['inventory:read']);
    const refused = await setAllowed(narrow, true);
    expect(refused.statusCode).toBe(403);
    expect(refused.headers['www-authenticate']).toBe('Bearer error="insufficient_scope", scope="*"');
    for (const value of ['yes', 1, null]) expect((await setAllowed(closed.key, value)).statusCode).toBe(400);
    expect(await t.db.oAuthTenantSettings.count({ where: { tenantId: closed.id } })).toBe(0);
  });

  it('refuses a user of a tenant that has not switched it on, on the consent page, creating no code', async () => {
    const client = await registerAgent();
    const codes = await t.db.oAuthAuthorizationCode.count();
    const { browser, pagePath, csrf, page } = await signIn(client.client_id, closed.id, CLOSED_EMAIL);
    expect(page.statusCode).toBe(403);
    expect(page.body).toContain('does not allow applications that registered themselves');
    expect(page.body).not.toContain('name="decision"');
    // A consent form posted anyway (with the CSRF token of the login page) is refused too.
    const posted = await browser.request('POST', `${pagePath}/consent`, { csrf_token: csrf, decision: 'approve' });
    expect(posted.statusCode).toBe(403);
    expect(posted.body).toContain('does not allow applications that registered themselves');
    expect(await t.db.oAuthAuthorizationCode.count()).toBe(codes);
    expect(await t.db.oAuthGrant.count({ where: { clientId: client.client_id } })).toBe(0);
  });

  it('revokes what its users gave registered clients when switched off', async () => {
    const client = await registerAgent();
    const { tokens } = await agentTokens(client.client_id);
    expect((await callMcp(tokens.access_token)).statusCode).toBe(200);
    expect(await t.db.oAuthConsent.count({ where: { clientId: client.client_id } })).toBe(1);
    expect((await setAllowed(open.key, false)).json().data).toEqual({
      dynamic_clients_allowed: false,
      metadata_document_clients_allowed: true,
    });
    try {
      expect((await callMcp(tokens.access_token)).statusCode).toBe(401);
      expect(await t.db.oAuthConsent.count({ where: { clientId: client.client_id } })).toBe(0);
      const refreshed = await app.inject({
        method: 'POST',
        url: '/api/oauth/authorize',
        payload: {
          data: { grant_type: 'refresh_token', refresh_token: tokens.refresh_token, client_id: client.client_id },
        },
      });
      expect(refreshed.statusCode).toBe(400);
      expect(refreshed.json().error.message).toContain('invalid_grant');
      const { page } = await signIn(client.client_id, open.id, OPEN_EMAIL);
      expect(page.statusCode).toBe(403);
    } finally {
      await setAllowed(open.key, true);
    }
  });

  it('refuses a wrong account id on the login page like a wrong password', async () => {
    const client = await registerAgent();
    const browser = new Browser(app);
    const start = await browser.request('GET', authorizeUrl(client.client_id, pkce().challenge));
    const pagePath = new URL(start.headers.location as string).pathname;
    for (const [tenant, status] of [
      [closed.id, 401],
      ['not-an-id', 401],
      ['x'.repeat(65), 400],
    ] as const) {
      const login = await browser.request('GET', pagePath);
      const response = await browser.request('POST', `${pagePath}/login`, {
        csrf_token: Browser.csrf(login.body),
        tenant,
        email: OPEN_EMAIL,
        password: PASSWORD,
      });
      expect(response.statusCode).toBe(status);
      expect(response.headers['set-cookie'] ?? '').not.toContain('cp_oauth_login');
    }
  });
});

describe('refused registrations change nothing', () => {
  const refused = async (body: unknown, status: number, error?: string) => {
    const before = await clientCount();
    const response = await register(body);
    expect(response.statusCode).toBe(status);
    if (error) expect(response.json().error).toBe(error);
    expect(await clientCount()).toBe(before);
    return response;
  };

  it('answers invalid metadata with the RFC 7591 error form', async () => {
    await refused({ ...agentMetadata, redirect_uris: ['http://evil.example.com/cb'] }, 400, 'invalid_redirect_uri');
    await refused({ ...agentMetadata, redirect_uris: [`${CALLBACK}#x`] }, 400, 'invalid_redirect_uri');
    await refused({ ...agentMetadata, redirect_uris: [] }, 400, 'invalid_redirect_uri');
    await refused({ client_name: 'No URIs' }, 400, 'invalid_redirect_uri');
    await refused({ ...agentMetadata, grant_types: ['client_credentials'] }, 400, 'invalid_client_metadata');
    await refused(
      { ...agentMetadata, token_endpoint_auth_method: 'client_secret_basic' },
      400,
      'invalid_client_metadata',
    );
    await refused({ ...agentMetadata, response_types: ['token'] }, 400, 'invalid_client_metadata');
    await refused({ ...agentMetadata, scope: 'inventory:read admin' }, 400, 'invalid_client_metadata');
    const described = await refused({ ...agentMetadata, client_name: 5 }, 400, 'invalid_client_metadata');
    expect(described.json().error_description).toContain('client_name');
  });

  it('refuses wrong types and 10,000 redirect URIs', async () => {
    await refused({ ...agentMetadata, redirect_uris: CALLBACK }, 400, 'invalid_redirect_uri');
    await refused(
      { ...agentMetadata, redirect_uris: Array.from({ length: 10_000 }, (_, i) => `${CALLBACK}${i}`) },
      400,
      'invalid_redirect_uri',
    );
    await refused([agentMetadata], 400);
    await refused('null', 400);
    await refused('{"redirect_uris": ["http://127.0.0.1:7777/callback"', 400);
  });

  it('refuses a deeply nested body and a 1 MiB one', async () => {
    const deep = `{"redirect_uris":["${CALLBACK}"],"extra":${'['.repeat(200)}${']'.repeat(200)}}`;
    await refused(deep, 400);
    const huge = JSON.stringify({ ...agentMetadata, client_name: 'x'.repeat(1024 * 1024) });
    await refused(huge, 413);
  });

  it('limits registrations per client address', async () => {
    const address = nextAddress();
    for (let i = 0; i < 10; i += 1) expect((await register(agentMetadata, address)).statusCode).toBe(201);
    const before = await clientCount();
    const limited = await register(agentMetadata, address);
    expect(limited.statusCode).toBe(429);
    expect(await clientCount()).toBe(before);
    expect((await register(agentMetadata, nextAddress())).statusCode).toBe(201);
  });
});
