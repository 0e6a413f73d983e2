/**
 * OAuth housekeeping: rotating the signing key (`POST /api/admin/oauth/signing-keys`, `npm run
 * admin -- keys:rotate`) with two processes of one deployment, and the pass that deletes what has
 * expired (codes, sessions, refresh tokens, retired keys, idempotency keys), run concurrently.
 */
import { decodeProtectedHeader } from 'jose';
import { beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app';
import { createDb } from '../../src/kernel/db';
import { deleteExpired } from '../../src/modules/housekeeping';
import { RETIREMENT_DELAY_MS } from '../../src/modules/oauth/oauth.constants';
import { createTenant, startTestApp, TEST_MASTER_KEY, type Tenant } from '../helpers/app';
import { sql } from '../helpers/db';
import { basicAuth, createOAuthClient, tokenRequest, type TestClient } from '../helpers/oauth';
import { createRestClient } from '../helpers/rest';

// Keys sign as soon as they are made here; their publication ahead of signing is tested on its own.
const t = await startTestApp({ env: { OAUTH_JWKS_MAX_AGE_SECONDS: '0' } });
let tenant: Tenant;
let client: TestClient;

/** A second process of the same deployment: its own app and pool on the same database. */
const otherDb = createDb(t.databaseUrl, { poolSize: 2 });
const other = await buildApp({ config: t.config, db: otherDb, masterKey: TEST_MASTER_KEY, backgroundWorkers: false });
await other.app.ready();
const otherRest = createRestClient(other.app);

beforeAll(async () => {
  tenant = await createTenant(t.rest, 'Acme');
  client = await createOAuthClient(t.rest, tenant.id);
  return async () => {
    await other.app.close();
    await otherDb.$disconnect();
  };
});

async function accessToken(rest = t.rest) {
  const response = await tokenRequest(
    rest,
    { grant_type: 'client_credentials', scope: 'proxies:read' },
    { authorization: basicAuth(client.client_id, client.client_secret!) },
  );
  expect(response.status).toBe(201);
  return response.body.data.access_token as string;
}

const jwksKids = async () =>
  (await t.app.inject({ method: 'GET', url: '/.well-known/jwks.json' })).json().keys.map((k: { kid: string }) => k.kid);

const rotate = () => t.rest.post('/api/admin/oauth/signing-keys', { token: TEST_MASTER_KEY });

describe('signing key rotation', () => {
  it('needs the master key; a tenant key is refused and nothing changes', async () => {
    await accessToken();
    const before = await sql(t.databaseUrl, 'SELECT kid, retire_at FROM oauth_signing_keys ORDER BY kid');
    expect((await t.rest.post('/api/admin/oauth/signing-keys', { token: tenant.key })).status).toBe(401);
    expect((await t.rest.post('/api/admin/oauth/signing-keys')).status).toBe(401);
    expect(await sql(t.databaseUrl, 'SELECT kid, retire_at FROM oauth_signing_keys ORDER BY kid')).toEqual(before);
  });

  it('makes a new key current; tokens of the old one keep working and it stays in the JWKS until retired', async () => {
    const oldToken = await accessToken();
    const oldKid = decodeProtectedHeader(oldToken).kid!;

    const started = Date.now();
    const response = await rotate();
    expect(response.status).toBe(201);
    const { kid, retiring } = response.body.data;
    expect(kid).not.toBe(oldKid);
    expect(retiring).toEqual([{ kid: oldKid, retire_at: expect.any(String) }]);
    const retireAt = Date.parse(retiring[0].retire_at);
    expect(retireAt).toBeGreaterThanOrEqual(started + RETIREMENT_DELAY_MS - 1000);
    expect(RETIREMENT_DELAY_MS).toBeGreaterThan(3600_000);

    // New tokens carry the new key; the old token still authenticates, in this process and the other.
    expect(decodeProtectedHeader(await accessToken()).kid).toBe(kid);
    expect(await jwksKids()).toEqual(expect.arrayContaining([oldKid, kid]));
    for (const rest of [t.rest, otherRest]) {
      expect((await rest.get('/api/storage/edge/proxies', { token: oldToken })).status).toBe(200);
    }
  });

  it('another process signs with the new key once it looks again, and verifies tokens of either', async () => {
    const response = await rotate();
    const { kid } = response.body.data;
    // The other process looks for a newer key every 30 seconds; its cached choice is made stale here.
    (other.services.oauth.keys as unknown as { currentLoadedAt: number }).currentLoadedAt = 0;
    const fromOther = await accessToken(otherRest);
    expect(decodeProtectedHeader(fromOther).kid).toBe(kid);
    expect((await t.rest.get('/api/storage/edge/proxies', { token: fromOther })).status).toBe(200);
  });

  it('a retired key leaves the JWKS, its tokens are refused, and housekeeping deletes it', async () => {
    const token = await accessToken();
    const oldKid = decodeProtectedHeader(token).kid!;
    await rotate();
    // Every token the key signed has expired: its retirement is due.
    await sql(t.databaseUrl, `UPDATE oauth_signing_keys SET retire_at = now() - interval '1 second' WHERE kid = $1`, [
      oldKid,
    ]);
    expect(await jwksKids()).not.toContain(oldKid);
    // A process looks at the keys it verifies with again every 30 seconds: that time has passed here.
    (other.services.oauth.keys as unknown as { publicKeys: Map<string, unknown> }).publicKeys.clear();
    expect((await otherRest.get('/api/storage/edge/proxies', { token })).status).toBe(401);

    await deleteExpired({ db: t.db, config: t.config });
    expect(await sql(t.databaseUrl, 'SELECT kid FROM oauth_signing_keys WHERE kid = $1', [oldKid])).toEqual([]);
    // The current key and the ones still retiring are kept.
    expect((await sql(t.databaseUrl, 'SELECT kid FROM oauth_signing_keys WHERE retire_at IS NULL')).length).toBe(1);
  });
});

describe('housekeeping', () => {
  it('deletes what has expired and nothing else, once, with several passes at once', async () => {
    const clientRow = (await sql<{ id: string }>(t.databaseUrl, 'SELECT id FROM oauth_clients LIMIT 1'))[0]!;
    const user = (
      await t.rest.post(`/api/admin/tenants/${tenant.id}/users`, {
        token: TEST_MASTER_KEY,
        body: { data: { email: 'ada@example.com', password: 'correct horse battery staple' } },
      })
    ).body.data;
    const grant = '0195f7a0-0000-7000-8000-000000000001';
    await sql(
      t.databaseUrl,
      `INSERT INTO oauth_grants (id, client_id, user_id, grant_type, scopes) VALUES ($1, $2, $3, 'authorization_code', '{}')`,
      [grant, clientRow.id, user.id],
    );
    const ages = { expired: "now() - interval '2 hours'", fresh: "now() + interval '5 minutes'" };
    for (const [name, expiresAt] of Object.entries(ages)) {
      await sql(
        t.databaseUrl,
        `INSERT INTO oauth_authorization_sessions (id, client_id, redirect_uri, scopes, expires_at)
         VALUES ($1, $2, 'https://x.example/cb', '{}', ${expiresAt})`,
        [`session-${name}`, clientRow.id],
      );
      await sql(
        t.databaseUrl,
        `INSERT INTO oauth_authorization_codes (code_hash, client_id, user_id, redirect_uri, scopes, expires_at)
         VALUES (sha256($1::bytea), $2, $3, 'https://x.example/cb', '{}', ${expiresAt})`,
        [`code-${name}`, clientRow.id, user.id],
      );
      await sql(
        t.databaseUrl,
        `INSERT INTO oauth_refresh_tokens (token_hash, grant_id, expires_at) VALUES (sha256($1::bytea), $2, ${expiresAt})`,
        [`refresh-${name}`, grant],
      );
      await sql(
        t.databaseUrl,
        `INSERT INTO idempotency_keys (tenant_id, key, request_hash, response, created_at)
         VALUES ($1, $2, 'h', '{}', ${name === 'expired' ? "now() - interval '25 hours'" : 'now()'})`,
        [tenant.id, `key-${name}`],
      );
    }
    await sql(
      t.databaseUrl,
      `INSERT INTO rate_limits (key, points, expire) VALUES ('ended', 3, 1), ('current', 2, $1)`,
      [Date.now() + 60_000],
    );
    // A code that expired a minute ago is kept for an hour: presented again, it still revokes its grant.
    await sql(
      t.databaseUrl,
      `INSERT INTO oauth_authorization_codes (code_hash, client_id, user_id, redirect_uri, scopes, expires_at)
       VALUES (sha256('code-recent'::bytea), $1, $2, 'https://x.example/cb', '{}', now() - interval '1 minute')`,
      [clientRow.id, user.id],
    );

    const passes = await Promise.all([
      deleteExpired({ db: t.db, config: t.config }),
      deleteExpired({ db: otherDb, config: t.config }),
    ]);
    const total = (key: keyof (typeof passes)[0]) => passes.reduce((sum, pass) => sum + pass[key], 0);
    expect([
      total('sessions'),
      total('codes'),
      total('refreshTokens'),
      total('idempotencyKeys'),
      total('rateLimitWindows'),
    ]).toEqual([1, 1, 1, 1, 1]);
    expect(await sql(t.databaseUrl, 'SELECT key FROM rate_limits')).toEqual([{ key: 'current' }]);

    expect(await sql(t.databaseUrl, 'SELECT id FROM oauth_authorization_sessions ORDER BY id')).toEqual([
      { id: 'session-fresh' },
    ]);
    expect(
      await sql(
        t.databaseUrl,
        `SELECT v.name FROM (VALUES ('code-fresh'), ('code-recent'), ('code-expired')) v(name)
           JOIN oauth_authorization_codes c ON c.code_hash = sha256(v.name::bytea) ORDER BY 1`,
      ),
    ).toEqual([{ name: 'code-fresh' }, { name: 'code-recent' }]);
    expect(
      await sql(
        t.databaseUrl,
        `SELECT v.name FROM (VALUES ('refresh-fresh'), ('refresh-expired')) v(name)
           JOIN oauth_refresh_tokens r ON r.token_hash = sha256(v.name::bytea) ORDER BY 1`,
      ),
    ).toEqual([{ name: 'refresh-fresh' }]);
    expect(
      await sql(t.databaseUrl, `SELECT key FROM idempotency_keys WHERE tenant_id = $1 ORDER BY key`, [tenant.id]),
    ).toEqual([{ key: 'key-fresh' }]);
  });
});
