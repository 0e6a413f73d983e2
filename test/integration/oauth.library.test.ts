/**
 * A standard OAuth client library (oauth4webapi) against the service over real HTTP on 127.0.0.1:
 * discovery (RFC 8414), client_credentials, authorization_code with PKCE and an ID token, refresh,
 * introspection and revocation. The user's part of the authorization (the login and consent page)
 * is played by a cookie-keeping HTTP client here, and by Chromium in test/browser. Also the
 * admin command's client:create and user:create against the same listening service.
 */
import * as oauth from 'oauth4webapi';
import { beforeAll, describe, expect, it } from 'vitest';
import { runAdmin } from '../helpers/admin-cli';
import { createTenant, type Tenant } from '../helpers/app';
import {
  Browser,
  createOAuthClient,
  createUser,
  signInAndApprove,
  startListeningApp,
  type TestClient,
} from '../helpers/oauth';

const { rest, app, origin } = await startListeningApp();
const http = { [oauth.allowInsecureRequests]: true };
const CALLBACK = 'http://127.0.0.1:4999/callback';

let tenant: Tenant;
let confidential: TestClient;
let publicClient: TestClient;
let user: { id: string; email: string };
let as: oauth.AuthorizationServer;

beforeAll(async () => {
  tenant = await createTenant(rest, 'Acme');
  confidential = await createOAuthClient(rest, tenant.id, {
    scopes: ['proxies:read', 'proxies:write'],
    redirect_uris: [CALLBACK],
  });
  publicClient = await createOAuthClient(rest, tenant.id, {
    is_confidential: false,
    scopes: ['proxies:read', 'openid'],
    redirect_uris: [CALLBACK],
  });
  user = await createUser(rest, tenant.id, 'lin@example.com');
  const issuer = new URL(origin);
  as = await oauth.processDiscoveryResponse(
    issuer,
    await oauth.discoveryRequest(issuer, { algorithm: 'oauth2', ...http }),
  );
});

const callApi = (accessToken: string) =>
  fetch(`${origin}/api/storage/edge/proxies`, { headers: { authorization: `Bearer ${accessToken}` } });

describe('oauth4webapi', () => {
  it('discovers the server', () => {
    expect(as.issuer).toBe(origin);
    expect(as.token_endpoint).toBe(`${origin}/api/oauth/authorize`);
  });

  it('obtains a token with client_credentials (HTTP Basic) and calls the API with it', async () => {
    const client = { client_id: confidential.client_id };
    const response = await oauth.clientCredentialsGrantRequest(
      as,
      client,
      oauth.ClientSecretBasic(confidential.client_secret!),
      new URLSearchParams({ scope: 'proxies:read' }),
      http,
    );
    const tokens = await oauth.processClientCredentialsResponse(as, client, response);
    expect(tokens.token_type).toBe('bearer');
    expect(tokens.scope).toBe('proxies:read');
    expect(tokens.expires_in).toBe(3600);
    expect((await callApi(tokens.access_token)).status).toBe(200);

    const introspection = await oauth.processIntrospectionResponse(
      as,
      client,
      await oauth.introspectionRequest(
        as,
        client,
        oauth.ClientSecretPost(confidential.client_secret!),
        tokens.access_token,
        http,
      ),
    );
    expect(introspection).toMatchObject({ active: true, client_id: confidential.client_id, scope: 'proxies:read' });
  });

  it('obtains tokens with authorization_code + PKCE (public client), validates the ID token, refreshes and revokes', async () => {
    const client = { client_id: publicClient.client_id };
    const verifier = oauth.generateRandomCodeVerifier();
    const state = oauth.generateRandomState();
    const nonce = oauth.generateRandomNonce();
    const authorizationUrl = new URL(as.authorization_endpoint!);
    for (const [name, value] of Object.entries({
      client_id: client.client_id,
      redirect_uri: CALLBACK,
      response_type: 'code',
      scope: 'openid proxies:read',
      code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
      state,
      nonce,
    })) {
      authorizationUrl.searchParams.set(name, value);
    }

    // The user agent: the authorization endpoint sends it to the login page, which ends at the callback.
    const browser = new Browser(app);
    const start = await browser.request('GET', `${authorizationUrl.pathname}${authorizationUrl.search}`);
    expect(start.statusCode).toBe(302);
    const callback = await signInAndApprove(browser, start.headers.location as string, user.email);

    const parameters = oauth.validateAuthResponse(as, client, callback, state);
    const response = await oauth.authorizationCodeGrantRequest(
      as,
      client,
      oauth.None(),
      parameters,
      CALLBACK,
      verifier,
      http,
    );
    const tokens = await oauth.processAuthorizationCodeResponse(as, client, response, {
      expectedNonce: nonce,
      requireIdToken: true,
    });
    expect(tokens.scope).toBe('openid proxies:read');
    expect(oauth.getValidatedIdTokenClaims(tokens)).toMatchObject({
      sub: user.id,
      aud: client.client_id,
      iss: origin,
      nonce,
    });
    expect((await callApi(tokens.access_token)).status).toBe(200);

    const refreshed = await oauth.processRefreshTokenResponse(
      as,
      client,
      await oauth.refreshTokenGrantRequest(as, client, oauth.None(), tokens.refresh_token!, http),
    );
    expect(refreshed.refresh_token).not.toBe(tokens.refresh_token);
    expect((await callApi(refreshed.access_token)).status).toBe(200);

    await oauth.processRevocationResponse(
      await oauth.revocationRequest(as, client, oauth.None(), refreshed.refresh_token!, http),
    );
    expect((await callApi(refreshed.access_token)).status).toBe(401);
  });
});

describe('npm run admin -- client:create / user:create', () => {
  /** The admin command against this test's service. */
  const admin = (args: string[], stdin = '') => runAdmin(origin, args, stdin);

  it('registers a client and a user (password from stdin) that then sign in', async () => {
    const created = await admin([
      'client:create',
      '--tenant',
      tenant.id,
      '--name',
      'From the terminal',
      '--redirect-uris',
      `${CALLBACK},https://app.example.com/cb`,
      '--scopes',
      'proxies:read,openid',
    ]);
    expect(created.status, created.stderr).toBe(0);
    const client = JSON.parse(created.stdout).data;
    expect(client).toMatchObject({
      name: 'From the terminal',
      redirect_uris: [CALLBACK, 'https://app.example.com/cb'],
      scopes: ['proxies:read', 'openid'],
      is_confidential: true,
    });
    expect(client.client_secret).toMatch(/^cps_/);

    const publicCreated = await admin([
      'client:create',
      '--tenant',
      tenant.id,
      '--name',
      'App',
      '--redirect-uris',
      CALLBACK,
      '--scopes',
      'proxies:read',
      '--public',
    ]);
    expect(JSON.parse(publicCreated.stdout).data).toMatchObject({ is_confidential: false, client_secret: null });

    const userCreated = await admin(
      ['user:create', '--tenant', tenant.id, '--email', 'Terminal@Example.com'],
      'typed on stdin 123\n',
    );
    expect(userCreated.status, userCreated.stderr).toBe(0);
    expect(JSON.parse(userCreated.stdout).data.email).toBe('terminal@example.com');

    const browser = new Browser(app);
    const session = await rest.get(
      `/api/oauth/session/authorize?${new URLSearchParams({ client_id: client.client_id, redirect_uri: CALLBACK, response_type: 'code', scope: 'proxies:read' })}`,
    );
    const callback = await signInAndApprove(
      browser,
      session.body.data.forward_uri,
      'terminal@example.com',
      'typed on stdin 123',
    );
    expect(callback.searchParams.get('code')).toBeTruthy();

    const refused = await admin([
      'client:create',
      '--tenant',
      tenant.id,
      '--name',
      'Bad',
      '--redirect-uris',
      'http://example.com/cb',
      '--scopes',
      'proxies:read',
    ]);
    expect(refused.status).toBe(1);
    expect(JSON.parse(refused.stdout).error.code).toBe(400);
  });
});
