/**
 * Rate limits per credential, counted in PostgreSQL: a tenant's own limit over RATE_LIMIT_PER_MINUTE,
 * the RateLimit-* headers, 429 with Retry-After over REST and RATE_LIMITED over GraphQL (changing
 * nothing), one count for two processes of a deployment, OAuth tokens counted per client, and the
 * admin API (master key) never limited.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app';
import { loadConfig } from '../../src/kernel/config';
import { createDb } from '../../src/kernel/db';
import { createKey, createTenant, startTestApp, TEST_MASTER_KEY, type Tenant } from '../helpers/app';
import { sql } from '../helpers/db';
import { basicAuth, createOAuthClient, tokenRequest } from '../helpers/oauth';
import { createRestClient } from '../helpers/rest';
import { graphql } from './stock.fixtures';

const t = await startTestApp();
const PROXIES = '/api/storage/edge/proxies';
const admin = { token: TEST_MASTER_KEY };

/** A second process of the same deployment, with a default limit of 1000 per minute. */
const otherDb = createDb(t.databaseUrl, { poolSize: 2 });
const other = await buildApp({
  config: loadConfig({
    DATABASE_URL: t.databaseUrl,
    MASTER_KEY: TEST_MASTER_KEY,
    LOG_LEVEL: 'silent',
    RATE_LIMIT_PER_MINUTE: '1000',
  }),
  db: otherDb,
  masterKey: TEST_MASTER_KEY,
  backgroundWorkers: false,
});
await other.app.ready();
const otherRest = createRestClient(other.app);

let limited: Tenant;
let free: Tenant;

beforeAll(async () => {
  limited = await createTenant(t.rest, 'Limited');
  free = await createTenant(t.rest, 'Free');
  const patched = await t.rest.patch(`/api/admin/tenants/${limited.id}`, {
    ...admin,
    body: { data: { rate_limit_per_minute: 5 } },
  });
  expect(patched.status).toBe(200);
  expect(patched.body.data).toEqual({
    id: limited.id,
    name: 'Limited',
    rate_limit_per_minute: 5,
    created_at: expect.any(String),
  });
  return async () => {
    await other.app.close();
    await otherDb.$disconnect();
  };
});

describe('rate limits', () => {
  it('counts a key across two processes; the one over the limit is a 429 with Retry-After that changes nothing', async () => {
    const remaining: string[] = [];
    for (const rest of [t.rest, otherRest, t.rest, otherRest, t.rest]) {
      const response = await rest.get(PROXIES, { token: limited.key });
      expect(response.status).toBe(200);
      expect(response.headers['ratelimit-limit']).toBe('5');
      remaining.push(String(response.headers['ratelimit-remaining']));
      expect(Number(response.headers['ratelimit-reset'])).toBeGreaterThan(0);
    }
    expect(remaining).toEqual(['4', '3', '2', '1', '0']);

    const refused = await otherRest.post(PROXIES, {
      token: limited.key,
      body: { data: { key: 'over-limit', routes: { path: '*', origin: { uri: 'https://shop.example.com' } } } },
    });
    expect(refused.status).toBe(429);
    expect(refused.body.error.message).toMatch(/^Too many requests: .*5 requests per minute/);
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    expect(refused.headers['ratelimit-remaining']).toBe('0');
    expect(await sql(t.databaseUrl, `SELECT key FROM proxies WHERE key = 'over-limit'`)).toEqual([]);

    const mutation = await graphql(
      t,
      limited.key,
      'mutation { createBusiness(input: { name: "Over the limit" }) { business { id } } }',
    );
    expect(mutation.status).toBe(429);
    expect(mutation.body.errors?.[0]?.extensions?.code).toBe('RATE_LIMITED');
    expect(await sql(t.databaseUrl, `SELECT id FROM businesses WHERE name = 'Over the limit'`)).toEqual([]);
  });

  it('leaves other credentials alone, counts each key on its own, and never limits the master key', async () => {
    const second = await createKey(t.rest, limited.id, ['*']);
    expect((await t.rest.get(PROXIES, { token: second })).headers['ratelimit-remaining']).toBe('4');
    // No limit of its own and none by default in this process: no headers at all.
    const unlimited = await t.rest.get(PROXIES, { token: free.key });
    expect(unlimited.status).toBe(200);
    expect(unlimited.headers['ratelimit-limit']).toBeUndefined();
    // The other process has a default: it applies to a tenant without a limit of its own.
    expect((await otherRest.get(PROXIES, { token: free.key })).headers['ratelimit-limit']).toBe('1000');
    for (let i = 0; i < 8; i++)
      expect(
        (
          await t.rest.post(`/api/admin/tenants/${limited.id}/api-keys`, {
            ...admin,
            body: { data: { name: `k${i}`, scopes: ['*'] } },
          })
        ).status,
      ).toBe(201);
  });

  it("counts an OAuth client's access tokens against the client", async () => {
    const tenant = await createTenant(t.rest, 'OAuth');
    await t.rest.patch(`/api/admin/tenants/${tenant.id}`, { ...admin, body: { data: { rate_limit_per_minute: 3 } } });
    const client = await createOAuthClient(t.rest, tenant.id);
    const token = async () =>
      (
        await tokenRequest(
          t.rest,
          { grant_type: 'client_credentials', scope: 'proxies:read' },
          { authorization: basicAuth(client.client_id, client.client_secret!) },
        )
      ).body.data.access_token as string;
    const [first, second] = [await token(), await token()];
    const statuses = [];
    for (const access of [first, second, first, second])
      statuses.push((await t.rest.get(PROXIES, { token: access })).status);
    expect(statuses).toEqual([200, 200, 200, 429]);
  });

  it('refuses a bad limit with a 400 that changes nothing; null goes back to the default', async () => {
    for (const bad of [0, -1, 1.5, '10', 2_000_000]) {
      const response = await t.rest.patch(`/api/admin/tenants/${limited.id}`, {
        ...admin,
        body: { data: { rate_limit_per_minute: bad } },
      });
      expect(response.status, String(bad)).toBe(400);
    }
    expect(await sql(t.databaseUrl, 'SELECT rate_limit_per_minute FROM tenants WHERE id = $1', [limited.id])).toEqual([
      { rate_limit_per_minute: 5 },
    ]);
    expect(
      (
        await t.rest.patch(`/api/admin/tenants/${'0'.repeat(8)}-0000-7000-8000-000000000000`, {
          ...admin,
          body: { data: { name: 'x' } },
        })
      ).status,
    ).toBe(404);
    const cleared = await t.rest.patch(`/api/admin/tenants/${limited.id}`, {
      ...admin,
      body: { data: { rate_limit_per_minute: null } },
    });
    expect(cleared.body.data.rate_limit_per_minute).toBeNull();
    // This process has no default: the tenant is not limited any more, at once.
    const after = await t.rest.get(PROXIES, { token: limited.key });
    expect(after.status).toBe(200);
    expect(after.headers['ratelimit-limit']).toBeUndefined();
  });
});
