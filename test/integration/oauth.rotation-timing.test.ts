/**
 * The timing of two rotations across the processes of a deployment: a refresh token presented
 * again within the grace window after its rotation answers like the first time (two tabs, a retry
 * after a lost answer) and revokes its family after it; a rotated-in signing key is published in
 * the JWKS before it signs, so a verifier holding a JWKS fetched before the rotation verifies the
 * tokens issued after it.
 */
import { createHash, randomBytes } from 'node:crypto';
import { createLocalJWKSet, decodeProtectedHeader, jwtVerify, type JSONWebKeySet } from 'jose';
import { beforeAll, describe, expect, it } from 'vitest';
import { createTenant, startTestApp, TEST_MASTER_KEY, type Tenant } from '../helpers/app';
import { sql } from '../helpers/db';
import { basicAuth, createOAuthClient, createUser, tokenRequest, type TestClient } from '../helpers/oauth';

const t = await startTestApp();
/** A second process of the same deployment, on the same database. */
const other = await startTestApp({ databaseUrl: t.databaseUrl });
/** A process whose JWKS lifetime, and so the wait before a new key signs, is one second. */
const quick = await startTestApp({ databaseUrl: t.databaseUrl, env: { OAUTH_JWKS_MAX_AGE_SECONDS: '1' } });
let tenant: Tenant;
let client: TestClient;
let userId: string;

beforeAll(async () => {
  tenant = await createTenant(t.rest, 'Acme');
  client = await createOAuthClient(t.rest, tenant.id);
  userId = (await createUser(t.rest, tenant.id, 'ada@example.com')).id;
});

/** A refresh token of a fresh authorization-code grant of the user, as the token endpoint would have issued. */
async function grantedRefreshToken() {
  const grantId = `0195f7a0-0000-7000-8000-${randomBytes(6).toString('hex')}`;
  const token = randomBytes(32).toString('base64url');
  await sql(
    t.databaseUrl,
    `INSERT INTO oauth_grants (id, client_id, user_id, grant_type, scopes)
     VALUES ($1, $2, $3, 'authorization_code', '{proxies:read}')`,
    [grantId, client.client_id, userId],
  );
  await sql(
    t.databaseUrl,
    `INSERT INTO oauth_refresh_tokens (token_hash, grant_id, expires_at) VALUES ($1, $2, now() + interval '1 day')`,
    [createHash('sha256').update(token).digest(), grantId],
  );
  return token;
}

const refresh = (app: typeof t, refreshToken: string) =>
  tokenRequest(
    app.rest,
    { grant_type: 'refresh_token', refresh_token: refreshToken },
    { form: true, authorization: basicAuth(client.client_id, client.client_secret!) },
  );

const listProxies = (app: typeof t, token: string) => app.rest.get('/api/storage/edge/proxies', { token });

describe('refresh token grace window', () => {
  it('answers five concurrent refreshes with one token across two processes, each with a working pair', async () => {
    const token = await grantedRefreshToken();
    const answers = await Promise.all([t, other, t, other, t].map((app) => refresh(app, token)));
    expect(answers.map((answer) => answer.status)).toEqual([200, 200, 200, 200, 200]);
    const pairs = answers.map((answer) => answer.body as { access_token: string; refresh_token: string });
    expect(new Set(pairs.map((pair) => pair.refresh_token)).size).toBe(5);
    // Every pair works in both processes: its access token authenticates, its refresh token refreshes once.
    for (const [index, pair] of pairs.entries()) {
      expect((await listProxies(index % 2 ? t : other, pair.access_token)).status).toBe(200);
      expect((await refresh(index % 2 ? other : t, pair.refresh_token)).status).toBe(200);
    }
    const grants = await sql(t.databaseUrl, 'SELECT revoked_at FROM oauth_grants WHERE revoked_at IS NOT NULL');
    expect(grants).toEqual([]);
  });

  it('revokes the whole family when the rotated token comes back after the window, in every process', async () => {
    const token = await grantedRefreshToken();
    const first = await refresh(t, token);
    expect(first.status).toBe(200);
    // The window (30 s by default) has passed: moved back in the database.
    await sql(t.databaseUrl, "UPDATE oauth_refresh_tokens SET rotated_at = rotated_at - interval '31 seconds'");
    const reuse = await refresh(other, token);
    expect(reuse.status).toBe(400);
    expect(JSON.stringify(reuse.body)).toContain('already used');
    expect((await refresh(t, first.body.refresh_token)).status).toBe(400);
    for (const app of [t, other]) expect((await listProxies(app, first.body.access_token)).status).toBe(401);
  });

  it('does not extend the window by reuse: it runs from the first rotation', async () => {
    const token = await grantedRefreshToken();
    expect((await refresh(t, token)).status).toBe(200);
    await sql(t.databaseUrl, "UPDATE oauth_refresh_tokens SET rotated_at = rotated_at - interval '20 seconds'");
    expect((await refresh(other, token)).status).toBe(200);
    await sql(t.databaseUrl, "UPDATE oauth_refresh_tokens SET rotated_at = rotated_at - interval '11 seconds'");
    expect((await refresh(t, token)).status).toBe(400);
  });
});

describe('signing keys published before they sign', () => {
  const jwks = async (app: typeof t) => {
    const response = await app.app.inject({ method: 'GET', url: '/.well-known/jwks.json' });
    expect(response.headers['cache-control']).toBe('public, max-age=300');
    return response.json() as JSONWebKeySet;
  };
  const accessToken = async (app: typeof t) => {
    const response = await tokenRequest(
      app.rest,
      { grant_type: 'client_credentials', scope: 'proxies:read' },
      { authorization: basicAuth(client.client_id, client.client_secret!) },
    );
    expect(response.status).toBe(201);
    return response.body.data.access_token as string;
  };

  it('publishes the new key at once, signs with it after the JWKS lifetime, and a cached JWKS verifies meanwhile', async () => {
    const before = await accessToken(t);
    const oldKid = decodeProtectedHeader(before).kid!;
    // A verifier fetches and caches the JWKS (for up to its max-age of 300 s).
    const cachedBeforeRotation = createLocalJWKSet(await jwks(t));

    const started = Date.now();
    const rotation = await t.rest.post('/api/admin/oauth/signing-keys', { token: TEST_MASTER_KEY });
    expect(rotation.status).toBe(201);
    const { kid, signs_from, retiring } = rotation.body.data;
    expect(Date.parse(signs_from)).toBeGreaterThanOrEqual(started + 300_000 - 1000);
    expect(retiring.map((key: { kid: string }) => key.kid)).toEqual([oldKid]);
    for (const app of [t, other]) {
      expect((await jwks(app)).keys.map((key) => key.kid)).toEqual(expect.arrayContaining([oldKid, kid]));
      // Tokens issued after the rotation are still signed with the old key, which the cached JWKS knows.
      const after = await accessToken(app);
      expect(decodeProtectedHeader(after).kid).toBe(oldKid);
      await expect(jwtVerify(after, cachedBeforeRotation)).resolves.toBeTruthy();
    }

    // The JWKS lifetime has passed (moved in the database; each process looks again at its next check).
    await sql(t.databaseUrl, "UPDATE oauth_signing_keys SET signs_from = signs_from - interval '301 seconds'");
    for (const app of [t, other]) {
      (app.services.oauth.keys as unknown as { currentLoadedAt: number }).currentLoadedAt = 0;
      const fresh = await accessToken(app);
      expect(decodeProtectedHeader(fresh).kid).toBe(kid);
      // A verifier fetching the JWKS now (its cache expired) verifies it; the token works everywhere.
      await expect(jwtVerify(fresh, createLocalJWKSet(await jwks(app)))).resolves.toBeTruthy();
      expect((await listProxies(t, fresh)).status).toBe(200);
      expect((await listProxies(other, fresh)).status).toBe(200);
    }
  });
});

describe('a short JWKS lifetime', () => {
  it('switches to the new key when its start comes, without waiting for the next periodic check', async () => {
    const token = async () =>
      (
        await tokenRequest(
          quick.rest,
          { grant_type: 'client_credentials', scope: 'proxies:read' },
          { authorization: basicAuth(client.client_id, client.client_secret!) },
        )
      ).body.data.access_token as string;
    const oldKid = decodeProtectedHeader(await token()).kid;
    const rotation = await quick.rest.post('/api/admin/oauth/signing-keys', { token: TEST_MASTER_KEY });
    const { kid, signs_from } = rotation.body.data;
    expect(decodeProtectedHeader(await token()).kid).toBe(oldKid);
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, Date.parse(signs_from) - Date.now()) + 50));
    expect(decodeProtectedHeader(await token()).kid).toBe(kid);
  });
});
