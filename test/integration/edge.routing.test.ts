/**
 * The edge data plane's routing against real origins on 127.0.0.1: prefix and wildcard routes,
 * query strings, headers in both directions, streaming, redirects, every error status, host-based
 * routing and the freshness of the configuration after a change through the REST API.
 */
import { once } from 'node:events';
import http from 'node:http';
import { beforeAll, describe, expect, it } from 'vitest';
import { createTenant, type Tenant } from '../helpers/app';
import { edgeGet, edgeRequest, proxyWith, startEdgeApp, startOrigin, type TestOrigin } from '../helpers/edge';

const ORIGIN_TIMEOUT_MS = 400;
const MAX_RESPONSE_BYTES = 4 * 1024 * 1024;
const { rest, baseUrl, port } = await startEdgeApp({
  EDGE_ORIGIN_TIMEOUT_MS: String(ORIGIN_TIMEOUT_MS),
  EDGE_MAX_RESPONSE_BYTES: String(MAX_RESPONSE_BYTES),
  EDGE_DOMAIN: 'edge.test',
});

const PROXIES = '/api/storage/edge/proxies';

/** Answers every request with a JSON description of what it received. */
const echo = await startOrigin((request, response) => {
  response.setHeader('content-type', 'application/json');
  response.setHeader('x-origin', 'echo');
  response.end(JSON.stringify({ method: request.method, url: request.url, headers: request.headers }));
});
const other = await startOrigin((request, response) => {
  response.setHeader('content-type', 'text/plain');
  response.end(`other ${request.url}`);
});

let tenant: Tenant;

async function createProxy(key: string, routes: unknown, extra: Record<string, unknown> = {}) {
  const response = await rest.post(PROXIES, { token: tenant.key, body: proxyWith(key, routes, extra) });
  expect(response.status).toBe(201);
}

const route = (path: string, origin: TestOrigin | string, settings?: unknown) => ({
  path,
  origin: { uri: typeof origin === 'string' ? origin : origin.url },
  ...(settings ? { settings } : {}),
});

beforeAll(async () => {
  tenant = await createTenant(rest, 'Routing tenant');
  await createProxy('shop', [
    route('/images', `${other.url}/static/img`),
    route('/images/large', `${echo.url}/big`),
    route('/api', echo),
    route('*', `${echo.url}/site`),
  ]);
});

describe('routing', () => {
  it('maps the rest of the path onto the origin of the longest matching prefix', async () => {
    const small = await edgeGet(`${baseUrl}/edge/shop/images/a.jpg`);
    expect(small.status).toBe(200);
    expect(small.text).toBe('other /static/img/a.jpg');
    const large = await edgeGet(`${baseUrl}/edge/shop/images/large/b.jpg`);
    expect(large.json.url).toBe('/big/b.jpg');
    const exact = await edgeGet(`${baseUrl}/edge/shop/images`);
    expect(exact.text).toBe('other /static/img');
  });

  it('matches prefixes on segment boundaries and sends everything else to the wildcard route', async () => {
    const response = await edgeGet(`${baseUrl}/edge/shop/imagesx/c.jpg`);
    expect(response.json.url).toBe('/site/imagesx/c.jpg');
    const root = await edgeGet(`${baseUrl}/edge/shop`);
    expect(root.json.url).toBe('/site/');
  });

  it('passes the query string through unchanged', async () => {
    const response = await edgeGet(`${baseUrl}/edge/shop/api/search?q=red%20shoes&page[size]=2&x=1&x=2`);
    expect(response.json.url).toBe('/search?q=red%20shoes&page[size]=2&x=1&x=2');
  });

  it('resolves dot segments before matching, so a path cannot climb out of its route', async () => {
    const response = await edgeGet(`${baseUrl}/edge/shop/images/../api/%2e%2e/api/x`);
    expect(response.json.url).toBe('/x');
  });

  it('answers 404 when no route matches a proxy without a wildcard route', async () => {
    await createProxy('no-wildcard', [route('/only', echo)]);
    const response = await edgeGet(`${baseUrl}/edge/no-wildcard/elsewhere`);
    expect(response.status).toBe(404);
    expect(response.json).toEqual({
      error: {
        code: 404,
        message: expect.stringMatching(/^Not found: could not find requested entity; no route/),
        details: null,
      },
      meta: null,
    });
    expect(echo.requests.some((r) => r.url.includes('elsewhere'))).toBe(false);
  });

  it('serves HEAD from the same routes without a body', async () => {
    const response = await edgeRequest(`${baseUrl}/edge/shop/api/head-check`, { method: 'HEAD' });
    expect(response.status).toBe(200);
    expect(response.body.length).toBe(0);
    expect(echo.requests.at(-1)).toMatchObject({ method: 'HEAD', url: '/head-check' });
  });

  it('refuses methods it does not pass through with 405 and Allow', async () => {
    const before = echo.requests.length;
    const response = await edgeRequest(`${baseUrl}/edge/shop/api/x`, { method: 'TRACE' });
    expect(response.status).toBe(405);
    expect(response.headers.allow).toBe('GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS');
    expect(response.json.error.code).toBe(405);
    expect(echo.requests.length).toBe(before);
  });
});

describe('headers', () => {
  it('strips hop-by-hop headers and the credential, and sets X-Forwarded-For/-Proto/-Host', async () => {
    const response = await edgeGet(`${baseUrl}/edge/shop/api/headers`, {
      connection: 'keep-alive, x-private-hop',
      'x-private-hop': 'secret',
      'keep-alive': 'timeout=5',
      te: 'trailers',
      'proxy-authorization': 'Basic abc',
      authorization: 'Bearer cpk_not_for_the_origin',
      'x-forwarded-for': '203.0.113.7',
      'x-custom': 'kept',
      cookie: 'session=1',
    });
    const sent = response.json.headers as Record<string, string>;
    for (const name of ['x-private-hop', 'keep-alive', 'te', 'proxy-authorization', 'authorization'])
      expect(sent[name]).toBeUndefined();
    expect(sent['x-custom']).toBe('kept');
    expect(sent.cookie).toBe('session=1');
    expect(sent['x-forwarded-for']).toBe('203.0.113.7, 127.0.0.1');
    expect(sent['x-forwarded-proto']).toBe('http');
    expect(sent['x-forwarded-host']).toBe(`127.0.0.1:${port}`);
    expect(sent.host).toBe(new URL(echo.url).host);
  });

  it('passes the origin headers on without its hop-by-hop ones, and says X-Cache and Age', async () => {
    const origin = await startOrigin((_request, response) => {
      response.setHeader('connection', 'close, x-hop');
      response.setHeader('x-hop', 'secret');
      response.setHeader('x-kept', 'yes');
      response.setHeader('set-cookie', ['a=1', 'b=2']);
      response.end('ok');
    });
    await createProxy('header-origin', route('/', origin));
    const response = await edgeGet(`${baseUrl}/edge/header-origin/`);
    expect(response.text).toBe('ok');
    expect(response.headers['x-hop']).toBeUndefined();
    expect(response.headers['x-kept']).toBe('yes');
    expect(response.headers['set-cookie']).toEqual(['a=1', 'b=2']);
    expect(response.headers['x-cache']).toBe('MISS');
    expect(response.headers.age).toBe('0');
  });

  it('passes redirects on instead of following them', async () => {
    const origin = await startOrigin((_request, response) => {
      response.writeHead(302, { location: 'http://elsewhere.example/next' }).end();
    });
    await createProxy('redirecting', route('/', origin));
    const response = await edgeGet(`${baseUrl}/edge/redirecting/start`);
    expect(response.status).toBe(302);
    expect(response.headers.location).toBe('http://elsewhere.example/next');
    expect(origin.requests).toHaveLength(1);
  });
});

describe('streaming', () => {
  it('streams a large body to the client while the origin is still sending it', async () => {
    const chunk = Buffer.alloc(256 * 1024, 'x');
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    const origin = await startOrigin(async (_request, response) => {
      response.writeHead(200, { 'content-type': 'application/octet-stream' });
      response.write(chunk);
      // The rest is only sent once the client has received the first part through the proxy.
      await released;
      for (let i = 0; i < 11; i++) if (!response.write(chunk)) await once(response, 'drain');
      response.end();
    });
    await createProxy('streaming', route('/', origin));

    const received = await new Promise<number>((resolve, reject) => {
      http
        .get(`${baseUrl}/edge/streaming/file.bin`, { agent: false }, (response) => {
          let bytes = 0;
          response.on('data', (data: Buffer) => {
            if (bytes === 0) release();
            bytes += data.length;
          });
          response.on('end', () => resolve(bytes));
          response.on('error', reject);
        })
        .on('error', reject);
    });
    expect(received).toBe(12 * chunk.length);
  });

  it('refuses a response whose Content-Length exceeds the limit with 502', async () => {
    const origin = await startOrigin((_request, response) => {
      response.writeHead(200, { 'content-length': String(MAX_RESPONSE_BYTES + 1) });
      response.write('partial');
    });
    await createProxy('too-large', route('/', origin));
    const response = await edgeGet(`${baseUrl}/edge/too-large/`);
    expect(response.status).toBe(502);
    expect(response.json.error.message).toMatch(/exceeds the limit of 4194304 bytes/);
  });

  it('cuts off a response without Content-Length once it exceeds the limit', async () => {
    const origin = await startOrigin(async (_request, response) => {
      response.writeHead(200, { 'content-type': 'application/octet-stream' });
      const chunk = Buffer.alloc(1024 * 1024);
      for (let i = 0; i < 6 && !response.destroyed; i++)
        if (!response.write(chunk)) await once(response, 'drain').catch(() => {});
      response.end();
    });
    await createProxy('too-long', route('/', origin));
    await expect(edgeGet(`${baseUrl}/edge/too-long/`)).rejects.toThrow();
  });
});

describe('statuses', () => {
  it('answers 404 for an unknown key and for an inactive proxy, 403 for a suspended one', async () => {
    const unknown = await edgeGet(`${baseUrl}/edge/no-such-proxy/state`);
    expect(unknown.status).toBe(404);
    expect(unknown.json.error.code).toBe(404);
    await createProxy('inactive', route('/', echo), { is_active: false });
    expect((await edgeGet(`${baseUrl}/edge/inactive/state`)).status).toBe(404);
    await createProxy('suspended', route('/', echo), { is_suspended: true });
    const suspended = await edgeGet(`${baseUrl}/edge/suspended/state`);
    expect(suspended.status).toBe(403);
    expect(suspended.json.error.message).toMatch(/^Forbidden: .*suspended/);
    expect(echo.requests.some((r) => r.url === '/state')).toBe(false);
  });

  it('answers 502 when the origin refuses the connection', async () => {
    const closed = await startOrigin(() => {});
    await closed.close();
    await createProxy('refused', route('/', closed));
    const response = await edgeGet(`${baseUrl}/edge/refused/`);
    expect(response.status).toBe(502);
    expect(response.json).toEqual({
      error: { code: 502, message: expect.stringMatching(/^Bad gateway: .*refused the connection$/), details: null },
      meta: null,
    });
  });

  it('answers 502 when the origin resets the connection', async () => {
    const origin = await startOrigin((request) => request.socket.resetAndDestroy());
    await createProxy('reset', route('/', origin));
    const response = await edgeGet(`${baseUrl}/edge/reset/`);
    expect(response.status).toBe(502);
    expect(response.json.error.message).toMatch(/^Bad gateway: /);
  });

  it('answers 504 when the origin does not answer in time', async () => {
    const origin = await startOrigin(() => {});
    await createProxy('slow', route('/', origin));
    const response = await edgeGet(`${baseUrl}/edge/slow/`);
    expect(response.status).toBe(504);
    expect(response.json.error.message).toBe(
      `Gateway timeout: the origin did not answer in time; the origin 127.0.0.1:${origin.port} did not answer within ${ORIGIN_TIMEOUT_MS} ms`,
    );
  });

  it("passes the origin's own error statuses on as they are", async () => {
    const origin = await startOrigin((_request, response) =>
      response.writeHead(503, { 'retry-after': '5' }).end('down'),
    );
    await createProxy('origin-error', route('/', origin));
    const response = await edgeGet(`${baseUrl}/edge/origin-error/`);
    expect(response.status).toBe(503);
    expect(response.text).toBe('down');
    expect(response.headers['retry-after']).toBe('5');
  });
});

describe('host-based routing with EDGE_DOMAIN', () => {
  it('serves every path of {key}.{EDGE_DOMAIN} from the proxy, the API paths included', async () => {
    const page = await edgeGet(`${baseUrl}/api/search?q=1`, { host: 'shop.edge.test' });
    expect(page.json.url).toBe('/search?q=1');
    const image = await edgeGet(`${baseUrl}/images/a.jpg`, { host: `shop.edge.test:${port}` });
    expect(image.text).toBe('other /static/img/a.jpg');
    const unknown = await edgeGet(`${baseUrl}/x`, { host: 'nobody.edge.test' });
    expect(unknown.status).toBe(404);
    expect(unknown.headers['x-cache']).toBe('MISS');
  });

  it('leaves other hosts to the API', async () => {
    const response = await edgeGet(`${baseUrl}/healthz`, { host: 'api.example.com' });
    expect(response.json).toEqual({ status: 'ok', database: 'up' });
  });
});

describe('configuration changes through the REST API', () => {
  it('are served at once by this process after PUT and DELETE', async () => {
    await createProxy('changing', route('/', echo));
    expect((await edgeGet(`${baseUrl}/edge/changing/a`)).json.url).toBe('/a');
    const replaced = await rest.put(`${PROXIES}/changing`, {
      token: tenant.key,
      body: { data: { routes: route('/', other) } },
    });
    expect(replaced.status).toBe(204);
    expect((await edgeGet(`${baseUrl}/edge/changing/a`)).text).toBe('other /a');
    expect((await rest.delete(`${PROXIES}/changing`, { token: tenant.key })).status).toBe(204);
    expect((await edgeGet(`${baseUrl}/edge/changing/a`)).status).toBe(404);
  });

  it('serve a proxy created after a request for its unknown key', async () => {
    expect((await edgeGet(`${baseUrl}/edge/late/a`)).status).toBe(404);
    await createProxy('late', route('/', echo));
    expect((await edgeGet(`${baseUrl}/edge/late/a`)).status).toBe(200);
  });
});
