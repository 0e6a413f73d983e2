/**
 * The whole path an agent takes to /mcp, driven by the official MCP client
 * (@modelcontextprotocol/client) with an OAuth provider of its interface: a 401 naming the
 * protected resource metadata, that metadata, the authorization server's metadata, the client's
 * registration (a Client ID Metadata Document served over HTTPS on 127.0.0.1, and separately
 * dynamic registration), the authorization request with PKCE and `resource`, the login and consent
 * pages filled in as a browser would, the token, then `tools/list` and calls of the tools.
 */
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import {
  Client,
  StreamableHTTPClientTransport,
  UnauthorizedError,
  type OAuthClientMetadata,
  type OAuthClientProvider,
  type StoredOAuthClientInformation,
  type StoredOAuthTokens,
} from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTenant, type Tenant } from '../helpers/app';
import { TokenIssuer } from '../../src/modules/oauth/tokens';
import { Browser, createUser, mcpToolsList, PASSWORD, startListeningApp } from '../helpers/oauth';

const TLS = join(import.meta.dirname, '../fixtures/tls');
const service = await startListeningApp({
  OAUTH_ALLOW_PRIVATE_CLIENT_METADATA: 'true',
  OAUTH_CLIENT_METADATA_CA_FILE: join(TLS, 'localhost.crt'),
});
const MCP_URL = new URL(`${service.origin}/mcp`);
const CALLBACK = 'http://127.0.0.1:7778/callback';
const EMAIL = 'sdk-user@example.com';
const METADATA: OAuthClientMetadata = {
  client_name: 'SDK agent',
  redirect_uris: [CALLBACK],
  grant_types: ['authorization_code', 'refresh_token'],
  response_types: ['code'],
  token_endpoint_auth_method: 'none',
};

let documentServer: Server;
let documentUrl: string;
let tenant: Tenant;

/** An agent's OAuth state, kept in memory: what a desktop client keeps on disk. */
class AgentProvider implements OAuthClientProvider {
  information: StoredOAuthClientInformation | undefined;
  saved: StoredOAuthTokens | undefined;
  verifier = '';
  authorizationUrl: URL | undefined;

  constructor(readonly clientMetadataUrl?: string) {}

  get redirectUrl() {
    return CALLBACK;
  }
  get clientMetadata() {
    return METADATA;
  }
  state() {
    return 'sdk-state';
  }
  clientInformation() {
    return this.information;
  }
  saveClientInformation(information: StoredOAuthClientInformation) {
    this.information = information;
  }
  tokens() {
    return this.saved;
  }
  saveTokens(tokens: StoredOAuthTokens) {
    this.saved = tokens;
  }
  redirectToAuthorization(url: URL) {
    this.authorizationUrl = url;
  }
  saveCodeVerifier(verifier: string) {
    this.verifier = verifier;
  }
  codeVerifier() {
    return this.verifier;
  }
}

const newClient = () =>
  new Client({ name: 'sdk-agent', version: '1.0.0' }, { versionNegotiation: { mode: { pin: '2026-07-28' } } });

/** The browser's part: follows the authorization URL, signs in naming the tenant, approves; returns the callback. */
async function approveInBrowser(authorizationUrl: URL) {
  const browser = new Browser(service.app);
  const start = await browser.request('GET', `${authorizationUrl.pathname}${authorizationUrl.search}`);
  expect(start.statusCode, start.body).toBe(302);
  const pagePath = new URL(start.headers.location as string).pathname;
  const login = await browser.request('GET', pagePath);
  const signedIn = await browser.request('POST', `${pagePath}/login`, {
    csrf_token: Browser.csrf(login.body),
    tenant: tenant.id,
    email: EMAIL,
    password: PASSWORD,
  });
  expect(signedIn.statusCode).toBe(303);
  const consentPage = await browser.request('GET', pagePath);
  expect(consentPage.statusCode, consentPage.body).toBe(200);
  expect(consentPage.body).toContain('SDK agent wants to access your account');
  const consent = await browser.request('POST', `${pagePath}/consent`, {
    csrf_token: Browser.csrf(consentPage.body),
    decision: 'approve',
  });
  expect(consent.statusCode).toBe(303);
  return { callback: new URL(consent.headers.location as string), consentPage: consentPage.body };
}

/** Connects with the provider: the first attempt is refused and sends the user to authorize. */
async function authorizeAgent(provider: AgentProvider) {
  const first = newClient();
  const transport = new StreamableHTTPClientTransport(MCP_URL, { authProvider: provider });
  const refused = await first
    .connect(transport)
    .then(() => first.listTools())
    .then(
      () => null,
      (error: unknown) => error,
    );
  expect(refused).toBeInstanceOf(UnauthorizedError);
  const authorizationUrl = provider.authorizationUrl!;
  expect(authorizationUrl.origin + authorizationUrl.pathname).toBe(`${service.origin}/oauth/authorize`);
  expect(authorizationUrl.searchParams.get('resource')).toBe(MCP_URL.href);
  expect(authorizationUrl.searchParams.get('code_challenge_method')).toBe('S256');
  const { callback, consentPage } = await approveInBrowser(authorizationUrl);
  expect(callback.searchParams.get('state')).toBe('sdk-state');
  await transport.finishAuth(callback.searchParams);
  await first.close().catch(() => undefined);
  return { consentPage };
}

/** A connection with the tokens the provider holds, its tools listed and called. */
async function useTools(provider: AgentProvider) {
  const client = newClient();
  await client.connect(new StreamableHTTPClientTransport(MCP_URL, { authProvider: provider }));
  const { tools } = await client.listTools();
  // Every operation is reached with the token; over this empty tenant each answers a domain error
  // as a tool result (isError), never a transport error.
  const meta = { 'ucp-agent': { profile: 'https://agent.example/profile.json' } };
  const unknownId = '0190f1a2-0000-7000-8000-000000000000';
  const calls: [string, Record<string, unknown>, string][] = [
    ['search_catalog', { meta, catalog: { query: 'lamp' } }, 'catalog'],
    ['lookup_catalog', { meta, catalog: { ids: ['SKU-1'] } }, 'catalog'],
    ['get_product', { meta, catalog: { id: 'SKU-1' } }, 'catalog'],
    ['check_availability', { skus: ['NO-SUCH-SKU'] }, 'NOT_FOUND'],
    [
      'reserve_items',
      {
        business_id: unknownId,
        channel_id: unknownId,
        items: [{ sku: 'NO-SUCH-SKU', quantity: 1 }],
        customer: { name: 'Agent buyer' },
        idempotency_key: 'sdk-agent-reservation-1',
      },
      '',
    ],
    ['extend_reservation', { reservation_id: unknownId, expires_in_seconds: 600 }, 'NOT_FOUND'],
    ['release_reservation', { reservation_id: unknownId }, 'NOT_FOUND'],
    ['get_order_status', { order_id: unknownId }, 'NOT_FOUND'],
  ];
  expect([...calls.map(([name]) => name), 'list_locations'].sort()).toEqual(tools.map((tool) => tool.name).sort());
  for (const [name, args, says] of calls) {
    const result = await client.callTool({ name, arguments: args });
    expect(result.isError, `${name}: ${JSON.stringify(result.content)}`).toBe(true);
    expect(JSON.stringify(result.content)).toContain(says);
  }
  // The one operation with an answer on an empty tenant: nothing to list, no defaults.
  const locations = await client.callTool({ name: 'list_locations', arguments: {} });
  expect(locations.structuredContent).toMatchObject({
    businesses: [],
    warehouses: [],
    sales_channels: [],
    defaults: { business_id: null, channel_id: null },
  });
  await client.close();
}

beforeAll(async () => {
  documentServer = createServer(
    { key: readFileSync(join(TLS, 'localhost.key')), cert: readFileSync(join(TLS, 'localhost.crt')) },
    (request, response) => {
      if (request.url !== '/sdk-agent.json') return response.writeHead(404).end();
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ ...METADATA, client_id: documentUrl }));
    },
  );
  await new Promise<void>((resolve) => documentServer.listen(0, '127.0.0.1', resolve));
  documentUrl = `https://127.0.0.1:${(documentServer.address() as AddressInfo).port}/sdk-agent.json`;
  tenant = await createTenant(service.rest, 'SDK tenant');
  await createUser(service.rest, tenant.id, EMAIL);
});
afterAll(() => new Promise<void>((resolve) => documentServer.close(() => resolve())));

describe('an agent with the official MCP client', () => {
  it('identifies itself by its metadata document, is approved, and uses the tools', async () => {
    const provider = new AgentProvider(documentUrl);
    const { consentPage } = await authorizeAgent(provider);
    expect(provider.information?.client_id).toBe(documentUrl);
    expect(consentPage).toContain(`described by <strong>${new URL(documentUrl).host}</strong>`);
    const claims = JSON.parse(Buffer.from(provider.saved!.access_token.split('.')[1]!, 'base64url').toString());
    expect(claims).toMatchObject({ aud: MCP_URL.href, tenant_id: tenant.id });
    await useTools(provider);

    // The same grant's token, expired: refused with invalid_token, as is one for the API only.
    const issuer = new TokenIssuer(service.services.oauth.keys, service.services.oauth.issuer);
    const grant = {
      tenantId: tenant.id,
      clientId: claims.client_id as string,
      userId: claims.user_id as string,
      scopes: ['inventory:read'],
      grantId: claims.sid as string,
    };
    const expired = await issuer.accessToken(
      { ...grant, resources: [MCP_URL.href] },
      { now: Math.floor(Date.now() / 1000) - 7200 },
    );
    const forApi = await issuer.accessToken({ ...grant, resources: [service.origin] });
    for (const token of [expired.token, forApi.token]) {
      const refused = await mcpToolsList(service.app, token);
      expect(refused.statusCode).toBe(401);
      expect(refused.headers['www-authenticate']).toContain('error="invalid_token"');
    }
  });

  it('registers itself when it has no metadata document, once the tenant allows it, and uses the tools', async () => {
    const allowed = await service.rest.put('/api/oauth/agent-clients', {
      token: tenant.key,
      body: { data: { dynamic_clients_allowed: true } },
    });
    expect(allowed.status).toBe(200);
    const provider = new AgentProvider();
    const { consentPage } = await authorizeAgent(provider);
    expect(provider.information?.client_id).toMatch(/^[0-9a-f-]{36}$/);
    expect(consentPage).toContain('unverified');
    await useTools(provider);
  });
});
