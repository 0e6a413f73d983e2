/**
 * RFC 8707 resource indicators: `resource` on the authorization and token requests sets the access
 * token's audience, each protected resource (the API at the issuer, `/mcp`) refuses tokens meant
 * for another with 401 invalid_token, a client may be limited to some resources, and every refused
 * request (invalid_target, hostile input) leaves no authorization request, code or grant behind.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { createKey, createTenant, startTestApp, TEST_MASTER_KEY, type Tenant } from '../helpers/app';
import {
  Browser,
  createOAuthClient,
  createUser,
  mcpToolsList,
  REDIRECT_URI,
  signInAndApprove,
  tokenRequest,
  type TestClient,
} from '../helpers/oauth';

const t = await startTestApp();
const { app, rest, services } = t;
const ISSUER = services.baseUrl;
const MCP = `${ISSUER}/mcp`;
const API_METADATA = `resource_metadata="${ISSUER}/.well-known/oauth-protected-resource"`;
// The /mcp challenge also names the scopes its operations need.
const MCP_METADATA =
  `resource_metadata="${ISSUER}/.well-known/oauth-protected-resource/mcp", ` +
  'scope="inventory:read inventory:write orders:read search"';
const SCOPES = 'proxies:read inventory:read';
const EMAIL = 'agent-user@example.com';

let tenant: Tenant;
let client: TestClient;
let mcpOnly: TestClient;

beforeAll(async () => {
  tenant = await createTenant(rest, 'Audience tenant');
  await createUser(rest, tenant.id, EMAIL);
  client = await createOAuthClient(rest, tenant.id, { scopes: ['proxies:read', 'inventory:read', 'openid'] });
  mcpOnly = await createClientWith({ resources: [MCP] });
});

async function createClientWith(extra: Record<string, unknown>): Promise<TestClient> {
  const response = await rest.post(`/api/admin/tenants/${tenant.id}/oauth-clients`, {
    token: TEST_MASTER_KEY,
    body: {
      data: {
        name: 'Agent',
        redirect_uris: [REDIRECT_URI],
        scopes: ['proxies:read', 'inventory:read'],
        is_confidential: true,
        ...extra,
      },
    },
  });
  if (response.status !== 201) throw new Error(`client creation failed: ${response.rawBody}`);
  return response.body.data;
}

const claims = (token: string) => JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString('utf8'));

/** The authorization request's query, with `resource` repeated once per value. */
function authorizeQuery(of: TestClient, resources: string[], extra: Record<string, string> = {}) {
  const query = new URLSearchParams({
    client_id: of.client_id,
    redirect_uri: REDIRECT_URI,
    response_type: 'code',
    scope: SCOPES,
    state: 'st-1',
    ...extra,
  });
  for (const resource of resources) query.append('resource', resource);
  return query;
}

/** A code for `resources`, the user signing in and approving on the page. */
async function codeFor(of: TestClient, resources: string[]): Promise<string> {
  const session = await rest.get(`/api/oauth/session/authorize?${authorizeQuery(of, resources)}`);
  if (session.status !== 200) throw new Error(`authorization failed: ${session.rawBody}`);
  const callback = await signInAndApprove(new Browser(app), session.body.data.forward_uri, EMAIL);
  const code = callback.searchParams.get('code');
  if (!code) throw new Error(`no code in ${callback}`);
  return code;
}

const exchange = (of: TestClient, code: string, resource?: string | string[]) =>
  rest.post('/api/oauth/authorize', {
    body: {
      data: {
        grant_type: 'authorization_code',
        code,
        redirect_uri: REDIRECT_URI,
        client_id: of.client_id,
        client_secret: of.client_secret!,
        ...(resource === undefined ? {} : { resource }),
      },
    },
  });

async function tokensFor(resources: string[], of = client): Promise<{ access_token: string; refresh_token: string }> {
  const response = await exchange(of, await codeFor(of, resources));
  if (response.status !== 201) throw new Error(`code exchange failed: ${response.rawBody}`);
  return response.body.data;
}

const callApi = (token: string) =>
  app.inject({ method: 'GET', url: '/api/storage/edge/proxies', headers: { authorization: `Bearer ${token}` } });
const callGraphQL = (token: string) =>
  app.inject({
    method: 'POST',
    url: '/graphql',
    headers: { authorization: `Bearer ${token}` },
    payload: { query: '{ __typename }' },
  });
const callMcp = (token: string) => mcpToolsList(app, token);

/** Rows a refused request must not have created. */
const rowCounts = async () => ({
  sessions: await t.db.oAuthAuthorizationSession.count(),
  codes: await t.db.oAuthAuthorizationCode.count(),
  grants: await t.db.oAuthGrant.count(),
  clients: await t.db.oAuthClient.count(),
});

async function expectMcpAccepts(token: string) {
  const response = await callMcp(token);
  expect(response.statusCode).toBe(200);
  expect(JSON.stringify(response.json().result.tools)).toContain('check_availability');
}

async function expectApiRefuses(token: string) {
  for (const response of [await callApi(token), await callGraphQL(token)]) {
    expect(response.statusCode).toBe(401);
    expect(response.headers['www-authenticate']).toBe(`Bearer ${API_METADATA}, error="invalid_token"`);
  }
}

async function expectMcpRefuses(token: string) {
  const response = await callMcp(token);
  expect(response.statusCode).toBe(401);
  expect(response.headers['www-authenticate']).toBe(`Bearer ${MCP_METADATA}, error="invalid_token"`);
}

describe('metadata', () => {
  it('lists the protected resources in the authorization server metadata (RFC 9728 section 4)', async () => {
    const response = await app.inject({ method: 'GET', url: '/.well-known/oauth-authorization-server' });
    expect(response.json().protected_resources).toEqual([ISSUER, MCP]);
  });
});

describe('audiences', () => {
  it('binds a token for /mcp to /mcp: refused by /api and /graphql, accepted by /mcp', async () => {
    const { access_token } = await tokensFor([MCP]);
    expect(claims(access_token).aud).toBe(MCP);
    await expectApiRefuses(access_token);
    await expectMcpAccepts(access_token);
  });

  it('binds a token for the API to the API: accepted by /api and /graphql, refused by /mcp', async () => {
    const { access_token } = await tokensFor([ISSUER]);
    expect(claims(access_token).aud).toBe(ISSUER);
    expect((await callApi(access_token)).statusCode).toBe(200);
    expect((await callGraphQL(access_token)).statusCode).toBe(200);
    await expectMcpRefuses(access_token);
  });

  it('gives a token for several resources an array audience that each of them accepts', async () => {
    const { access_token } = await tokensFor([MCP, ISSUER]);
    expect(claims(access_token).aud).toEqual([MCP, ISSUER]);
    expect((await callApi(access_token)).statusCode).toBe(200);
    expect((await callGraphQL(access_token)).statusCode).toBe(200);
    await expectMcpAccepts(access_token);
    const introspected = await app.inject({
      method: 'POST',
      url: '/api/oauth/introspect',
      payload: { data: { token: access_token, client_id: client.client_id, client_secret: client.client_secret } },
    });
    expect(introspected.json().data).toMatchObject({ active: true, aud: [MCP, ISSUER] });
  });

  it('keeps the issuer as the audience when no resource is asked: the API works as before', async () => {
    const { access_token } = await tokensFor([]);
    expect(claims(access_token).aud).toBe(ISSUER);
    expect((await callApi(access_token)).statusCode).toBe(200);
    await expectMcpRefuses(access_token);
    const introspected = await rest.post('/api/oauth/introspect', {
      body: { data: { token: access_token, client_id: client.client_id, client_secret: client.client_secret! } },
    });
    expect(introspected.body.data.aud).toBe(ISSUER);
  });

  it('accepts a resource written with an uppercase scheme and host, as its canonical form', async () => {
    const url = new URL(MCP);
    const shouting = `${url.protocol.toUpperCase()}//${url.host.toUpperCase()}${url.pathname}`;
    const { access_token } = await tokensFor([shouting]);
    expect(claims(access_token).aud).toBe(MCP);
  });

  it('leaves API keys unbound: the tenant key works on the API and on /mcp', async () => {
    const key = await createKey(rest, tenant.id, ['inventory:read', 'proxies:read']);
    expect((await callApi(key)).statusCode).toBe(200);
    await expectMcpAccepts(key);
  });

  it('issues client_credentials tokens for the resource asked', async () => {
    const response = await tokenRequest(rest, {
      grant_type: 'client_credentials',
      client_id: client.client_id,
      client_secret: client.client_secret!,
      scope: 'inventory:read',
      resource: MCP,
    });
    expect(response.status).toBe(201);
    expect(claims(response.body.data.access_token).aud).toBe(MCP);
    await expectMcpAccepts(response.body.data.access_token);
    await expectApiRefuses(response.body.data.access_token);
  });

  it('takes one resource from a form-encoded token request', async () => {
    const response = await tokenRequest(
      rest,
      {
        grant_type: 'client_credentials',
        client_id: client.client_id,
        client_secret: client.client_secret!,
        resource: ISSUER,
      },
      { form: true },
    );
    expect(response.status).toBe(200);
    expect(claims(response.body.access_token).aud).toBe(ISSUER);
  });
});

describe('narrowing at the token endpoint', () => {
  it('exchanges a code for a subset of its resources, and refuses one outside them changing nothing', async () => {
    const code = await codeFor(client, [MCP]);
    const before = await rowCounts();
    const refused = await exchange(client, code, ISSUER);
    expect(refused.status).toBe(400);
    expect(refused.body.error.message).toContain('invalid_target');
    expect(await rowCounts()).toEqual(before);
    // The code was not consumed: it still works.
    const accepted = await exchange(client, code, MCP);
    expect(accepted.status).toBe(201);
    expect(claims(accepted.body.data.access_token).aud).toBe(MCP);
  });

  it('narrows at the code exchange to one of several resources', async () => {
    const response = await exchange(client, await codeFor(client, [MCP, ISSUER]), ISSUER);
    expect(response.status).toBe(201);
    expect(claims(response.body.data.access_token).aud).toBe(ISSUER);
  });

  it('keeps the grant resources on refresh, or narrows them, and refuses others changing nothing', async () => {
    const first = await tokensFor([MCP, ISSUER]);
    const refresh = (refreshToken: string, resource?: string) =>
      tokenRequest(rest, {
        grant_type: 'refresh_token',
        refresh_token: refreshToken,
        client_id: client.client_id,
        client_secret: client.client_secret!,
        resource,
      });
    const kept = await refresh(first.refresh_token);
    expect(kept.status).toBe(201);
    expect(claims(kept.body.data.access_token).aud).toEqual([MCP, ISSUER]);
    const narrowed = await refresh(kept.body.data.refresh_token, MCP);
    expect(narrowed.status).toBe(201);
    expect(claims(narrowed.body.data.access_token).aud).toBe(MCP);
    await expectApiRefuses(narrowed.body.data.access_token);
    // The grant keeps both: the next refresh without resource covers both again.
    const again = await refresh(narrowed.body.data.refresh_token);
    expect(claims(again.body.data.access_token).aud).toEqual([MCP, ISSUER]);

    const onlyMcp = await tokensFor([MCP]);
    const before = await t.db.oAuthRefreshToken.findMany({ select: { tokenHash: true, rotatedAt: true } });
    const refused = await refresh(onlyMcp.refresh_token, ISSUER);
    expect(refused.status).toBe(400);
    expect(refused.body.error.message).toContain('invalid_target');
    expect(await t.db.oAuthRefreshToken.findMany({ select: { tokenHash: true, rotatedAt: true } })).toEqual(before);
    // Not rotated: the refresh token still works once.
    expect((await refresh(onlyMcp.refresh_token)).status).toBe(201);
  });
});

describe('invalid_target', () => {
  const redirectOf = async (of: TestClient, resources: string[]) => {
    const before = await rowCounts();
    const response = await rest.get(`/api/oauth/session/authorize?${authorizeQuery(of, resources)}`);
    expect(response.status).toBe(302);
    const location = new URL(response.headers.location!);
    expect(`${location.origin}${location.pathname}`).toBe(REDIRECT_URI);
    expect(location.searchParams.get('error')).toBe('invalid_target');
    expect(location.searchParams.get('state')).toBe('st-1');
    expect(location.searchParams.get('iss')).toBe(ISSUER);
    expect(location.searchParams.get('code')).toBeNull();
    expect(await rowCounts()).toEqual(before);
    return location.searchParams.get('error_description');
  };

  it('redirects an unknown resource with invalid_target, creating nothing', async () => {
    expect(await redirectOf(client, ['https://elsewhere.example.com/mcp'])).toContain('not a resource of this server');
    expect(await redirectOf(client, [`${ISSUER}/api`])).toContain('not a resource of this server');
  });

  it('redirects a resource with a fragment or a relative one with invalid_target, creating nothing', async () => {
    expect(await redirectOf(client, [`${MCP}#tools`])).toContain('absolute URI without a fragment');
    expect(await redirectOf(client, ['/mcp'])).toContain('absolute URI without a fragment');
    expect(await redirectOf(client, [MCP, 'urn:x'])).toContain('absolute URI without a fragment');
  });

  it('redirects a resource the client may not use with invalid_target, creating nothing', async () => {
    expect(await redirectOf(mcpOnly, [ISSUER])).toContain('not a resource this client may ask for');
  });

  it('redirects from the browser-facing endpoint too', async () => {
    const before = await rowCounts();
    const response = await app.inject({
      method: 'GET',
      url: `/oauth/authorize?${authorizeQuery(client, [`${MCP}#x`])}`,
    });
    expect(response.statusCode).toBe(302);
    expect(new URL(response.headers.location as string).searchParams.get('error')).toBe('invalid_target');
    expect(await rowCounts()).toEqual(before);
  });

  it('answers 400 rather than redirecting when the redirect URI is not the client’s', async () => {
    const before = await rowCounts();
    const query = authorizeQuery(client, ['https://elsewhere.example.com'], {
      redirect_uri: 'https://attacker.example.com/cb',
    });
    const response = await rest.get(`/api/oauth/session/authorize?${query}`);
    expect(response.status).toBe(400);
    expect(await rowCounts()).toEqual(before);
  });

  it('refuses client_credentials for a resource outside the client’s, creating no grant', async () => {
    const before = await rowCounts();
    const response = await tokenRequest(rest, {
      grant_type: 'client_credentials',
      client_id: mcpOnly.client_id,
      client_secret: mcpOnly.client_secret!,
      resource: ISSUER,
    });
    expect(response.status).toBe(400);
    expect(response.body.error.message).toContain('invalid_target');
    expect(await rowCounts()).toEqual(before);
  });
});

describe('clients limited to resources', () => {
  it('shows every resource for a client created without a list, and the list for one created with it', async () => {
    const all = await rest.get(`/api/admin/tenants/${tenant.id}/oauth-clients/${client.client_id}`, {
      token: TEST_MASTER_KEY,
    });
    expect(all.body.data.resources).toEqual([ISSUER, MCP]);
    const limited = await rest.get(`/api/admin/tenants/${tenant.id}/oauth-clients/${mcpOnly.client_id}`, {
      token: TEST_MASTER_KEY,
    });
    expect(limited.body.data.resources).toEqual([MCP]);
  });

  it('gives a client limited to /mcp a token for /mcp when it asks for no resource', async () => {
    const { access_token } = await tokensFor([], mcpOnly);
    expect(claims(access_token).aud).toBe(MCP);
    const own = await tokenRequest(rest, {
      grant_type: 'client_credentials',
      client_id: mcpOnly.client_id,
      client_secret: mcpOnly.client_secret!,
    });
    expect(claims(own.body.data.access_token).aud).toBe(MCP);
  });

  it('refuses an unknown resource in a client, creating nothing', async () => {
    const before = await rowCounts();
    for (const resources of [['https://elsewhere.example.com'], [`${MCP}#x`], [42], 'x', []]) {
      const response = await rest.post(`/api/admin/tenants/${tenant.id}/oauth-clients`, {
        token: TEST_MASTER_KEY,
        body: {
          data: { name: 'Bad', redirect_uris: [REDIRECT_URI], scopes: ['search'], is_confidential: true, resources },
        },
      });
      expect(response.status).toBe(400);
    }
    expect(await rowCounts()).toEqual(before);
  });

  it('revokes the grants holding a resource the client loses', async () => {
    const limited = await createClientWith({});
    const { access_token } = await tokensFor([MCP], limited);
    await expectMcpAccepts(access_token);
    const changed = await rest.patch(`/api/admin/tenants/${tenant.id}/oauth-clients/${limited.client_id}`, {
      token: TEST_MASTER_KEY,
      body: { data: { resources: [ISSUER] } },
    });
    expect(changed.status).toBe(200);
    expect(changed.body.data.resources).toEqual([ISSUER]);
    const refused = await callMcp(access_token);
    expect(refused.statusCode).toBe(401);
    const asked = await rest.get(`/api/oauth/session/authorize?${authorizeQuery(limited, [MCP])}`);
    expect(new URL(asked.headers.location!).searchParams.get('error')).toBe('invalid_target');
  });
});

describe('hostile resource parameters', () => {
  it('answers 1,000 resource parameters 400, creating nothing', async () => {
    const before = await rowCounts();
    const query = authorizeQuery(
      client,
      Array.from({ length: 1000 }, () => MCP),
    );
    const json = await rest.get(`/api/oauth/session/authorize?${query}`);
    expect(json.status).toBe(400);
    const page = await app.inject({ method: 'GET', url: `/oauth/authorize?${query}` });
    expect(page.statusCode).toBe(400);
    expect(await rowCounts()).toEqual(before);
  });

  it('answers more resources than the limit 400 on both endpoints, creating nothing', async () => {
    const before = await rowCounts();
    const eleven = Array.from({ length: 11 }, () => MCP);
    const authorize = await rest.get(`/api/oauth/session/authorize?${authorizeQuery(client, eleven)}`);
    expect(authorize.status).toBe(400);
    const token = await rest.post('/api/oauth/authorize', {
      body: {
        data: {
          grant_type: 'client_credentials',
          client_id: client.client_id,
          client_secret: client.client_secret!,
          resource: Array.from({ length: 1000 }, () => MCP),
        },
      },
    });
    expect(token.status).toBe(400);
    expect(token.body.error.message).toContain('invalid_request');
    expect(await rowCounts()).toEqual(before);
  });

  it('answers a 100 KB resource 400 on both endpoints, creating nothing', async () => {
    const before = await rowCounts();
    const huge = `${MCP}/${'a'.repeat(100 * 1024)}`;
    const authorize = await rest.get(`/api/oauth/session/authorize?${authorizeQuery(client, [huge])}`);
    expect(authorize.status).toBe(400);
    const token = await tokenRequest(rest, {
      grant_type: 'client_credentials',
      client_id: client.client_id,
      client_secret: client.client_secret!,
      resource: huge,
    });
    expect(token.status).toBe(400);
    expect(await rowCounts()).toEqual(before);
  });

  it('answers a resource of the wrong type 400, creating nothing', async () => {
    const before = await rowCounts();
    for (const resource of [42, { uri: MCP }, [MCP, 7], [[MCP]], null]) {
      const response = await rest.post('/api/oauth/authorize', {
        body: {
          data: {
            grant_type: 'client_credentials',
            client_id: client.client_id,
            client_secret: client.client_secret!,
            resource,
          },
        },
      });
      expect(response.status).toBe(400);
    }
    expect(await rowCounts()).toEqual(before);
  });
});
