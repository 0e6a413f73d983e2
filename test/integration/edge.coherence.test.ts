/**
 * Two service processes of one deployment (two applications on one database): what one changes,
 * the other honours within a second through PostgreSQL notifications, although both trust what
 * they cached for a minute; and a listening connection that drops is opened again, its process's
 * caches dropped.
 */
import pg from 'pg';
import { beforeAll, describe, expect, it } from 'vitest';
import { createKey, createTenant, TEST_MASTER_KEY, type Tenant } from '../helpers/app';
import { sql } from '../helpers/db';
import { edgeGet, edgeRequest, proxyWith, startEdgeApp, startOrigin } from '../helpers/edge';
import {
  basicAuth,
  Browser,
  createOAuthClient,
  createUser,
  REDIRECT_URI,
  signInAndApprove,
  tokenRequest,
} from '../helpers/oauth';

// Trusted far longer than the deadline below: only the notifications can make it.
const TRUST_MS = 60_000;
const DEADLINE = { timeout: 1_000, interval: 20 };

const one = await startEdgeApp({}, { authCacheTtlMs: TRUST_MS });
const two = await startEdgeApp({}, { databaseUrl: one.databaseUrl, authCacheTtlMs: TRUST_MS });

const PROXIES = '/api/storage/edge/proxies';
let served = 0;
const origin = await startOrigin((request, response) => {
  served += 1;
  const path = request.url!.split('?')[0]!;
  if (path.includes('/tagged/')) response.setHeader('cache-tag', path.endsWith('/a') ? 'red, both' : 'blue both');
  response.setHeader('content-type', 'text/plain');
  response.end(`${path} #${served}`);
});

let tenant: Tenant;
const cachedRoute = (prefix: string) => ({
  path: '/',
  origin: { uri: `${origin.url}/${prefix}` },
  settings: { cache: { age: 300, is_public: true } },
});
const fromTwo = (key: string, path: string, headers: Record<string, string> = {}) =>
  edgeGet(`${two.baseUrl}/edge/${key}${path}`, headers);

beforeAll(async () => {
  tenant = await createTenant(one.rest, 'Coherent tenant');
});

describe('coherence across processes', () => {
  it('serves a created, replaced and deleted proxy in its new form in the other process', async () => {
    // The second process remembers that the key is unknown...
    expect((await fromTwo('moving', '/page')).status).toBe(404);
    const created = await one.rest.post(PROXIES, { token: tenant.key, body: proxyWith('moving', [cachedRoute('v1')]) });
    expect(created.status).toBe(201);
    // ...until the first one creates it.
    await expect.poll(async () => (await fromTwo('moving', '/page')).text, DEADLINE).toMatch(/^\/v1\/page #/);
    expect((await fromTwo('moving', '/page')).headers['x-cache']).toBe('HIT');

    const replaced = await one.rest.put(`${PROXIES}/moving`, {
      token: tenant.key,
      body: proxyWith('moving', [cachedRoute('v2')]),
    });
    expect(replaced.status).toBe(204);
    await expect.poll(async () => (await fromTwo('moving', '/page')).text, DEADLINE).toMatch(/^\/v2\/page #/);

    expect((await one.rest.delete(`${PROXIES}/moving`, { token: tenant.key })).status).toBe(204);
    await expect.poll(async () => (await fromTwo('moving', '/page')).status, DEADLINE).toBe(404);
  });

  it('purges the other process: everything, a path prefix, or tags', async () => {
    const created = await one.rest.post(PROXIES, { token: tenant.key, body: proxyWith('purged', [cachedRoute('p')]) });
    expect(created.status).toBe(201);
    const paths = ['/tagged/a', '/tagged/b', '/plain/c'];
    const xCache = async () =>
      Promise.all(paths.map(async (path) => (await fromTwo('purged', path)).headers['x-cache']));
    await expect.poll(xCache, DEADLINE).toEqual(['HIT', 'HIT', 'HIT']);

    const purge = (query: string) => one.rest.delete(`${PROXIES}/purged/cache${query}`, { token: tenant.key });
    expect((await purge('?tag=red')).status).toBe(204);
    // Each poll reads the paths again, so entries purged and fetched anew read HIT on the next round:
    // the first purged round is the one to wait for.
    await expect.poll(async () => (await fromTwo('purged', '/tagged/a')).headers['x-cache'], DEADLINE).toBe('MISS');
    expect((await fromTwo('purged', '/tagged/b')).headers['x-cache']).toBe('HIT');

    expect((await purge('?path=/plain/')).status).toBe(204);
    await expect.poll(async () => (await fromTwo('purged', '/plain/c')).headers['x-cache'], DEADLINE).toBe('MISS');
    expect((await fromTwo('purged', '/tagged/b')).headers['x-cache']).toBe('HIT');

    expect((await purge('')).status).toBe(204);
    await expect.poll(async () => (await fromTwo('purged', '/tagged/b')).headers['x-cache'], DEADLINE).toBe('MISS');
  });

  it('invalidates the stored GET in the other process after a successful POST of the same path', async () => {
    const created = await one.rest.post(PROXIES, { token: tenant.key, body: proxyWith('posted', [cachedRoute('c')]) });
    expect(created.status).toBe(201);
    await expect.poll(async () => (await fromTwo('posted', '/cart')).headers['x-cache'], DEADLINE).toBe('HIT');
    const posted = await edgeRequest(`${one.baseUrl}/edge/posted/cart`, { method: 'POST', body: 'add' });
    expect(posted.status).toBe(200);
    await expect.poll(async () => (await fromTwo('posted', '/cart')).headers['x-cache'], DEADLINE).toBe('MISS');
  });

  it('announces a change with its transaction, and keeps what a process cached with that version when the announcement arrives', async () => {
    const listener = new pg.Client({ connectionString: one.databaseUrl });
    await listener.connect();
    const heard: string[] = [];
    listener.on('notification', ({ channel, payload }) => channel === 'proxy_changed' && heard.push(payload ?? ''));
    await listener.query('LISTEN proxy_changed');
    try {
      const created = await one.rest.post(PROXIES, {
        token: tenant.key,
        body: proxyWith('versioned', [cachedRoute('ver')]),
      });
      expect(created.status).toBe(201);
      const [row] = await sql<{ version: string }>(
        one.databaseUrl,
        "SELECT xmin::text AS version FROM proxies WHERE key = 'versioned'",
      );
      await expect.poll(() => heard, DEADLINE).toContain(`versioned ${row!.version}`);

      const fromOne = () => edgeGet(`${one.baseUrl}/edge/versioned/page`);
      await expect.poll(async () => (await fromOne()).headers['x-cache'], DEADLINE).toBe('HIT');
      // Its own announcement, arriving after the process served the new version, purges nothing...
      one.services.edge.forgetProxy('versioned', row!.version);
      expect((await fromOne()).headers['x-cache']).toBe('HIT');
      // ...another version, or a key alone (a deletion), purges.
      one.services.edge.forgetProxy('versioned', String(Number(row!.version) + 1));
      expect((await fromOne()).headers['x-cache']).toBe('MISS');
      expect((await fromOne()).headers['x-cache']).toBe('HIT');
      one.services.edge.forgetProxy('versioned');
      expect((await fromOne()).headers['x-cache']).toBe('MISS');

      expect((await one.rest.delete(`${PROXIES}/versioned`, { token: tenant.key })).status).toBe(204);
      await expect.poll(() => heard.at(-1), DEADLINE).toBe('versioned');
    } finally {
      await listener.end();
    }
  });

  it('refuses a revoked API key in the other process', async () => {
    const key = await createKey(one.rest, tenant.id, ['proxies:read']);
    const id = (await sql<{ id: string }>(one.databaseUrl, 'SELECT id FROM api_keys ORDER BY id DESC LIMIT 1'))[0]!.id;
    expect((await two.rest.get(PROXIES, { token: key })).status).toBe(200);
    const revoked = await one.rest.delete(`/api/admin/tenants/${tenant.id}/api-keys/${id}`, { token: TEST_MASTER_KEY });
    expect(revoked.status).toBe(204);
    await expect.poll(async () => (await two.rest.get(PROXIES, { token: key })).status, DEADLINE).toBe(401);
  });

  it('refuses the keys and forgets the cached proxy of a deleted tenant in the other process', async () => {
    const doomed = await createTenant(one.rest, 'Doomed tenant');
    const created = await one.rest.post(PROXIES, { token: doomed.key, body: proxyWith('doomed', [cachedRoute('d')]) });
    expect(created.status).toBe(201);
    expect((await two.rest.get(PROXIES, { token: doomed.key })).status).toBe(200);
    await expect.poll(async () => (await fromTwo('doomed', '/page')).headers['x-cache'], DEADLINE).toBe('HIT');
    const deleted = await one.rest.delete(`/api/admin/tenants/${doomed.id}`, { token: TEST_MASTER_KEY });
    expect(deleted.status).toBe(204);
    await expect.poll(async () => (await two.rest.get(PROXIES, { token: doomed.key })).status, DEADLINE).toBe(401);
    await expect.poll(async () => (await fromTwo('doomed', '/page')).status, DEADLINE).toBe(404);
  });

  it('refuses the access token of a revoked OAuth grant in the other process', async () => {
    const client = await createOAuthClient(one.rest, tenant.id, { scopes: ['proxies:read'] });
    const issued = await tokenRequest(one.rest, {
      grant_type: 'client_credentials',
      client_id: client.client_id,
      client_secret: client.client_secret!,
    });
    expect(issued.status).toBe(201);
    const token = issued.body.data.access_token as string;
    expect((await two.rest.get(PROXIES, { token })).status).toBe(200);
    const revoked = await tokenRequest(
      one.rest,
      { token, token_type_hint: 'access_token' },
      { form: true, authorization: basicAuth(client.client_id, client.client_secret!), path: '/api/oauth/revoke' },
    );
    expect(revoked.status).toBe(200);
    await expect.poll(async () => (await two.rest.get(PROXIES, { token })).status, DEADLINE).toBe(401);
  });

  it('refuses the access token of a grant revoked by a reused refresh token in the other process', async () => {
    const client = await createOAuthClient(one.rest, tenant.id, { scopes: ['proxies:read'] });
    const user = await createUser(one.rest, tenant.id, 'coherent@example.com');
    const authorize = new URLSearchParams({
      client_id: client.client_id,
      redirect_uri: REDIRECT_URI,
      response_type: 'code',
      scope: 'proxies:read',
    });
    const browser = new Browser(one.app);
    const session = await one.rest.get(`/api/oauth/session/authorize?${authorize}`);
    expect(session.status).toBe(200);
    const redirect = await signInAndApprove(browser, session.body.data.forward_uri, user.email);
    const asClient = { form: true, authorization: basicAuth(client.client_id, client.client_secret!) };
    const issued = await tokenRequest(
      one.rest,
      { grant_type: 'authorization_code', redirect_uri: REDIRECT_URI, code: redirect.searchParams.get('code')! },
      asClient,
    );
    expect(issued.status).toBe(200);
    const rotated = await tokenRequest(
      one.rest,
      { grant_type: 'refresh_token', refresh_token: issued.body.refresh_token },
      asClient,
    );
    expect(rotated.status).toBe(200);
    const token = rotated.body.access_token as string;
    expect((await two.rest.get(PROXIES, { token })).status).toBe(200);
    // The first refresh token again, after the grace window of its rotation: its whole grant is revoked.
    await sql(one.databaseUrl, "UPDATE oauth_refresh_tokens SET rotated_at = rotated_at - interval '31 seconds'");
    const reused = await tokenRequest(
      one.rest,
      { grant_type: 'refresh_token', refresh_token: issued.body.refresh_token },
      asClient,
    );
    expect(reused.status).toBe(400);
    await expect.poll(async () => (await two.rest.get(PROXIES, { token })).status, DEADLINE).toBe(401);
  });
});

describe('the listening connection', () => {
  it('is opened again after it drops, and the caches of its process are dropped', async () => {
    const created = await one.rest.post(PROXIES, {
      token: tenant.key,
      body: proxyWith('reconnect', [cachedRoute('r')]),
    });
    expect(created.status).toBe(201);
    await expect.poll(async () => (await fromTwo('reconnect', '/page')).headers['x-cache'], DEADLINE).toBe('HIT');
    const key = await createKey(one.rest, tenant.id, ['proxies:read']);
    expect((await two.rest.get(PROXIES, { token: key })).status).toBe(200);

    const before = two.services.notifications.backendPid;
    expect(before).toBeDefined();
    await sql(one.databaseUrl, 'SELECT pg_terminate_backend($1)', [before]);
    const reconnected = () => {
      const pid = two.services.notifications.backendPid;
      return pid !== undefined && pid !== before;
    };
    await expect.poll(reconnected, { timeout: 5_000, interval: 20 }).toBe(true);
    expect(two.services.edge.cachedBytes).toBe(0);
    expect((await fromTwo('reconnect', '/page')).headers['x-cache']).toBe('MISS');

    // Listening again: a revocation still reaches the second process at once.
    const [row] = await sql<{ id: string }>(one.databaseUrl, 'SELECT id FROM api_keys ORDER BY id DESC LIMIT 1');
    await sql(one.databaseUrl, 'UPDATE api_keys SET revoked_at = now() WHERE id = $1', [row!.id]);
    await expect.poll(async () => (await two.rest.get(PROXIES, { token: key })).status, DEADLINE).toBe(401);
  });
});
