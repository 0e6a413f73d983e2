/**
 * Every `client_credentials` token request writes a grant; housekeeping deletes it once its token
 * can no longer be presented (ACCESS_TOKEN_TTL, plus an hour for disagreeing clocks), in batches,
 * and keeps live grants, whose tokens keep working, and the grants of other flows.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { DELETE_BATCH_SIZE } from '../../src/kernel/batched-delete';
import { createDb } from '../../src/kernel/db';
import { deleteExpired } from '../../src/modules/housekeeping';
import { ACCESS_TOKEN_TTL, CLIENT_CREDENTIALS_GRANT_LIFETIME_SECONDS } from '../../src/modules/oauth/oauth.constants';
import { createTenant, startTestApp, type Tenant } from '../helpers/app';
import { sql } from '../helpers/db';
import { basicAuth, createOAuthClient, tokenRequest, type TestClient } from '../helpers/oauth';

const t = await startTestApp();
/** The pool of a second process of the deployment, running its own housekeeping pass. */
const otherDb = createDb(t.databaseUrl, { poolSize: 2 });
let tenant: Tenant;
let client: TestClient;

beforeAll(async () => {
  tenant = await createTenant(t.rest, 'Acme');
  client = await createOAuthClient(t.rest, tenant.id);
  return () => otherDb.$disconnect();
});

async function clientCredentialsToken() {
  const response = await tokenRequest(
    t.rest,
    { grant_type: 'client_credentials', scope: 'proxies:read' },
    { authorization: basicAuth(client.client_id, client.client_secret!) },
  );
  expect(response.status, response.rawBody).toBe(201);
  return response.body.data.access_token as string;
}

/** `count` grants of the client of type `grantType`, created `ageSeconds` ago. */
async function insertGrants(grantType: string, ageSeconds: number, count: number) {
  await sql(
    t.databaseUrl,
    `INSERT INTO oauth_grants (id, client_id, user_id, grant_type, scopes, created_at)
     SELECT gen_random_uuid(), $1, NULL, $2, '{proxies:read}', now() - make_interval(secs => $3::int)
       FROM generate_series(1, $4::int)`,
    [client.client_id, grantType, ageSeconds, count],
  );
}

const grantsByKind = async () =>
  (
    await sql<{ kind: string; grants: number }>(
      t.databaseUrl,
      `SELECT grant_type || CASE WHEN now() - created_at > make_interval(secs => $2::int) THEN ' expired' ELSE '' END
              AS kind, count(*)::int AS grants
         FROM oauth_grants WHERE client_id = $1 GROUP BY 1 ORDER BY 1`,
      [client.client_id, CLIENT_CREDENTIALS_GRANT_LIFETIME_SECONDS],
    )
  ).map((row) => `${row.kind}: ${row.grants}`);

describe('client_credentials grants', () => {
  it('are deleted, in batches and once with several passes at once, after their token can no longer be presented', async () => {
    expect(CLIENT_CREDENTIALS_GRANT_LIFETIME_SECONDS).toBe(ACCESS_TOKEN_TTL + 3600);
    const token = await clientCredentialsToken();
    const expired = DELETE_BATCH_SIZE + 3;
    await insertGrants('client_credentials', CLIENT_CREDENTIALS_GRANT_LIFETIME_SECONDS + 60, expired);
    // Its token expired half an hour ago: kept for the hour that covers clocks that disagree.
    await insertGrants('client_credentials', ACCESS_TOKEN_TTL + 1800, 1);
    // Grants of the other flows live as long as their refresh tokens, which housekeeping deletes on their own.
    await insertGrants('authorization_code', 40 * 86_400, 1);
    expect(await grantsByKind()).toEqual([
      'authorization_code expired: 1',
      'client_credentials: 2',
      `client_credentials expired: ${expired}`,
    ]);

    const passes = await Promise.all([
      deleteExpired({ db: t.db, config: t.config }),
      deleteExpired({ db: otherDb, config: t.config }),
    ]);
    expect(passes.reduce((sum, pass) => sum + pass.clientCredentialsGrants, 0)).toBe(expired);
    expect(await grantsByKind()).toEqual(['authorization_code expired: 1', 'client_credentials: 2']);

    // The live grant's token keeps working.
    const response = await t.rest.get('/api/storage/edge/proxies', { token });
    expect(response.status, response.rawBody).toBe(200);
    // A pass with nothing expired deletes nothing.
    expect((await deleteExpired({ db: t.db, config: t.config })).clientCredentialsGrants).toBe(0);
  });

  it('of a revoked token go the same way', async () => {
    const token = await clientCredentialsToken();
    const revoked = await tokenRequest(
      t.rest,
      { token },
      { authorization: basicAuth(client.client_id, client.client_secret!), path: '/api/oauth/revoke' },
    );
    expect(revoked.status, revoked.rawBody).toBeLessThan(300);
    expect((await t.rest.get('/api/storage/edge/proxies', { token })).status).toBe(401);
    await sql(
      t.databaseUrl,
      `UPDATE oauth_grants SET created_at = now() - make_interval(secs => $2::int)
        WHERE client_id = $1 AND revoked_at IS NOT NULL`,
      [client.client_id, CLIENT_CREDENTIALS_GRANT_LIFETIME_SECONDS + 1],
    );
    expect((await deleteExpired({ db: t.db, config: t.config })).clientCredentialsGrants).toBe(1);
    expect(await grantsByKind()).toEqual(['authorization_code expired: 1', 'client_credentials: 2']);
  });
});
