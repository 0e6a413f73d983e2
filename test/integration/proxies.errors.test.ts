/**
 * What the edge proxy API refuses: malformed, mistyped, unknown, missing and oversized input (400,
 * 413, 415), bad credentials (401), missing scopes (403), wrong methods (405) and unknown paths
 * (404). Every refused write is checked to have left the stored proxies exactly as they were.
 */
import { beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createTenant, startTestApp, TEST_MASTER_KEY, type Tenant } from '../helpers/app';
import { sql } from '../helpers/db';
import { type RestResponse, expectRestError } from '../helpers/rest';

const { rest, databaseUrl, app } = await startTestApp();

const PROXIES = '/api/storage/edge/proxies';
const MESSAGES = {
  400: 'Bad request: invalid filter, pagination or request body',
  401: 'Unauthorized: invalid or expired authorization header',
  403: 'Forbidden: insufficient scopes for resource',
  404: 'Not found: could not find requested entity',
  405: 'Method not allowed:',
  413: 'Payload too large:',
  415: 'Unsupported media type:',
} as const;

/** A 400 whose `details` name `field` (other entries may list more problems of the same request). */
function expectBadRequestOn(response: RestResponse, field: string) {
  expectRestError(response, 400, { message: MESSAGES[400] });
  expect(response.body.error.details, JSON.stringify(response.body.error.details)).toEqual(
    expect.arrayContaining([expect.objectContaining({ field })]),
  );
}

/** Every stored proxy, for asserting that a refused request changed nothing. */
const storedProxies = () =>
  sql(
    databaseUrl,
    'SELECT key, tenant_id, routes, auth, oauth, is_active, is_suspended, created_at, updated_at FROM proxies ORDER BY key',
  );

const route = { path: '/', origin: { uri: 'https://shop.example.com' } };
const validProxy = (key = 'rejected') => ({ key, routes: route });

/** The proxy that refused writes must leave alone; it has every field set so that any change shows. */
const EXISTING = 'existing';
const existingProxy = {
  key: EXISTING,
  routes: [
    {
      path: '/a',
      origin: { uri: 'https://a.example.com', is_bucket: true },
      settings: { cache: { age: 10, is_public: true } },
    },
    { path: '*', origin: { uri: 'https://b.example.com' }, settings: { auth: { is_required: true, scope: 'search' } } },
  ],
  auth: { signature: { secret: 'existing-secret-0123456789', cache: { age: 5 } } },
  oauth: { issuer: 'https://id.example.com', client_id: 'existing' },
  is_active: false,
  is_suspended: true,
};

let owner: Tenant;
let snapshot: Awaited<ReturnType<typeof storedProxies>>;

beforeAll(async () => {
  owner = await createTenant(rest, 'Owner');
  const created = await rest.post(PROXIES, { token: owner.key, body: { data: existingProxy } });
  expect(created.status).toBe(201);
});

beforeEach(async () => {
  snapshot = await storedProxies();
});

const expectNothingChanged = async () => expect(await storedProxies()).toEqual(snapshot);

const withRoute = (changes: object) => ({ ...validProxy(), routes: { ...route, ...changes } });
const withOrigin = (changes: object) => withRoute({ origin: { ...route.origin, ...changes } });
const withCache = (cache: object) => withRoute({ settings: { cache } });
const withRouteAuth = (auth: object) => withRoute({ settings: { auth } });
const withSignature = (signature: object) => ({ ...validProxy(), auth: { signature } });
const withOAuth = (oauth: object) => ({ ...validProxy(), oauth });

/** [what is wrong, request body, the field the 400 must name] */
const invalidBodies: [string, unknown, string][] = [
  // Unknown fields, at every level.
  ['an unknown top-level field', { data: validProxy(), extra: 1 }, 'body.extra'],
  ['an unknown field in data', { data: { ...validProxy(), colour: 'red' } }, 'body.data.colour'],
  ['an unknown field in a route', { data: withRoute({ weight: 1 }) }, 'body.data.routes.weight'],
  [
    'an unknown field in an array route',
    { data: { ...validProxy(), routes: [route, { ...route, path: '/b', weight: 1 }] } },
    'body.data.routes[1].weight',
  ],
  ['an unknown field in origin', { data: withOrigin({ host: 'x' }) }, 'body.data.routes.origin.host'],
  [
    'an unknown field in settings',
    { data: withRoute({ settings: { retries: 3 } }) },
    'body.data.routes.settings.retries',
  ],
  [
    'an unknown field in settings.cache',
    { data: withCache({ age: 1, ttl: 2 }) },
    'body.data.routes.settings.cache.ttl',
  ],
  [
    'an unknown field in settings.auth',
    { data: withRouteAuth({ role: 'admin' }) },
    'body.data.routes.settings.auth.role',
  ],
  ['an unknown field in auth', { data: { ...validProxy(), auth: { basic: {} } } }, 'body.data.auth.basic'],
  [
    'an unknown field in auth.signature',
    { data: withSignature({ algorithm: 'md5' }) },
    'body.data.auth.signature.algorithm',
  ],
  ['an unknown field in oauth', { data: withOAuth({ client_secret: 'x' }) }, 'body.data.oauth.client_secret'],
  // Wrong types.
  ['data not an object', { data: [validProxy()] }, 'body.data'],
  ['routes a string', { data: { ...validProxy(), routes: '/' } }, 'body.data.routes'],
  ['routes null', { data: { ...validProxy(), routes: null } }, 'body.data.routes'],
  ['origin a string', { data: withRoute({ origin: 'https://shop.example.com' }) }, 'body.data.routes.origin'],
  ['age a string', { data: withCache({ age: '10' }) }, 'body.data.routes.settings.cache.age'],
  ['age a fraction', { data: withCache({ age: 1.5 }) }, 'body.data.routes.settings.cache.age'],
  ['is_active "yes"', { data: { ...validProxy(), is_active: 'yes' } }, 'body.data.is_active'],
  ['is_active "true"', { data: { ...validProxy(), is_active: 'true' } }, 'body.data.is_active'],
  ['is_suspended 1', { data: { ...validProxy(), is_suspended: 1 } }, 'body.data.is_suspended'],
  ['is_bucket "false"', { data: withOrigin({ is_bucket: 'false' }) }, 'body.data.routes.origin.is_bucket'],
  ['key a number', { data: { ...validProxy(), key: 42 } }, 'body.data.key'],
  ['secret a number', { data: withSignature({ secret: 12345678901234 }) }, 'body.data.auth.signature.secret'],
  ['tenant_id a number', { data: { ...validProxy(), tenant_id: 7 } }, 'body.data.tenant_id'],
  // Missing required fields.
  ['no data', {}, 'body.data'],
  ['no key', { data: { routes: route } }, 'body.data.key'],
  ['no routes', { data: { key: 'rejected' } }, 'body.data.routes'],
  ['no origin', { data: withRoute({ origin: undefined }) }, 'body.data.routes.origin'],
  ['no origin uri', { data: withOrigin({ uri: undefined }) }, 'body.data.routes.origin.uri'],
  ['no route path', { data: withRoute({ path: undefined }) }, 'body.data.routes.path'],
  // Keys: 1-63 of a-z, 0-9 and "-", not starting or ending with "-".
  ...(
    [
      ['uppercase', 'MyShop'],
      ['a space', 'my shop'],
      ['an underscore', 'my_shop'],
      ['a slash', 'my/shop'],
      ['a dot', 'my.shop'],
      ['a leading hyphen', '-shop'],
      ['a trailing hyphen', 'shop-'],
      ['a non-ASCII letter', 'café'],
      ['64 characters', `k${'0'.repeat(62)}z`],
      ['nothing', ''],
    ] as const
  ).map(([what, key]): [string, unknown, string] => [
    `a key with ${what}`,
    { data: { ...validProxy(), key } },
    'body.data.key',
  ]),
  // Routes.
  ...['images', 'images/', '', '/with space', '/tab\there', '/new\nline', '**', 'https://example.com/x'].map(
    (path): [string, unknown, string] => [
      `route path ${JSON.stringify(path)}`,
      { data: withRoute({ path }) },
      'body.data.routes.path',
    ],
  ),
  ['a route path over 1024 characters', { data: withRoute({ path: `/${'p'.repeat(1024)}` }) }, 'body.data.routes.path'],
  [
    'an invalid path in an array route',
    { data: { ...validProxy(), routes: [route, { ...route, path: 'b' }] } },
    'body.data.routes[1].path',
  ],
  ...[
    'ftp://files.example.com/',
    'javascript:alert(1)',
    'file:///etc/passwd',
    '//shop.example.com',
    'shop.example.com',
    'http://',
    'https:///path-only',
    '',
  ].map((uri): [string, unknown, string] => [
    `origin uri ${JSON.stringify(uri)}`,
    { data: withOrigin({ uri }) },
    'body.data.routes.origin.uri',
  ]),
  [
    'an origin uri over 2048 characters',
    { data: withOrigin({ uri: `https://shop.example.com/${'u'.repeat(2048)}` }) },
    'body.data.routes.origin.uri',
  ],
  [
    'duplicate route paths',
    { data: { ...validProxy(), routes: [route, { path: '/', origin: { uri: 'https://other.example.com' } }] } },
    'body.data.routes',
  ],
  ['an empty routes array', { data: { ...validProxy(), routes: [] } }, 'body.data.routes'],
  [
    '101 routes',
    {
      data: { ...validProxy(), routes: Array.from({ length: 101 }, (_, index) => ({ ...route, path: `/r${index}` })) },
    },
    'body.data.routes',
  ],
  // Cache ages: whole seconds, 0 to one year.
  ['a negative route cache age', { data: withCache({ age: -1 }) }, 'body.data.routes.settings.cache.age'],
  ['a route cache age over a year', { data: withCache({ age: 31_536_001 }) }, 'body.data.routes.settings.cache.age'],
  [
    'a negative signature cache age',
    { data: withSignature({ cache: { age: -60 } }) },
    'body.data.auth.signature.cache.age',
  ],
  // Scopes.
  ...['admin', '*', 'PROXIES:READ', 'proxies:delete', ''].map((scope): [string, unknown, string] => [
    `route scope ${JSON.stringify(scope)}`,
    { data: withRouteAuth({ scope }) },
    'body.data.routes.settings.auth.scope',
  ]),
  [
    'an unknown signature auth scope',
    { data: withSignature({ auth: { scope: 'root' } }) },
    'body.data.auth.signature.auth.scope',
  ],
  // Signature and OAuth strings.
  ['a 15-character secret', { data: withSignature({ secret: 's'.repeat(15) }) }, 'body.data.auth.signature.secret'],
  ['a 257-character secret', { data: withSignature({ secret: 's'.repeat(257) }) }, 'body.data.auth.signature.secret'],
  ['an empty client_id', { data: withOAuth({ client_id: '' }) }, 'body.data.oauth.client_id'],
  ['a 201-character client_id', { data: withOAuth({ client_id: 'c'.repeat(201) }) }, 'body.data.oauth.client_id'],
  [
    'a return_url_key with a space',
    { data: withOAuth({ return_url_key: 'return url' }) },
    'body.data.oauth.return_url_key',
  ],
  [
    'a return_url_key with SQL',
    { data: withOAuth({ return_url_key: "x';DROP TABLE proxies;--" }) },
    'body.data.oauth.return_url_key',
  ],
  ['an issuer that is not http(s)', { data: withOAuth({ issuer: 'ldap://id.example.com' }) }, 'body.data.oauth.issuer'],
  [
    'an authorize_url that is not a URL',
    { data: withOAuth({ authorize_url: 'login page' }) },
    'body.data.oauth.authorize_url',
  ],
  // Text that PostgreSQL cannot store must be refused up front, not fail in the database.
  ['U+0000 in client_id', { data: withOAuth({ client_id: 'nul\u0000byte' }) }, 'body.data.oauth.client_id'],
  [
    'U+0000 in the secret',
    { data: withSignature({ secret: 'secret-with-nul-\u0000' }) },
    'body.data.auth.signature.secret',
  ],
  [
    'an unpaired surrogate in client_id',
    { data: withOAuth({ client_id: 'half \ud83d emoji' }) },
    'body.data.oauth.client_id',
  ],
  [
    'an unpaired surrogate in the secret',
    { data: withSignature({ secret: '0123456789abcdef\udc00' }) },
    'body.data.auth.signature.secret',
  ],
  ['an unpaired surrogate in a route path', { data: withRoute({ path: '/half\ud800' }) }, 'body.data.routes.path'],
];

describe('create with an invalid body is a 400 naming the field, and stores nothing', () => {
  it.each(invalidBodies)('%s', async (_what, body, field) => {
    const response = await rest.post(PROXIES, { token: owner.key, body });

    expectBadRequestOn(response, field);
    await expectNothingChanged();
  });
});

describe('PUT with an invalid body is a 400 naming the field, and leaves the proxy as it was', () => {
  // Keys are checked separately below: on PUT the body key is optional and must equal the path key.
  const replaceable = invalidBodies.filter(([, , field]) => field !== 'body.data.key');

  it.each(replaceable)('%s', async (_what, body, field) => {
    const data = (body as { data?: { key?: unknown } }).data;
    const request =
      data && typeof data === 'object' && !Array.isArray(data)
        ? { ...(body as object), data: { ...data, key: EXISTING } }
        : body;
    const response = await rest.put(`${PROXIES}/${EXISTING}`, { token: owner.key, body: request });

    expectBadRequestOn(response, field);
    await expectNothingChanged();
  });

  it('a body key different from the path key', async () => {
    const response = await rest.put(`${PROXIES}/${EXISTING}`, {
      token: owner.key,
      body: { data: validProxy('another-key') },
    });

    expectBadRequestOn(response, 'body.data.key');
    await expectNothingChanged();
    expect(await sql(databaseUrl, 'SELECT 1 FROM proxies WHERE key = $1', ['another-key'])).toEqual([]);
  });

  it('an invalid body key, even with a valid path key', async () => {
    const response = await rest.put(`${PROXIES}/${EXISTING}`, {
      token: owner.key,
      body: { data: validProxy('Existing') },
    });

    expectBadRequestOn(response, 'body.data.key');
    await expectNothingChanged();
  });
});

describe('an invalid key in the path', () => {
  const invalidPathKeys = [
    'MyShop',
    'my_shop',
    '-shop',
    'shop-',
    'my.shop',
    'my%20shop',
    'my%2Fshop',
    `k${'0'.repeat(62)}z`,
  ];

  it.each(invalidPathKeys)('GET %s is a 400', async (key) => {
    expectBadRequestOn(await rest.get(`${PROXIES}/${key}`, { token: owner.key }), 'path.key');
  });

  it.each(invalidPathKeys)('PUT %s is a 400 and changes nothing', async (key) => {
    const response = await rest.put(`${PROXIES}/${key}`, { token: owner.key, body: { data: { routes: route } } });

    expectBadRequestOn(response, 'path.key');
    await expectNothingChanged();
  });

  it('DELETE of a key that could never exist is a 404 (the spec lists no 400 for delete)', async () => {
    expectRestError(await rest.delete(`${PROXIES}/MyShop`, { token: owner.key }), 404, { message: MESSAGES[404] });
    await expectNothingChanged();
  });
});

describe('bodies that are not a JSON object', () => {
  const send = (method: 'POST' | 'PUT', rawBody: string | Buffer, contentType?: string) =>
    rest.request(method, method === 'POST' ? PROXIES : `${PROXIES}/${EXISTING}`, {
      token: owner.key,
      rawBody,
      headers: contentType ? { 'content-type': contentType } : {},
    });

  describe.each(['POST', 'PUT'] as const)('%s', (method) => {
    it('malformed JSON is a 400', async () => {
      const response = await send(method, '{"data": {"key": "rejected", "routes": ', 'application/json');

      expectBadRequestOn(response, 'body');
      await expectNothingChanged();
    });

    it('JSON with a trailing comma is a 400', async () => {
      const response = await send(
        method,
        JSON.stringify({ data: validProxy() }).replace(/}$/, ',}'),
        'application/json',
      );

      expectBadRequestOn(response, 'body');
      await expectNothingChanged();
    });

    it.each(['', 'null', '[]', '"data"', '42', 'true'])('the JSON body %j is a 400', async (rawBody) => {
      const response = await send(method, rawBody, 'application/json');

      expectBadRequestOn(response, 'body');
      await expectNothingChanged();
    });

    it('a valid JSON document sent as text/plain is a 415', async () => {
      // A body that would succeed as application/json: a new proxy, or a change to the existing one.
      const data = method === 'POST' ? validProxy() : { ...validProxy(EXISTING), is_active: true };
      const response = await send(method, JSON.stringify({ data }), 'text/plain');

      expectRestError(response, 415, { message: MESSAGES[415] });
      await expectNothingChanged();
    });

    it.each(['application/x-www-form-urlencoded', 'application/xml', 'multipart/form-data; boundary=x'])(
      '%s is a 415',
      async (contentType) => {
        const response = await send(method, 'data=x', contentType);

        expectRestError(response, 415, { message: MESSAGES[415] });
        await expectNothingChanged();
      },
    );

    it('a body without a content type is a 415', async () => {
      expectRestError(await send(method, JSON.stringify({ data: validProxy() })), 415, { message: MESSAGES[415] });
      await expectNothingChanged();
    });

    it('a body over 1 MiB is a 413', async () => {
      const body = JSON.stringify({ data: { ...validProxy(EXISTING), oauth: { client_id: 'x'.repeat(1024 * 1024) } } });
      expect(Buffer.byteLength(body)).toBeGreaterThan(1024 * 1024);

      expectRestError(await send(method, body, 'application/json'), 413, { message: MESSAGES[413] });
      await expectNothingChanged();
    });
  });

  it('a body just under 1 MiB is parsed and judged on its content (400, not 413)', async () => {
    const padding = 1024 * 1024 - 200;
    const body = JSON.stringify({ data: { ...validProxy(), oauth: { client_id: 'x'.repeat(padding) } } });
    expect(Buffer.byteLength(body)).toBeLessThanOrEqual(1024 * 1024);

    expectBadRequestOn(await send('POST', body, 'application/json'), 'body.data.oauth.client_id');
    await expectNothingChanged();
  });
});

describe('credentials', () => {
  /** One call of every proxy operation, with a body that would succeed for an authorised caller. */
  const everyOperation = (token: string | undefined, headers: Record<string, string> = {}) => {
    const options = (body?: unknown) => ({ ...(token ? { token } : {}), headers, ...(body ? { body } : {}) });
    return [
      ['list', () => rest.get(PROXIES, options())],
      ['create', () => rest.post(PROXIES, options({ data: validProxy('created-by-stranger') }))],
      ['get', () => rest.get(`${PROXIES}/${EXISTING}`, options())],
      ['replace', () => rest.put(`${PROXIES}/${EXISTING}`, options({ data: { routes: route } }))],
      ['delete', () => rest.delete(`${PROXIES}/${EXISTING}`, options())],
    ] as const;
  };

  const expectEveryOperation = async (
    calls: ReturnType<typeof everyOperation>,
    status: 200 | 401 | 403,
    only?: readonly string[],
  ) => {
    for (const [name, call] of calls) {
      if (only && !only.includes(name)) continue;
      const response = await call();
      if (status === 200) expect(response.status, `${name}: ${response.rawBody}`).toBe(200);
      else {
        expect(response.status, `${name}: ${response.rawBody}`).toBe(status);
        expectRestError(response, status, { message: MESSAGES[status] });
      }
    }
  };

  /** Issues a key through the admin API and returns its id too (createKey in the helpers keeps only the secret). */
  const issueKey = async (tenantId: string, scopes: string[]) => {
    const response = await rest.post(`/api/admin/tenants/${tenantId}/api-keys`, {
      token: TEST_MASTER_KEY,
      body: { data: { name: 'proxies test key', scopes } },
    });
    expect(response.status).toBe(201);
    return response.body.data as { id: string; key: string };
  };

  it('no Authorization header is a 401 on every operation, and nothing changes', async () => {
    await expectEveryOperation(everyOperation(undefined), 401);
    await expectNothingChanged();
  });

  it.each([
    ['a Basic header', 'Basic dXNlcjpwYXNz'],
    ['Bearer with garbage', 'Bearer garbage'],
    ['Bearer with nothing', 'Bearer '],
    [
      'a bare API key without "Bearer"',
      'cpk_00000000000000000000000000000000_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA',
    ],
    [
      'a well-formed but unknown API key',
      'Bearer cpk_0190a1b2c3d47e5f8a9b0c1d2e3f4a5b_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA',
    ],
    ['the master key (admin API only)', `Bearer ${TEST_MASTER_KEY}`],
  ])('%s is a 401 on every operation, and nothing changes', async (_what, authorization) => {
    await expectEveryOperation(everyOperation(undefined, { authorization }), 401);
    await expectNothingChanged();
  });

  it('a real key id with a wrong secret is a 401', async () => {
    const forged = owner.key.replace(/_[A-Za-z0-9_-]{43}$/, `_${'B'.repeat(43)}`);
    expect(forged).not.toBe(owner.key);

    await expectEveryOperation(everyOperation(forged), 401);
    await expectNothingChanged();
  });

  it('a revoked key is a 401 at once, even right after a successful use', async () => {
    const issued = await issueKey(owner.id, ['*']);
    expect((await rest.get(PROXIES, { token: issued.key })).status).toBe(200);

    const revoked = await rest.delete(`/api/admin/tenants/${owner.id}/api-keys/${issued.id}`, {
      token: TEST_MASTER_KEY,
    });
    expect(revoked.status).toBe(204);

    await expectEveryOperation(everyOperation(issued.key), 401);
    await expectNothingChanged();
  });

  it('a key with only proxies:read may list and get, but create, replace and delete are 403 and change nothing', async () => {
    const readOnly = (await issueKey(owner.id, ['proxies:read'])).key;
    const calls = everyOperation(readOnly);

    await expectEveryOperation(calls, 200, ['list', 'get']);
    await expectEveryOperation(calls, 403, ['create', 'replace', 'delete']);
    await expectNothingChanged();
    const listed = await rest.get(PROXIES, { token: readOnly });
    expect(listed.body.data.map((proxy: { key: string }) => proxy.key)).toEqual([EXISTING]);
  });

  it('a key with only proxies:write may write, but list and get are 403', async () => {
    const writeOnly = (await issueKey(owner.id, ['proxies:write'])).key;

    await expectEveryOperation(everyOperation(writeOnly), 403, ['list', 'get']);
    const created = await rest.post(PROXIES, { token: writeOnly, body: { data: validProxy('write-only') } });
    expect(created.status).toBe(201);
    expect((await rest.delete(`${PROXIES}/write-only`, { token: writeOnly })).status).toBe(204);
    await expectNothingChanged();
  });

  it('a key with only indexes:read is a 403 on every proxy operation, list included', async () => {
    const otherScope = (await issueKey(owner.id, ['indexes:read'])).key;

    await expectEveryOperation(everyOperation(otherScope), 403);
    await expectNothingChanged();
  });

  it('a key without the scope is refused before the body is looked at for conflicts', async () => {
    const readOnly = (await issueKey(owner.id, ['proxies:read'])).key;
    // The key exists: an authorised caller would get a 409; this one must get a 403.
    expectRestError(await rest.post(PROXIES, { token: readOnly, body: { data: validProxy(EXISTING) } }), 403, {
      message: MESSAGES[403],
    });
    await expectNothingChanged();
  });
});

describe('methods and paths', () => {
  it('PATCH on a proxy is a 405 with an Allow header, and changes nothing', async () => {
    const response = await rest.request('PATCH', `${PROXIES}/${EXISTING}`, {
      token: owner.key,
      body: { data: { is_active: true } },
    });

    expectRestError(response, 405, { message: MESSAGES[405] });
    expect(response.headers.allow?.split(/,\s*/).sort()).toEqual(['DELETE', 'GET', 'HEAD', 'PUT']);
    await expectNothingChanged();
  });

  it('PATCH or PUT on the collection and POST on a proxy are 405s naming the allowed methods', async () => {
    for (const method of ['PATCH', 'PUT', 'DELETE'] as const) {
      const response = await rest.request(method, PROXIES, { token: owner.key, body: { data: validProxy() } });
      expectRestError(response, 405, { message: MESSAGES[405] });
      expect(response.headers.allow?.split(/,\s*/).sort()).toEqual(['GET', 'HEAD', 'POST']);
    }
    const post = await rest.post(`${PROXIES}/${EXISTING}`, { token: owner.key, body: { data: validProxy() } });
    expectRestError(post, 405, { message: MESSAGES[405] });
    expect(post.headers.allow?.split(/,\s*/).sort()).toEqual(['DELETE', 'GET', 'HEAD', 'PUT']);
    await expectNothingChanged();
  });

  it('HEAD answers like GET without a body', async () => {
    const head = await app.inject({
      method: 'HEAD',
      url: `${PROXIES}/${EXISTING}`,
      headers: { authorization: `Bearer ${owner.key}` },
    });
    expect(head.statusCode).toBe(200);
    expect(head.body).toBe('');
    expect(head.headers['content-type']).toMatch(/^application\/json/);
    const missing = await app.inject({
      method: 'HEAD',
      url: `${PROXIES}/nope`,
      headers: { authorization: `Bearer ${owner.key}` },
    });
    expect(missing.statusCode).toBe(404);
  });

  it('a 401 names the Bearer scheme and the resource metadata in WWW-Authenticate', async () => {
    const response = await rest.get(PROXIES);
    expectRestError(response, 401, { message: MESSAGES[401] });
    expect(response.headers['www-authenticate']).toMatch(
      /^Bearer resource_metadata="http:\/\/[^"]+\/\.well-known\/oauth-protected-resource"$/,
    );
  });

  it.each(['/api/does-not-exist', '/api/storage/edge/proxy', `${PROXIES}/${EXISTING}/routes`, '/api/storage/edge'])(
    'an unknown path %s is a 404 envelope',
    async (path) => {
      expectRestError(await rest.get(path, { token: owner.key }), 404, { message: MESSAGES[404] });
    },
  );
});
