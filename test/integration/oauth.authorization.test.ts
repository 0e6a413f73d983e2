/**
 * The authorization code flow: `GET /api/oauth/session/authorize` (every 200, 302 and 400 rule),
 * the login and consent page behind `forward_uri` (driven here over HTTP with a cookie jar; the
 * same page in Chromium is test/browser/oauth-login.test.ts), the authorization_code grant with
 * PKCE, refresh token rotation, ID tokens, and a scan proving no secret is stored in plaintext.
 */
import { decodeJwt, decodeProtectedHeader } from 'jose';
import { beforeAll, describe, expect, it } from 'vitest';
import { createTenant, startTestApp, type Tenant } from '../helpers/app';
import { sql } from '../helpers/db';
import {
  basicAuth,
  Browser,
  createOAuthClient,
  createUser,
  PASSWORD,
  pkce,
  REDIRECT_URI,
  signInAndApprove,
  tokenRequest,
  type TestClient,
} from '../helpers/oauth';

const { rest, app, services, databaseUrl } = await startTestApp();

const AUTHORIZE = '/api/oauth/session/authorize';
const PROXIES = '/api/storage/edge/proxies';

let tenant: Tenant;
let otherTenant: Tenant;
let confidential: TestClient;
let publicClient: TestClient;
let user: { id: string; email: string };

/** Every secret handed out in this file: none may appear in the database. */
const secrets = new Set<string>();
const remember = <T extends string | null | undefined>(value: T): T => {
  if (value) secrets.add(value);
  return value;
};

beforeAll(async () => {
  tenant = await createTenant(rest, 'Acme');
  otherTenant = await createTenant(rest, 'Other');
  confidential = await createOAuthClient(rest, tenant.id, {
    name: 'Acme back office',
    scopes: ['proxies:read', 'proxies:write', 'openid'],
  });
  publicClient = await createOAuthClient(rest, tenant.id, {
    name: 'Acme app',
    is_confidential: false,
    scopes: ['proxies:read', 'openid'],
    redirect_uris: ['http://127.0.0.1:4999/callback', REDIRECT_URI],
  });
  remember(confidential.client_secret);
  user = await createUser(rest, tenant.id, 'Ada@Example.com');
  // The same address and password in another tenant: a different person.
  await createUser(rest, otherTenant.id, 'ada@example.com');
  remember(PASSWORD);
});

const sessionRows = async () =>
  Number((await sql<{ n: string }>(databaseUrl, 'SELECT count(*) AS n FROM oauth_authorization_sessions'))[0]!.n);
const codeRows = async () =>
  Number((await sql<{ n: string }>(databaseUrl, 'SELECT count(*) AS n FROM oauth_authorization_codes'))[0]!.n);

function authorizeUrl(c: TestClient, params: Record<string, string | undefined> = {}) {
  const query = new URLSearchParams({ client_id: c.client_id, redirect_uri: REDIRECT_URI, response_type: 'code' });
  for (const [name, value] of Object.entries(params)) {
    if (value === undefined) query.delete(name);
    else query.set(name, value);
  }
  return `${AUTHORIZE}?${query}`;
}

/** Starts a session and walks the page; returns the redirect to the client. */
async function authorizeInBrowser(
  browser: Browser,
  c: TestClient,
  params: Record<string, string | undefined> = {},
  decision = 'approve',
) {
  const session = await rest.get(authorizeUrl(c, params), { headers: { cookie: browser.cookieHeader } });
  expect(session.status).toBe(200);
  return signInAndApprove(browser, session.body.data.forward_uri, user.email, PASSWORD, decision);
}

async function obtainCode(c: TestClient, params: Record<string, string | undefined> = {}) {
  const redirect = await authorizeInBrowser(new Browser(app), c, params);
  return remember(redirect.searchParams.get('code')!);
}

const exchange = (c: TestClient, fields: Record<string, string | undefined>) =>
  tokenRequest(
    rest,
    { grant_type: 'authorization_code', redirect_uri: REDIRECT_URI, ...fields },
    c.client_secret ? { form: true, authorization: basicAuth(c.client_id, c.client_secret) } : { form: true },
  ).then((response) => {
    if (response.status === 200) {
      remember(response.body.access_token);
      remember(response.body.refresh_token);
      remember(response.body.id_token);
    }
    return response;
  });

const refresh = (c: TestClient, refreshToken: string, extra: Record<string, string> = {}) =>
  tokenRequest(
    rest,
    {
      grant_type: 'refresh_token',
      refresh_token: refreshToken,
      ...(c.client_secret ? {} : { client_id: c.client_id }),
      ...extra,
    },
    c.client_secret ? { form: true, authorization: basicAuth(c.client_id, c.client_secret) } : { form: true },
  ).then((response) => {
    if (response.status === 200) {
      remember(response.body.access_token);
      remember(response.body.refresh_token);
    }
    return response;
  });

function expectOAuthError(response: { status: number; body: any }, status: number, code: string) {
  expect(response.status).toBe(status);
  expect(response.body.error.message).toContain(`${code}: `);
}

describe('GET /api/oauth/session/authorize', () => {
  it('answers 200 with the session when the user must act', async () => {
    const before = await sessionRows();
    const response = await rest.get(
      authorizeUrl(confidential, { scope: 'openid proxies:read', state: 'xyz', nonce: 'n-1', tenant: tenant.id }),
    );
    expect(response.status).toBe(200);
    expect(response.headers['cache-control']).toBe('no-store');
    expect(response.body).toEqual({
      data: {
        forward_uri: expect.stringMatching(new RegExp(`^${services.oauth.issuer}/oauth/sessions/[A-Za-z0-9_-]{32}$`)),
        client_name: 'Acme back office',
        client_redirect_uri: REDIRECT_URI,
        scope: [
          { id: 'openid', description: expect.any(String) },
          { id: 'proxies:read', description: expect.any(String) },
        ],
        is_authorization_approved: false,
        is_id_token_issued: true,
        expires_in: 600,
      },
      page: null,
      meta: null,
    });
    expect(await sessionRows()).toBe(before + 1);
  });

  it('defaults to every scope of the client and issues no ID token without openid', async () => {
    const all = await rest.get(authorizeUrl(confidential));
    expect(all.body.data.scope.map((s: { id: string }) => s.id)).toEqual(['proxies:read', 'proxies:write', 'openid']);
    const noOpenId = await rest.get(authorizeUrl(confidential, { scope: 'proxies:read' }));
    expect(noOpenId.body.data.is_id_token_issued).toBe(false);
  });

  it('answers 400, never a redirect, for every invalid parameter, and stores nothing', async () => {
    const before = await sessionRows();
    const { challenge } = pkce();
    const cases: [Record<string, string | undefined>, TestClient, string][] = [
      [{ client_id: undefined }, confidential, 'invalid_request'],
      [{ client_id: 'unknown' }, confidential, 'invalid_request'],
      [{ client_id: '0190a5f4-0000-7000-8000-000000000000' }, confidential, 'invalid_request'],
      [{ redirect_uri: undefined }, confidential, 'invalid_request'],
      [{ redirect_uri: `${REDIRECT_URI}/` }, confidential, 'invalid_request'],
      [{ redirect_uri: `${REDIRECT_URI}?next=1` }, confidential, 'invalid_request'],
      [{ redirect_uri: 'https://evil.example.com/callback' }, confidential, 'invalid_request'],
      [{ redirect_uri: 'HTTPS://client.example.com/callback' }, confidential, 'invalid_request'],
      [{ response_type: undefined }, confidential, 'invalid_request'],
      [{ response_type: 'token' }, confidential, 'unsupported_response_type'],
      [{ scope: 'proxies:read inventory:write' }, confidential, 'invalid_scope'],
      [{ scope: 'nonsense' }, confidential, 'invalid_scope'],
      [{ tenant: otherTenant.id }, confidential, 'invalid_request'],
      [{}, publicClient, 'invalid_request'],
      [{ code_challenge: challenge, code_challenge_method: 'plain' }, publicClient, 'invalid_request'],
      [{ code_challenge: challenge }, publicClient, 'invalid_request'],
      [{ code_challenge: 'short', code_challenge_method: 'S256' }, publicClient, 'invalid_request'],
      [{ silent: 'yes' }, confidential, 'invalid_request'],
      [{ silent: 'true', redirect_uri: `${REDIRECT_URI}/` }, confidential, 'invalid_request'],
      [{ silent: 'true', client_id: 'unknown' }, confidential, 'invalid_request'],
    ];
    for (const [params, c, code] of cases) {
      const response = await rest.get(authorizeUrl(c, params));
      expect(response.status, JSON.stringify(params)).toBe(400);
      expect(response.headers.location).toBeUndefined();
      expect(response.body.error.message).toContain(`${code}: `);
    }
    const unknownParameter = await rest.get(`${authorizeUrl(confidential)}&prompt=none`);
    expect(unknownParameter.status).toBe(400);
    expect(await sessionRows()).toBe(before);
  });

  it('answers silent requests with a 302: login_required, consent_required, then a code', async () => {
    const browser = new Browser(app);
    const params = { silent: 'true', state: 's-1', scope: 'proxies:read' };
    const anonymous = await rest.get(authorizeUrl(confidential, params));
    expect(anonymous.status).toBe(302);
    expect(anonymous.rawBody).toBe('');
    const loginRequired = new URL(anonymous.headers.location!);
    expect(`${loginRequired.origin}${loginRequired.pathname}`).toBe(REDIRECT_URI);
    expect(Object.fromEntries(loginRequired.searchParams)).toEqual({
      error: 'login_required',
      state: 's-1',
      iss: services.oauth.issuer,
    });

    // Signed in (the page sets the cookie) but the user denies: still no consent.
    const denied = await authorizeInBrowser(browser, confidential, { scope: 'proxies:read', state: 's-0' }, 'deny');
    expect(Object.fromEntries(denied.searchParams)).toEqual({
      error: 'access_denied',
      state: 's-0',
      iss: services.oauth.issuer,
    });
    const consentRequired = await rest.get(authorizeUrl(confidential, params), {
      headers: { cookie: browser.cookieHeader },
    });
    expect(consentRequired.status).toBe(302);
    expect(new URL(consentRequired.headers.location!).searchParams.get('error')).toBe('consent_required');

    const approved = await authorizeInBrowser(browser, confidential, { scope: 'proxies:read proxies:write' });
    expect(approved.searchParams.get('code')).toBeTruthy();
    const before = await sessionRows();
    const silent = await rest.get(authorizeUrl(confidential, params), { headers: { cookie: browser.cookieHeader } });
    expect(silent.status).toBe(302);
    const redirect = new URL(silent.headers.location!);
    expect(redirect.searchParams.get('state')).toBe('s-1');
    const code = remember(redirect.searchParams.get('code')!);
    expect(await sessionRows()).toBe(before);
    const tokens = await exchange(confidential, { code });
    expect(tokens.status).toBe(200);
    expect(tokens.body.scope).toBe('proxies:read');

    // Approval covers what was approved, not more.
    const more = await rest.get(authorizeUrl(confidential, { ...params, scope: 'openid proxies:read' }), {
      headers: { cookie: browser.cookieHeader },
    });
    expect(new URL(more.headers.location!).searchParams.get('error')).toBe('consent_required');
    const notSilent = await rest.get(authorizeUrl(confidential, { scope: 'proxies:write' }), {
      headers: { cookie: browser.cookieHeader },
    });
    expect(notSilent.status).toBe(200);
    expect(notSilent.body.data.is_authorization_approved).toBe(true);
  });

  it('does not take a login cookie of another tenant, or a forged one', async () => {
    const foreignClient = await createOAuthClient(rest, otherTenant.id, { scopes: ['proxies:read'] });
    const browser = new Browser(app);
    await authorizeInBrowser(browser, confidential, { scope: 'proxies:read' });
    const foreign = await rest.get(authorizeUrl(foreignClient, { silent: 'true' }), {
      headers: { cookie: browser.cookieHeader },
    });
    expect(new URL(foreign.headers.location!).searchParams.get('error')).toBe('login_required');
    const forgedCookie = browser.cookieHeader.replace(
      /cp_oauth_login=([^.]+)/,
      'cp_oauth_login=0190a5f4-0000-7000-8000-000000000000',
    );
    const forged = await rest.get(authorizeUrl(confidential, { silent: 'true', scope: 'proxies:read' }), {
      headers: { cookie: forgedCookie },
    });
    expect(new URL(forged.headers.location!).searchParams.get('error')).toBe('login_required');
  });
});

describe('login and consent page', () => {
  it('signs in, shows the client and scopes, and redirects with code, state and iss', async () => {
    const browser = new Browser(app);
    const session = await rest.get(
      authorizeUrl(confidential, { scope: 'proxies:read openid', state: 'st', nonce: 'nn' }),
    );
    const path = new URL(session.body.data.forward_uri).pathname;

    const login = await browser.request('GET', path);
    expect(login.statusCode).toBe(200);
    expect(login.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(login.headers['cache-control']).toBe('no-store');
    expect(login.headers['x-frame-options']).toBe('DENY');
    expect(login.headers['content-security-policy']).toContain("frame-ancestors 'none'");
    expect(login.body).toContain('Acme back office');
    const csrf = Browser.csrf(login.body);

    const wrong = await browser.request('POST', `${path}/login`, {
      csrf_token: csrf,
      email: user.email,
      password: 'not the password',
    });
    expect(wrong.statusCode).toBe(401);
    expect(wrong.body).toContain('Wrong e-mail address or password.');
    expect(wrong.headers['set-cookie']).toBeUndefined();

    const right = await browser.request('POST', `${path}/login`, {
      csrf_token: Browser.csrf(wrong.body),
      email: 'ADA@example.com',
      password: PASSWORD,
    });
    expect(right.statusCode).toBe(303);
    expect(right.headers.location).toBe(path);
    expect(String(right.headers['set-cookie'])).toMatch(
      /^cp_oauth_login=.*; Path=\/; Max-Age=43200; HttpOnly; SameSite=Lax$/,
    );

    const consent = await browser.request('GET', path);
    expect(consent.statusCode).toBe(200);
    expect(consent.body).toContain('Acme back office wants to access your account');
    expect(consent.body).toContain('<code>proxies:read</code>');
    expect(consent.body).toContain('<code>openid</code>');
    expect(consent.body).toContain('ada@example.com');
    expect(consent.headers['content-security-policy']).toContain("form-action 'self' https://client.example.com");

    const approved = await browser.request('POST', `${path}/consent`, {
      csrf_token: Browser.csrf(consent.body),
      decision: 'approve',
    });
    expect(approved.statusCode).toBe(303);
    const redirect = new URL(approved.headers.location as string);
    expect(`${redirect.origin}${redirect.pathname}`).toBe(REDIRECT_URI);
    expect(redirect.searchParams.get('state')).toBe('st');
    expect(redirect.searchParams.get('iss')).toBe(services.oauth.issuer);
    expect(redirect.searchParams.get('code')).toMatch(/^[A-Za-z0-9_-]{43}$/);
    remember(redirect.searchParams.get('code'));

    const again = await browser.request('GET', path);
    expect(again.statusCode).toBe(400);
    expect(again.body).toContain('already been used');
  });

  it('refuses forms without the CSRF token of this session and this browser, and changes nothing', async () => {
    const session = await rest.get(authorizeUrl(confidential, { scope: 'proxies:read' }));
    const path = new URL(session.body.data.forward_uri).pathname;
    const victim = new Browser(app);
    const page = await victim.request('GET', path);
    const attacker = new Browser(app);
    await attacker.request('GET', path);

    const none = await attacker.request('POST', `${path}/login`, { email: user.email, password: PASSWORD });
    expect(none.statusCode).toBe(403);
    const foreign = await attacker.request('POST', `${path}/login`, {
      csrf_token: Browser.csrf(page.body),
      email: user.email,
      password: PASSWORD,
    });
    expect(foreign.statusCode).toBe(403);
    expect(foreign.headers['set-cookie']).toBeUndefined();

    const other = await rest.get(authorizeUrl(confidential, { scope: 'proxies:read' }));
    const otherPage = await victim.request('GET', new URL(other.body.data.forward_uri).pathname);
    const crossSession = await victim.request('POST', `${path}/login`, {
      csrf_token: Browser.csrf(otherPage.body),
      email: user.email,
      password: PASSWORD,
    });
    expect(crossSession.statusCode).toBe(403);

    const codes = await codeRows();
    const consent = await victim.request('POST', `${path}/consent`, { csrf_token: 'x', decision: 'approve' });
    expect(consent.statusCode).toBe(403);
    expect(await codeRows()).toBe(codes);
  });

  it('GET /oauth/authorize (the browser-facing endpoint) redirects to the page, and shows invalid requests as a 400 page', async () => {
    const valid = authorizeUrl(confidential, { scope: 'proxies:read', state: 'q' }).replace(
      AUTHORIZE,
      '/oauth/authorize',
    );
    const start = await app.inject({ method: 'GET', url: valid });
    expect(start.statusCode).toBe(302);
    expect(start.headers.location).toMatch(new RegExp(`^${services.oauth.issuer}/oauth/sessions/`));

    const before = await sessionRows();
    for (const url of [
      authorizeUrl(confidential, { redirect_uri: `${REDIRECT_URI}/` }),
      authorizeUrl(confidential, { client_id: 'unknown', silent: 'true' }),
      `${authorizeUrl(confidential)}&scope=a&scope=b`,
    ]) {
      const response = await app.inject({ method: 'GET', url: url.replace(AUTHORIZE, '/oauth/authorize') });
      expect(response.statusCode, url).toBe(400);
      expect(response.headers.location).toBeUndefined();
      expect(response.headers['content-type']).toBe('text/html; charset=utf-8');
      expect(response.body).toContain('invalid_request');
    }
    expect(await sessionRows()).toBe(before);
  });

  it('keeps users of other tenants out, and unknown sessions show an error page', async () => {
    const foreignClient = await createOAuthClient(rest, otherTenant.id, { scopes: ['proxies:read'] });
    const browser = new Browser(app);
    const session = await rest.get(authorizeUrl(foreignClient, {}));
    // ada@example.com of tenant Acme signs in on the Other tenant's page: that is Other's ada, with
    // her own password (the same here), so she becomes Other's user, not Acme's.
    const redirect = await signInAndApprove(browser, session.body.data.forward_uri, user.email);
    const tokens = await tokenRequest(
      rest,
      { grant_type: 'authorization_code', code: redirect.searchParams.get('code')!, redirect_uri: REDIRECT_URI },
      { form: true, authorization: basicAuth(foreignClient.client_id, foreignClient.client_secret!) },
    );
    expect(tokens.status).toBe(200);
    expect(decodeJwt(tokens.body.access_token)).toMatchObject({ tenant_id: otherTenant.id });
    expect(decodeJwt(tokens.body.access_token).sub).not.toBe(user.id);

    const missing = await browser.request('GET', '/oauth/sessions/nope');
    expect(missing.statusCode).toBe(400);
    expect(missing.body).toContain('does not exist');
  });
});

describe('authorization_code grant', () => {
  it('exchanges a code with PKCE for an access token, a refresh token and an ID token with the nonce', async () => {
    const { verifier, challenge } = pkce();
    const code = await obtainCode(confidential, {
      scope: 'openid proxies:read',
      nonce: 'nonce-123',
      code_challenge: challenge,
      code_challenge_method: 'S256',
    });
    const response = await exchange(confidential, { code, code_verifier: verifier });
    expect(response.status).toBe(200);
    expect(response.headers['cache-control']).toBe('no-store');
    expect(response.body).toEqual({
      token_type: 'Bearer',
      expires_in: 3600,
      access_token: expect.any(String),
      refresh_token: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
      scope: 'openid proxies:read',
      id_token: expect.any(String),
    });
    expect(decodeJwt(response.body.access_token)).toMatchObject({
      sub: user.id,
      user_id: user.id,
      client_id: confidential.client_id,
      tenant_id: tenant.id,
    });
    expect(decodeProtectedHeader(response.body.id_token)).toMatchObject({ alg: 'ES256', typ: 'JWT' });
    expect(decodeJwt(response.body.id_token)).toMatchObject({
      iss: services.oauth.issuer,
      aud: confidential.client_id,
      sub: user.id,
      nonce: 'nonce-123',
      email: 'ada@example.com',
    });

    expect((await rest.get(PROXIES, { token: response.body.access_token })).status).toBe(200);
    // An ID token is not an access token.
    expect((await rest.get(PROXIES, { token: response.body.id_token })).status).toBe(401);
  });

  it('lets browser apps on other origins call the token endpoint (CORS, no credentials)', async () => {
    const preflight = await app.inject({
      method: 'OPTIONS',
      url: '/api/oauth/authorize',
      headers: {
        origin: 'https://app.example.com',
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'content-type',
      },
    });
    expect(preflight.statusCode).toBe(204);
    expect(preflight.headers['access-control-allow-origin']).toBe('*');
    expect(String(preflight.headers['access-control-allow-methods'])).toContain('POST');
    const denied = await tokenRequest(
      rest,
      { grant_type: 'authorization_code', client_id: publicClient.client_id, code: 'x', redirect_uri: REDIRECT_URI },
      { form: true },
    );
    expect(denied.status).toBe(400);
    expect(denied.headers['access-control-allow-origin']).toBe('*');
  });

  it('serves a public client (client_id in the body, S256 required) and answers JSON with the envelope', async () => {
    const { verifier, challenge } = pkce();
    const code = await obtainCode(publicClient, {
      scope: 'proxies:read',
      code_challenge: challenge,
      code_challenge_method: 'S256',
    });
    const response = await tokenRequest(rest, {
      grant_type: 'authorization_code',
      client_id: publicClient.client_id,
      code,
      redirect_uri: REDIRECT_URI,
      code_verifier: verifier,
    });
    expect(response.status).toBe(201);
    expect(response.body.data).toMatchObject({
      token_type: 'Bearer',
      scope: 'proxies:read',
      refresh_token: expect.any(String),
    });
    remember(response.body.data.access_token);
    remember(response.body.data.refresh_token);
  });

  it('refuses a wrong verifier, a missing one, one without challenge, a malformed one, and keeps the code usable', async () => {
    const { verifier, challenge } = pkce();
    const code = await obtainCode(confidential, {
      scope: 'proxies:read',
      code_challenge: challenge,
      code_challenge_method: 'S256',
    });
    expectOAuthError(await exchange(confidential, { code, code_verifier: pkce().verifier }), 400, 'invalid_grant');
    expectOAuthError(await exchange(confidential, { code }), 400, 'invalid_grant');
    expectOAuthError(await exchange(confidential, { code, code_verifier: 'short' }), 400, 'invalid_request');
    expect((await exchange(confidential, { code, code_verifier: verifier })).status).toBe(200);

    const withoutChallenge = await obtainCode(confidential, { scope: 'proxies:read' });
    const response = await exchange(confidential, { code: withoutChallenge, code_verifier: pkce().verifier });
    expectOAuthError(response, 400, 'invalid_grant');
    expect(response.body.error.message).toContain('no code_challenge');
  });

  it('refuses a redirect_uri that differs by a trailing slash or a query string', async () => {
    const code = await obtainCode(confidential, { scope: 'proxies:read' });
    expectOAuthError(await exchange(confidential, { code, redirect_uri: `${REDIRECT_URI}/` }), 400, 'invalid_grant');
    expectOAuthError(await exchange(confidential, { code, redirect_uri: `${REDIRECT_URI}?a=1` }), 400, 'invalid_grant');
    expectOAuthError(await exchange(confidential, { code, redirect_uri: undefined }), 400, 'invalid_request');
    expect((await exchange(confidential, { code })).status).toBe(200);
  });

  it('revokes the tokens issued from a code when the code is replayed', async () => {
    const code = await obtainCode(confidential, { scope: 'proxies:read' });
    const first = await exchange(confidential, { code });
    expect(first.status).toBe(200);
    expect((await rest.get(PROXIES, { token: first.body.access_token })).status).toBe(200);

    const replay = await exchange(confidential, { code });
    expectOAuthError(replay, 400, 'invalid_grant');
    expect(replay.body.error.message).toContain('already used');
    expect((await rest.get(PROXIES, { token: first.body.access_token })).status).toBe(401);
    expectOAuthError(await refresh(confidential, first.body.refresh_token), 400, 'invalid_grant');
  });

  it('lets one of two simultaneous exchanges of a code win, and revokes what it got', async () => {
    const code = await obtainCode(confidential, { scope: 'proxies:read' });
    const results = await Promise.all([exchange(confidential, { code }), exchange(confidential, { code })]);
    expect(results.map((r) => r.status).sort()).toEqual([200, 400]);
    const winner = results.find((r) => r.status === 200)!;
    expect((await rest.get(PROXIES, { token: winner.body.access_token })).status).toBe(401);
  });

  it('refuses a code of another client, an unknown code and an expired code', async () => {
    const other = await createOAuthClient(rest, tenant.id, { scopes: ['proxies:read'] });
    const code = await obtainCode(confidential, { scope: 'proxies:read' });
    expectOAuthError(await exchange(other, { code }), 400, 'invalid_grant');
    expectOAuthError(await exchange(confidential, { code: 'unknown' }), 400, 'invalid_grant');
    await sql(
      databaseUrl,
      "UPDATE oauth_authorization_codes SET expires_at = now() - interval '1 second' WHERE consumed_at IS NULL",
    );
    const expired = await exchange(confidential, { code });
    expectOAuthError(expired, 400, 'invalid_grant');
    expect(expired.body.error.message).toContain('expired');
  });
});

describe('refresh_token grant', () => {
  async function tokensFor(c: TestClient, scope = 'proxies:read proxies:write') {
    const { verifier, challenge } = pkce();
    const code = await obtainCode(c, { scope, code_challenge: challenge, code_challenge_method: 'S256' });
    const response = await exchange(c, {
      code,
      code_verifier: verifier,
      ...(c.client_secret ? {} : { client_id: c.client_id }),
    });
    expect(response.status).toBe(200);
    return response.body as { access_token: string; refresh_token: string };
  }

  it('rotates: each refresh token works once and yields a new pair', async () => {
    const first = await tokensFor(confidential);
    const second = await refresh(confidential, first.refresh_token);
    expect(second.status).toBe(200);
    expect(second.body.refresh_token).not.toBe(first.refresh_token);
    expect(second.body.scope).toBe('proxies:read proxies:write');
    expect(decodeJwt(second.body.access_token).sid).toBe(decodeJwt(first.access_token).sid);
    const third = await refresh(confidential, second.body.refresh_token, { scope: 'proxies:read' });
    expect(third.status).toBe(200);
    expect(third.body.scope).toBe('proxies:read');
    expectOAuthError(await refresh(confidential, third.body.refresh_token, { scope: 'openid' }), 400, 'invalid_scope');
  });

  it('revokes the whole family when a rotated refresh token is used again', async () => {
    const first = await tokensFor(publicClient, 'proxies:read');
    const second = await refresh(publicClient, first.refresh_token);
    expect(second.status).toBe(200);
    expect((await rest.get(PROXIES, { token: second.body.access_token })).status).toBe(200);

    // Past the grace window after its rotation (the default 30 s; moved back here).
    await sql(databaseUrl, "UPDATE oauth_refresh_tokens SET rotated_at = rotated_at - interval '31 seconds'");
    const reuse = await refresh(publicClient, first.refresh_token);
    expectOAuthError(reuse, 400, 'invalid_grant');
    expect(reuse.body.error.message).toContain('already used');
    expectOAuthError(await refresh(publicClient, second.body.refresh_token), 400, 'invalid_grant');
    expect((await rest.get(PROXIES, { token: second.body.access_token })).status).toBe(401);
    expect((await rest.get(PROXIES, { token: first.access_token })).status).toBe(401);
  });

  it('answers two simultaneous refreshes with one token within the grace window: each gets a working pair', async () => {
    const tokens = await tokensFor(confidential);
    const results = await Promise.all([
      refresh(confidential, tokens.refresh_token),
      refresh(confidential, tokens.refresh_token),
    ]);
    expect(results.map((r) => r.status)).toEqual([200, 200]);
    expect(results[0]!.body.refresh_token).not.toBe(results[1]!.body.refresh_token);
    for (const result of results) {
      expect((await rest.get(PROXIES, { token: result.body.access_token })).status).toBe(200);
      expect((await refresh(confidential, result.body.refresh_token)).status).toBe(200);
    }
  });

  it("refuses another client's refresh token, an unknown one, and none", async () => {
    const tokens = await tokensFor(confidential);
    const other = await createOAuthClient(rest, tenant.id, { scopes: ['proxies:read'] });
    expectOAuthError(await refresh(other, tokens.refresh_token), 400, 'invalid_grant');
    expectOAuthError(await refresh(confidential, 'unknown'), 400, 'invalid_grant');
    expectOAuthError(
      await tokenRequest(
        rest,
        { grant_type: 'refresh_token' },
        { form: true, authorization: basicAuth(confidential.client_id, confidential.client_secret!) },
      ),
      400,
      'invalid_request',
    );
    // The legitimate client still refreshes: the failed attempts did not consume the token.
    expect((await refresh(confidential, tokens.refresh_token)).status).toBe(200);
  });

  it('revoking a refresh token (RFC 7009) revokes its grant', async () => {
    const tokens = await tokensFor(confidential);
    const revoked = await tokenRequest(
      rest,
      { token: tokens.refresh_token, token_type_hint: 'refresh_token' },
      {
        form: true,
        authorization: basicAuth(confidential.client_id, confidential.client_secret!),
        path: '/api/oauth/revoke',
      },
    );
    expect(revoked.status).toBe(200);
    expectOAuthError(await refresh(confidential, tokens.refresh_token), 400, 'invalid_grant');
    expect((await rest.get(PROXIES, { token: tokens.access_token })).status).toBe(401);
  });
});

describe('storage', () => {
  it('holds no client secret, password, code or token in plaintext anywhere in the database', async () => {
    expect(secrets.size).toBeGreaterThan(20);
    const tables = await sql<{ table_name: string }>(
      databaseUrl,
      "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' AND table_type = 'BASE TABLE'",
    );
    let rows = 0;
    for (const { table_name } of tables) {
      const dump = await sql<{ row: string }>(databaseUrl, `SELECT to_jsonb(t)::text AS row FROM "${table_name}" t`);
      rows += dump.length;
      for (const { row } of dump) {
        for (const secret of secrets) expect(row.includes(secret), `${table_name} holds a secret`).toBe(false);
      }
    }
    expect(rows).toBeGreaterThan(50);
    const users = await sql<{ password_hash: string }>(databaseUrl, 'SELECT password_hash FROM users');
    for (const { password_hash } of users)
      expect(password_hash).toMatch(/^scrypt\$15\$8\$1\$[A-Za-z0-9_-]{22}\$[A-Za-z0-9_-]{43}$/);
    expect(new Set(users.map((u) => u.password_hash)).size).toBe(users.length);
    const keys = await sql<{ private_key_encrypted: Buffer; public_jwk: Record<string, unknown> }>(
      databaseUrl,
      'SELECT * FROM oauth_signing_keys',
    );
    expect(keys).toHaveLength(1);
    expect(keys[0]!.public_jwk).not.toHaveProperty('d');
    expect(keys[0]!.private_key_encrypted.toString('utf8')).not.toContain('"d"');
  });
});
