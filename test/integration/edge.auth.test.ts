/**
 * Authentication on the edge: routes with `settings.auth.is_required` need a bearer token of the
 * proxy's tenant (with the route's scope when set); browsers without one are sent to the proxy's
 * login page; the credential never reaches the origin.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { createKey, createTenant, type Tenant } from '../helpers/app';
import { edgeGet, proxyWith, startEdgeApp, startOrigin } from '../helpers/edge';

const { rest, baseUrl } = await startEdgeApp();

const origin = await startOrigin((request, response) => {
  response.setHeader('content-type', 'application/json');
  response.end(JSON.stringify({ url: request.url, authorization: request.headers.authorization ?? null }));
});

let owner: Tenant;
let stranger: Tenant;
let searchKey: string;
let catalogKey: string;

beforeAll(async () => {
  owner = await createTenant(rest, 'Owner');
  stranger = await createTenant(rest, 'Stranger');
  searchKey = await createKey(rest, owner.id, ['search']);
  catalogKey = await createKey(rest, owner.id, ['catalog:read']);
  const created = await rest.post('/api/storage/edge/proxies', {
    token: owner.key,
    body: proxyWith(
      'members',
      [
        { path: '/open', origin: { uri: `${origin.url}/open` } },
        {
          path: '/members',
          origin: { uri: `${origin.url}/members` },
          settings: { auth: { is_required: true }, cache: { age: 60, is_public: true } },
        },
        {
          path: '/search',
          origin: { uri: `${origin.url}/search` },
          settings: { auth: { is_required: true, scope: 'search' } },
        },
      ],
      {
        oauth: {
          issuer: 'https://id.example.com',
          client_id: 'shop',
          authorize_url: 'https://id.example.com/authorize?client_id=shop',
          return_url_key: 'return_to',
        },
      },
    ),
  });
  expect(created.status).toBe(201);
  const plain = await rest.post('/api/storage/edge/proxies', {
    token: owner.key,
    body: proxyWith('no-login', { path: '/', origin: { uri: origin.url }, settings: { auth: { is_required: true } } }),
  });
  expect(plain.status).toBe(201);
});

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

describe('routes that need a bearer token', () => {
  it('answer 401 without a token or with an invalid one, and reach the origin with a valid one', async () => {
    const before = origin.requests.length;
    const missing = await edgeGet(`${baseUrl}/edge/members/members/page`);
    expect(missing.status).toBe(401);
    expect(missing.headers['www-authenticate']).toBe('Bearer');
    expect(missing.json.error.message).toMatch(/^Unauthorized: /);
    const invalid = await edgeGet(
      `${baseUrl}/edge/members/members/page`,
      bearer('cpk_00000000000000000000000000000000_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA'),
    );
    expect(invalid.status).toBe(401);
    expect(origin.requests.length).toBe(before);

    const allowed = await edgeGet(`${baseUrl}/edge/members/members/page`, bearer(catalogKey));
    expect(allowed.status).toBe(200);
    expect(allowed.json).toEqual({ url: '/members/page', authorization: null });
  });

  it('tell shared caches to keep authenticated answers private, even when cached here', async () => {
    const first = await edgeGet(`${baseUrl}/edge/members/members/cached`, bearer(owner.key));
    expect(first.headers['cache-control']).toBe('private, max-age=60');
    const second = await edgeGet(`${baseUrl}/edge/members/members/cached`, bearer(owner.key));
    expect(second.headers['x-cache']).toBe('HIT');
    expect(second.headers['cache-control']).toMatch(/^private, /);
    // A cached answer is no way around the token.
    expect((await edgeGet(`${baseUrl}/edge/members/members/cached`)).status).toBe(401);
  });

  it("answer 403 to a token without the route's scope, and pass with it", async () => {
    const wrongScope = await edgeGet(`${baseUrl}/edge/members/search/q`, bearer(catalogKey));
    expect(wrongScope.status).toBe(403);
    expect(wrongScope.json.error.message).toBe(
      'Forbidden: insufficient scopes for resource; this route needs scope search',
    );
    expect((await edgeGet(`${baseUrl}/edge/members/search/q`, bearer(searchKey))).status).toBe(200);
    expect((await edgeGet(`${baseUrl}/edge/members/search/q`, bearer(owner.key))).status).toBe(200);
  });

  it('answer 403 to a valid token of another tenant', async () => {
    const before = origin.requests.length;
    for (const path of ['/members/page', '/search/q']) {
      const response = await edgeGet(`${baseUrl}/edge/members${path}`, bearer(stranger.key));
      expect(response.status).toBe(403);
      expect(response.json.error.message).toMatch(/another tenant/);
    }
    expect(origin.requests.length).toBe(before);
  });

  it('leave routes without is_required open', async () => {
    const response = await edgeGet(`${baseUrl}/edge/members/open/x`);
    expect(response.status).toBe(200);
  });
});

describe("the proxy's OAuth block", () => {
  it('sends a browser without a token to authorize_url with the original URL in return_url_key', async () => {
    const response = await edgeGet(`${baseUrl}/edge/members/members/page?tab=2`, {
      accept: 'text/html,application/xhtml+xml;q=0.9,*/*;q=0.8',
    });
    expect(response.status).toBe(302);
    const location = new URL(response.headers.location!);
    expect(`${location.origin}${location.pathname}`).toBe('https://id.example.com/authorize');
    expect(location.searchParams.get('client_id')).toBe('shop');
    expect(location.searchParams.get('return_to')).toBe(`${baseUrl}/edge/members/members/page?tab=2`);
  });

  it('does not redirect API clients or requests that carry a token', async () => {
    expect((await edgeGet(`${baseUrl}/edge/members/members/page`, { accept: 'application/json' })).status).toBe(401);
    const invalid = await edgeGet(`${baseUrl}/edge/members/members/page`, {
      accept: 'text/html',
      authorization: 'Bearer nonsense',
    });
    expect(invalid.status).toBe(401);
  });

  it('is not used by a proxy without one', async () => {
    const response = await edgeGet(`${baseUrl}/edge/no-login/x`, { accept: 'text/html' });
    expect(response.status).toBe(401);
  });
});
