import { createHash, randomBytes } from 'node:crypto';
import { createServer } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { afterAll } from 'vitest';
import { buildApp } from '../../src/app';
import { loadConfig } from '../../src/kernel/config';
import { createDb, type Db } from '../../src/kernel/db';
import type { Services } from '../../src/modules/context';
import { TEST_MASTER_KEY } from './app';
import { createTestDatabase } from './db';
import { createRestClient, type RestClient, type RestResponse } from './rest';

export const REDIRECT_URI = 'https://client.example.com/callback';
export const PASSWORD = 'correct horse battery staple';

export interface TestClient {
  client_id: string;
  client_secret: string | null;
}

export async function createOAuthClient(
  rest: RestClient,
  tenantId: string,
  data: { name?: string; redirect_uris?: string[]; scopes?: string[]; is_confidential?: boolean } = {},
): Promise<TestClient> {
  const response = await rest.post(`/api/admin/tenants/${tenantId}/oauth-clients`, {
    token: TEST_MASTER_KEY,
    body: {
      data: {
        name: data.name ?? 'Shop front',
        redirect_uris: data.redirect_uris ?? [REDIRECT_URI],
        scopes: data.scopes ?? ['proxies:read', 'proxies:write', 'openid'],
        is_confidential: data.is_confidential ?? true,
      },
    },
  });
  if (response.status !== 201) throw new Error(`client creation failed: ${JSON.stringify(response.body)}`);
  return response.body.data;
}

export async function createUser(
  rest: RestClient,
  tenantId: string,
  email: string,
  password = PASSWORD,
): Promise<{ id: string; email: string }> {
  const response = await rest.post(`/api/admin/tenants/${tenantId}/users`, {
    token: TEST_MASTER_KEY,
    body: { data: { email, password } },
  });
  if (response.status !== 201) throw new Error(`user creation failed: ${JSON.stringify(response.body)}`);
  return response.body.data;
}

export const basicAuth = (id: string, secret: string) =>
  `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString('base64')}`;

/** A PKCE verifier and its S256 challenge. */
export function pkce() {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

/** A `tools/list` of `/mcp` as a 2026-07-28 client sends it, with a bearer token. */
export const mcpToolsList = (app: FastifyInstance, token: string) =>
  app.inject({
    method: 'POST',
    url: '/mcp',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2026-07-28',
      'mcp-method': 'tools/list',
      authorization: `Bearer ${token}`,
    },
    payload: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/list',
      params: {
        _meta: {
          'io.modelcontextprotocol/protocolVersion': '2026-07-28',
          'io.modelcontextprotocol/clientInfo': { name: 'oauth-test', version: '1.0.0' },
          'io.modelcontextprotocol/clientCapabilities': {},
        },
      },
    }),
  });

/** POST /api/oauth/authorize as a JSON envelope (default) or as a form. */
export function tokenRequest(
  rest: RestClient,
  fields: Record<string, string | undefined>,
  options: { form?: boolean; authorization?: string; path?: string } = {},
): Promise<RestResponse> {
  const defined = Object.fromEntries(Object.entries(fields).filter(([, v]) => v !== undefined)) as Record<
    string,
    string
  >;
  const headers: Record<string, string> = options.authorization ? { authorization: options.authorization } : {};
  const path = options.path ?? '/api/oauth/authorize';
  if (options.form) {
    return rest.post(path, {
      rawBody: new URLSearchParams(defined).toString(),
      headers: { ...headers, 'content-type': 'application/x-www-form-urlencoded' },
    });
  }
  return rest.post(path, { body: { data: defined }, headers });
}

/**
 * A cookie jar over `app.inject`, as a browser would keep it for this service; it sends from
 * `remoteAddress` (inject's default is 127.0.0.1), to any process of the deployment (`app`).
 */
export class Browser {
  private readonly cookies = new Map<string, string>();

  constructor(
    private readonly app: FastifyInstance,
    private readonly remoteAddress?: string,
  ) {}

  get cookieHeader() {
    return [...this.cookies].map(([name, value]) => `${name}=${value}`).join('; ');
  }

  async request(method: 'GET' | 'POST', url: string, form?: Record<string, string>, app = this.app) {
    const response = await app.inject({
      method,
      url,
      remoteAddress: this.remoteAddress,
      headers: {
        ...(this.cookies.size > 0 ? { cookie: this.cookieHeader } : {}),
        ...(form ? { 'content-type': 'application/x-www-form-urlencoded' } : {}),
      },
      payload: form ? new URLSearchParams(form).toString() : undefined,
    });
    const setCookie = response.headers['set-cookie'];
    for (const cookie of Array.isArray(setCookie) ? setCookie : setCookie ? [setCookie] : []) {
      const [pair] = cookie.split(';');
      const eq = pair!.indexOf('=');
      this.cookies.set(pair!.slice(0, eq), pair!.slice(eq + 1));
    }
    return response;
  }

  /** The hidden CSRF token of the last page. */
  static csrf(html: string): string {
    const match = /name="csrf_token" value="([^"]+)"/.exec(html);
    if (!match) throw new Error(`no CSRF token in page: ${html.slice(0, 300)}`);
    return match[1]!;
  }
}

/**
 * Walks a user through the login and consent page of a session's `forward_uri` and returns the
 * redirect to the client (with `code` or `error`).
 */
export async function signInAndApprove(
  browser: Browser,
  forwardUri: string,
  email: string,
  password = PASSWORD,
  decision = 'approve',
) {
  const pagePath = new URL(forwardUri).pathname;
  let page = await browser.request('GET', pagePath);
  if (page.statusCode === 200 && page.body.includes('/login"')) {
    const login = await browser.request('POST', `${pagePath}/login`, {
      csrf_token: Browser.csrf(page.body),
      email,
      password,
    });
    if (login.statusCode !== 303) throw new Error(`login failed: ${login.statusCode} ${login.body.slice(0, 300)}`);
    page = await browser.request('GET', pagePath);
  }
  if (page.statusCode === 303) return new URL(page.headers.location as string);
  if (page.statusCode !== 200) throw new Error(`consent page failed: ${page.statusCode} ${page.body.slice(0, 300)}`);
  const consent = await browser.request('POST', `${pagePath}/consent`, {
    csrf_token: Browser.csrf(page.body),
    decision,
  });
  if (consent.statusCode !== 303)
    throw new Error(`consent failed: ${consent.statusCode} ${consent.body.slice(0, 300)}`);
  return new URL(consent.headers.location as string);
}

/** `GET /api/oauth/session/authorize` for a client (REDIRECT_URI, response_type code, and `params`). */
export function startAuthorization(rest: RestClient, client: TestClient, params: Record<string, string> = {}) {
  const query = new URLSearchParams({
    client_id: client.client_id,
    redirect_uri: REDIRECT_URI,
    response_type: 'code',
    ...params,
  });
  return rest.get(`/api/oauth/session/authorize?${query}`);
}

/**
 * A user's authorization code for a confidential client: the session started, the user signed in
 * and approved `scope` on the page.
 */
export async function authorizationCode(
  app: FastifyInstance,
  rest: RestClient,
  client: TestClient,
  email: string,
  scope: string,
  password = PASSWORD,
): Promise<string> {
  const session = await startAuthorization(rest, client, { scope });
  if (session.status !== 200) throw new Error(`authorization failed: ${session.rawBody}`);
  const callback = await signInAndApprove(new Browser(app), session.body.data.forward_uri, email, password);
  const code = callback.searchParams.get('code');
  if (!code) throw new Error(`no code in ${callback}`);
  return code;
}

/** A user's access and refresh token for a confidential client, through the authorization code flow. */
export async function userTokens(
  app: FastifyInstance,
  rest: RestClient,
  client: TestClient,
  email: string,
  scope: string,
): Promise<{ access_token: string; refresh_token: string }> {
  const code = await authorizationCode(app, rest, client, email, scope);
  const response = await tokenRequest(rest, {
    grant_type: 'authorization_code',
    code,
    redirect_uri: REDIRECT_URI,
    client_id: client.client_id,
    client_secret: client.client_secret!,
  });
  if (response.status !== 201) throw new Error(`code exchange failed: ${response.rawBody}`);
  return response.body.data;
}

/** An access token a confidential client obtains for itself (client_credentials). */
export async function clientToken(rest: RestClient, client: TestClient, scope?: string): Promise<string> {
  const response = await tokenRequest(rest, {
    grant_type: 'client_credentials',
    client_id: client.client_id,
    client_secret: client.client_secret!,
    scope,
  });
  if (response.status !== 201) throw new Error(`client_credentials failed: ${response.rawBody}`);
  return response.body.data.access_token;
}

/** A free TCP port on 127.0.0.1 right now. */
async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

export interface ListeningApp {
  app: FastifyInstance;
  services: Services;
  db: Db;
  databaseUrl: string;
  rest: RestClient;
  /** http://127.0.0.1:<port>: the issuer, and where its pages are. */
  origin: string;
}

/**
 * The whole application on a fresh database, listening on 127.0.0.1, for peers that talk real HTTP
 * (OAuth client libraries, Chromium). Its public base URL is the address it listens on, so that the
 * issuer and `forward_uri` point at it: the port is picked first, then the app is built for it.
 */
export async function startListeningApp(env: Record<string, string> = {}): Promise<ListeningApp> {
  const databaseUrl = await createTestDatabase();
  const db = createDb(databaseUrl, { poolSize: 5 });
  for (let attempt = 1; ; attempt += 1) {
    const port = await freePort();
    const origin = `http://127.0.0.1:${port}`;
    const config = loadConfig({
      ...env,
      DATABASE_URL: databaseUrl,
      MASTER_KEY: TEST_MASTER_KEY,
      LOG_LEVEL: 'silent',
      HOST: '127.0.0.1',
      PORT: String(port),
      PUBLIC_BASE_URL: origin,
    });
    const { app, services } = await buildApp({ config, db, masterKey: TEST_MASTER_KEY });
    try {
      await app.listen({ host: '127.0.0.1', port });
    } catch (error) {
      await app.close();
      // Another process took the port between the probe and the listen: try another one.
      if ((error as { code?: string }).code === 'EADDRINUSE' && attempt < 5) continue;
      throw error;
    }
    afterAll(async () => {
      await app.close();
      await db.$disconnect();
    });
    return { app, services, db, databaseUrl, rest: createRestClient(app), origin };
  }
}
