/**
 * Clients identified by a Client ID Metadata Document: the client_id is the https URL of a
 * document the client serves (here a real HTTPS server on 127.0.0.1 whose certificate,
 * test/fixtures/tls/localhost.crt, the service trusts through OAUTH_CLIENT_METADATA_CA_FILE, with
 * OAUTH_ALLOW_PRIVATE_CLIENT_METADATA=true since it is on loopback). A user of any tenant signs in
 * (naming their tenant), sees the client's name and the document's host, approves, and the
 * client's tokens (PKCE, `resource`) belong to that tenant. Documents that cannot be used, a
 * redirect URI the document does not list, and a tenant that refuses such clients change nothing.
 */
import { readFileSync } from 'node:fs';
import type { ServerResponse } from 'node:http';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTenant, startTestApp, type Tenant } from '../helpers/app';
import { Browser, createUser, mcpToolsList, PASSWORD, pkce } from '../helpers/oauth';

const TLS = join(import.meta.dirname, '../fixtures/tls');
const t = await startTestApp({
  env: {
    OAUTH_ALLOW_PRIVATE_CLIENT_METADATA: 'true',
    OAUTH_CLIENT_METADATA_CA_FILE: join(TLS, 'localhost.crt'),
  },
});
const { app, services } = t;
const ISSUER = services.baseUrl;
const MCP = `${ISSUER}/mcp`;
const CALLBACK = 'http://127.0.0.1:7777/callback';
const EMAIL = 'agent-user@example.com';

/** The documents the client's server answers, by path. */
const documents = new Map<string, (response: ServerResponse, url: string) => void>();
let server: Server;
let base: string;
let tenant: Tenant;

const metadata = (url: string, more: Record<string, unknown> = {}) => ({
  client_id: url,
  client_name: 'Metadata Agent',
  client_uri: 'https://agent.example',
  redirect_uris: [CALLBACK],
  grant_types: ['authorization_code', 'refresh_token'],
  response_types: ['code'],
  token_endpoint_auth_method: 'none',
  ...more,
});
const serve =
  (body: (url: string) => unknown, headers: Record<string, string> = {}) =>
  (response: ServerResponse, url: string) => {
    response.writeHead(200, { 'content-type': 'application/json', ...headers });
    response.end(JSON.stringify(body(url)));
  };

beforeAll(async () => {
  server = createServer(
    { key: readFileSync(join(TLS, 'localhost.key')), cert: readFileSync(join(TLS, 'localhost.crt')) },
    (request, response) => {
      const answer = documents.get(request.url!);
      if (answer) answer(response, `${base}${request.url}`);
      else response.writeHead(404).end();
    },
  );
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
  tenant = await createTenant(t.rest, 'Agent tenant');
  await createUser(t.rest, tenant.id, EMAIL);
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

const authorizeUrl = (clientId: string, challenge: string, redirectUri = CALLBACK) =>
  `/oauth/authorize?${new URLSearchParams({
    client_id: clientId,
    redirect_uri: redirectUri,
    response_type: 'code',
    scope: 'inventory:read',
    state: 'cimd-state',
    code_challenge: challenge,
    code_challenge_method: 'S256',
    resource: MCP,
  })}`;

const callMcp = (token: string) => mcpToolsList(app, token);

/** Starts an authorization of `clientId` and signs the user in; returns the page after the login. */
async function signIn(clientId: string) {
  const browser = new Browser(app);
  const { verifier, challenge } = pkce();
  const start = await browser.request('GET', authorizeUrl(clientId, challenge));
  expect(start.statusCode, start.body).toBe(302);
  const pagePath = new URL(start.headers.location as string).pathname;
  const login = await browser.request('GET', pagePath);
  expect(login.body).toContain('name="tenant"');
  const signedIn = await browser.request('POST', `${pagePath}/login`, {
    csrf_token: Browser.csrf(login.body),
    tenant: tenant.id,
    email: EMAIL,
    password: PASSWORD,
  });
  expect(signedIn.statusCode).toBe(303);
  return { browser, pagePath, verifier, page: await browser.request('GET', pagePath) };
}

/** The whole path, ending with the client's tokens. */
async function tokensOf(clientId: string) {
  const { browser, pagePath, verifier, page } = await signIn(clientId);
  expect(page.statusCode).toBe(200);
  const consent = await browser.request('POST', `${pagePath}/consent`, {
    csrf_token: Browser.csrf(page.body),
    decision: 'approve',
  });
  expect(consent.statusCode).toBe(303);
  const callback = new URL(consent.headers.location as string);
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
  expect(response.statusCode, response.body).toBe(200);
  return { page, tokens: response.json() as { access_token: string; refresh_token: string } };
}

const claims = (token: string) => JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString('utf8'));
const setAllowed = (allowed: boolean) =>
  app.inject({
    method: 'PUT',
    url: '/api/oauth/agent-clients',
    headers: { authorization: `Bearer ${tenant.key}` },
    payload: { data: { metadata_document_clients_allowed: allowed } },
  });

describe('a client identified by its metadata document', () => {
  it('is advertised in the authorization server metadata', async () => {
    const answer = await app.inject({ method: 'GET', url: '/.well-known/oauth-authorization-server' });
    expect(answer.json().client_id_metadata_document_supported).toBe(true);
  });

  it('is approved by a user of any tenant, who sees its name and the host of its document, and calls /mcp', async () => {
    documents.set(
      '/agent.json',
      serve((url) => metadata(url)),
    );
    const clientId = `${base}/agent.json`;
    const { page, tokens } = await tokensOf(clientId);
    expect(page.body).toContain('Metadata Agent wants to access your account');
    expect(page.body).toContain(`described by <strong>${new URL(base).host}</strong>`);
    const claimed = claims(tokens.access_token);
    expect(claimed).toMatchObject({ tenant_id: tenant.id, aud: MCP, scope: 'inventory:read' });
    expect((await callMcp(tokens.access_token)).statusCode).toBe(200);
    // The client is kept with what its document says, without a tenant.
    const row = await t.db.oAuthClient.findUniqueOrThrow({ where: { metadataUrl: clientId } });
    expect(row).toMatchObject({
      tenantId: null,
      name: 'Metadata Agent',
      redirectUris: [CALLBACK],
      isConfidential: false,
    });
    // It refreshes like any public client.
    const refreshed = await app.inject({
      method: 'POST',
      url: '/api/oauth/authorize',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams({
        grant_type: 'refresh_token',
        refresh_token: tokens.refresh_token,
        client_id: clientId,
      }).toString(),
    });
    expect(refreshed.statusCode, refreshed.body).toBe(200);
    // client_credentials is not for it.
    const credentials = await app.inject({
      method: 'POST',
      url: '/api/oauth/authorize',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams({ grant_type: 'client_credentials', client_id: clientId }).toString(),
    });
    expect(credentials.statusCode).toBe(400);
    expect(credentials.body).toContain('unauthorized_client');
  });

  it.each([
    [
      'whose client_id is not its URL',
      '/other.json',
      () => metadata('https://elsewhere.example/agent.json'),
      'not the URL it was fetched from',
    ],
    ['that redirects', '/moved.json', null, 'redirects are refused'],
    [
      'larger than 5 KiB',
      '/large.json',
      (url: string) => metadata(url, { padding: 'x'.repeat(6_000) }),
      'larger than 5120 bytes',
    ],
    ['with a secret', '/secret.json', (url: string) => metadata(url, { client_secret: 'nope' }), 'client secret'],
  ])('refuses a document %s, storing nothing', async (_case, path, body, reason) => {
    if (body) documents.set(path, serve(body));
    else documents.set(path, (response) => response.writeHead(302, { location: `${base}/agent.json` }).end());
    const clients = await t.db.oAuthClient.count();
    const sessions = await t.db.oAuthAuthorizationSession.count();
    const answer = await app.inject({ method: 'GET', url: authorizeUrl(`${base}${path}`, pkce().challenge) });
    expect(answer.statusCode).toBe(400);
    expect(answer.body).toContain(reason);
    expect(await t.db.oAuthClient.count()).toBe(clients);
    expect(await t.db.oAuthAuthorizationSession.count()).toBe(sessions);
  });

  it('refuses a redirect URI its document does not list, and a client_id URL that is not a document URL', async () => {
    documents.set(
      '/listed.json',
      serve((url) => metadata(url)),
    );
    const unlisted = await app.inject({
      method: 'GET',
      url: authorizeUrl(`${base}/listed.json`, pkce().challenge, 'http://127.0.0.1:7777/elsewhere'),
    });
    expect(unlisted.statusCode).toBe(400);
    expect(unlisted.body).toContain('redirect_uri is not one of the exact redirect URIs');
    for (const clientId of [`${base}/listed.json?x=1`, `${base}/a/../listed.json`, `${base}/`]) {
      const refused = await app.inject({ method: 'GET', url: authorizeUrl(clientId, pkce().challenge) });
      expect(refused.statusCode).toBe(400);
    }
  });

  it('is refused by a tenant that switched such clients off, which revokes what its users gave', async () => {
    documents.set(
      '/switch.json',
      serve((url) => metadata(url, { client_name: 'Switch Agent' })),
    );
    const clientId = `${base}/switch.json`;
    const { tokens } = await tokensOf(clientId);
    expect((await callMcp(tokens.access_token)).statusCode).toBe(200);
    const off = await setAllowed(false);
    expect(off.json().data).toEqual({ dynamic_clients_allowed: false, metadata_document_clients_allowed: false });
    try {
      expect((await callMcp(tokens.access_token)).statusCode).toBe(401);
      const codes = await t.db.oAuthAuthorizationCode.count();
      const { page } = await signIn(clientId);
      expect(page.statusCode).toBe(403);
      expect(page.body).toContain('does not allow applications identified by a client metadata document');
      expect(await t.db.oAuthAuthorizationCode.count()).toBe(codes);
    } finally {
      expect((await setAllowed(true)).statusCode).toBe(200);
    }
  });
});

describe('without OAUTH_ALLOW_PRIVATE_CLIENT_METADATA', () => {
  it('refuses a document on a loopback address, naming the setting, fetching nothing', async () => {
    const strict = await startTestApp({
      databaseUrl: t.databaseUrl,
      env: { OAUTH_CLIENT_METADATA_CA_FILE: join(TLS, 'localhost.crt') },
    });
    let fetched = 0;
    documents.set('/private.json', (response, url) => {
      fetched += 1;
      serve(() => metadata(url))(response, url);
    });
    const answer = await strict.app.inject({
      method: 'GET',
      url: authorizeUrl(`${base}/private.json`, pkce().challenge),
    });
    expect(answer.statusCode).toBe(400);
    expect(answer.body).toContain('set OAUTH_ALLOW_PRIVATE_CLIENT_METADATA=true');
    expect(answer.body).not.toMatch(/EDGE_ALLOW_PRIVATE_ORIGINS|BROADCAST_ALLOW_PRIVATE_WEBHOOKS/);
    expect(fetched).toBe(0);
  });
});
