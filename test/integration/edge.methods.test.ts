/**
 * POST, PUT, PATCH, DELETE and OPTIONS through the edge: streamed to the origin and back, never
 * stored, under the routes' authentication, bounded by EDGE_MAX_REQUEST_BYTES, and a success
 * invalidating the stored GET of the same path.
 */
import http from 'node:http';
import { beforeAll, describe, expect, it } from 'vitest';
import { createTenant, type Tenant } from '../helpers/app';
import { edgeGet, edgeRequest, proxyWith, startEdgeApp, startOrigin } from '../helpers/edge';

const MAX_REQUEST_BYTES = 1024;
const { rest, baseUrl } = await startEdgeApp({ EDGE_MAX_REQUEST_BYTES: String(MAX_REQUEST_BYTES) });
const PROXIES = '/api/storage/edge/proxies';

/** Chunks of the request body received so far, by request id, for the streaming test. */
const received = new Map<string, Buffer[]>();
let served = 0;
const origin = await startOrigin((request, response) => {
  served += 1;
  const chunks: Buffer[] = [];
  received.set(String(request.headers['x-test-id'] ?? ''), chunks);
  request.on('data', (chunk: Buffer) => chunks.push(chunk));
  request.on('end', () => {
    const path = request.url!.split('?')[0]!;
    if (path.endsWith('/fail') && request.method !== 'GET') response.statusCode = 400;
    else if (request.method === 'POST') response.statusCode = 201;
    response.setHeader('content-type', 'application/json');
    // A GET with a cookie would not be stored.
    if (request.method !== 'GET') response.setHeader('set-cookie', ['cart=42; Path=/; HttpOnly', 'seen=1']);
    response.setHeader('cache-tag', 'cart');
    response.end(
      JSON.stringify({
        method: request.method,
        url: request.url,
        body: Buffer.concat(chunks).toString(),
        contentType: request.headers['content-type'] ?? null,
        served,
      }),
    );
  });
});

let tenant: Tenant;
const url = (path: string) => `${baseUrl}/edge/shop${path}`;

beforeAll(async () => {
  tenant = await createTenant(rest, 'Methods tenant');
  const created = await rest.post(PROXIES, {
    token: tenant.key,
    body: proxyWith('shop', [
      { path: '/', origin: { uri: origin.url }, settings: { cache: { age: 300, is_public: true } } },
      { path: '/account', origin: { uri: `${origin.url}/account` }, settings: { auth: { is_required: true } } },
    ]),
  });
  expect(created.status).toBe(201);
});

describe('methods other than GET and HEAD', () => {
  it('pass POST, PUT, PATCH, DELETE and OPTIONS with their bodies, and Set-Cookie back, never stored', async () => {
    for (const method of ['POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']) {
      for (const attempt of [1, 2]) {
        const before = served;
        const response = await edgeRequest(url('/cart/items?x=1'), {
          method,
          headers: { 'content-type': 'application/json' },
          body: `{"attempt":${attempt}}`,
        });
        expect(response.status, `${method} ${response.text}`).toBe(method === 'POST' ? 201 : 200);
        expect(response.headers['x-cache']).toBe('MISS');
        expect(response.headers['set-cookie']).toEqual(['cart=42; Path=/; HttpOnly', 'seen=1']);
        expect(response.headers['cache-tag']).toBeUndefined();
        expect(response.json).toMatchObject({
          method,
          url: '/cart/items?x=1',
          body: `{"attempt":${attempt}}`,
          contentType: 'application/json',
        });
        expect(served).toBe(before + 1);
      }
    }
  });

  it('streams the request body to the origin as it arrives', async () => {
    const answer = new Promise<{ status: number; text: string }>((resolve, reject) => {
      const request = http.request(
        url('/upload'),
        { method: 'PUT', headers: { 'x-test-id': 'stream', 'content-type': 'text/plain' }, agent: false },
        (response) => {
          let text = '';
          response.on('data', (chunk: Buffer) => (text += chunk.toString()));
          response.on('end', () => resolve({ status: response.statusCode!, text }));
        },
      );
      request.on('error', reject);
      request.write('first part;');
      // The rest is sent only once the origin holds the first part: a buffering edge would wait forever.
      void expect
        .poll(() => Buffer.concat(received.get('stream') ?? []).toString(), { timeout: 5_000 })
        .toBe('first part;')
        .then(() => request.end('second part'), reject);
    });
    const response = await answer;
    expect(response.status).toBe(200);
    expect(JSON.parse(response.text).body).toBe('first part;second part');
  });

  it('invalidate the stored GET of the path on success, not on an error', async () => {
    expect((await edgeGet(url('/basket'))).headers['x-cache']).toBe('MISS');
    expect((await edgeGet(url('/basket?page=2'))).headers['x-cache']).toBe('MISS');
    expect((await edgeGet(url('/basket/other'))).headers['x-cache']).toBe('MISS');
    expect((await edgeGet(url('/basket'))).headers['x-cache']).toBe('HIT');

    const posted = await edgeRequest(url('/basket'), { method: 'POST', body: 'add' });
    expect(posted.status).toBe(201);
    expect((await edgeGet(url('/basket'))).headers['x-cache']).toBe('MISS');
    expect((await edgeGet(url('/basket?page=2'))).headers['x-cache']).toBe('MISS');
    expect((await edgeGet(url('/basket/other'))).headers['x-cache']).toBe('HIT');

    await edgeGet(url('/basket/fail'));
    const failed = await edgeRequest(url('/basket/fail'), { method: 'DELETE' });
    expect(failed.status).toBe(400);
    expect((await edgeGet(url('/basket/fail'))).headers['x-cache']).toBe('HIT');
    // OPTIONS is safe: it changes nothing at the origin.
    await edgeRequest(url('/basket'), { method: 'OPTIONS' });
    expect((await edgeGet(url('/basket'))).headers['x-cache']).toBe('HIT');
  });

  it('apply the route authentication before the origin is asked', async () => {
    const before = served;
    const refused = await edgeRequest(url('/account/orders'), { method: 'POST', body: 'order' });
    expect(refused.status).toBe(401);
    expect(refused.json.error.code).toBe(401);
    expect(served).toBe(before);
    const accepted = await edgeRequest(url('/account/orders'), {
      method: 'POST',
      body: 'order',
      headers: { authorization: `Bearer ${tenant.key}` },
    });
    expect(accepted.status).toBe(201);
    expect(accepted.json.body).toBe('order');
  });

  it(`refuse a body over EDGE_MAX_REQUEST_BYTES with 413 in the error envelope`, async () => {
    const before = served;
    const declared = await edgeRequest(url('/cart'), { method: 'POST', body: 'x'.repeat(MAX_REQUEST_BYTES + 1) });
    expect(declared.status).toBe(413);
    expect(declared.json.error).toMatchObject({ code: 413 });
    expect(declared.json.error.message).toContain('EDGE_MAX_REQUEST_BYTES');
    expect(served).toBe(before);

    // Without Content-Length the body is counted as it streams.
    const chunked = await new Promise<{ status: number; text: string }>((resolve, reject) => {
      const request = http.request(url('/cart'), { method: 'POST', agent: false }, (response) => {
        let text = '';
        response.on('data', (chunk: Buffer) => (text += chunk.toString()));
        response.on('end', () => resolve({ status: response.statusCode!, text }));
      });
      request.on('error', reject);
      request.write('x'.repeat(600));
      request.end('x'.repeat(600));
    });
    expect(chunked.status).toBe(413);
    expect(JSON.parse(chunked.text).error.code).toBe(413);

    const fits = await edgeRequest(url('/cart'), { method: 'POST', body: 'x'.repeat(MAX_REQUEST_BYTES) });
    expect(fits.status).toBe(201);
    expect(fits.json.body.length).toBe(MAX_REQUEST_BYTES);
  });

  it('refuse a GET or HEAD declaring a body over EDGE_MAX_REQUEST_BYTES with 413, the origin not asked', async () => {
    const before = served;
    for (const method of ['GET', 'HEAD']) {
      const refused = await edgeRequest(url('/page'), { method, body: 'x'.repeat(MAX_REQUEST_BYTES + 1) });
      expect(refused.status).toBe(413);
      expect(refused.headers['x-cache']).toBe('MISS');
      expect(refused.headers['x-request-id']).toEqual(expect.any(String));
      if (method === 'GET') expect(refused.json.error.code).toBe(413);
    }
    expect(served).toBe(before);
  });

  it('answer an undecodable path with 400 in the error envelope, the origin not asked', async () => {
    const before = served;
    const refused = await edgeGet(url('/%E0%A4%A'));
    expect(refused.status).toBe(400);
    expect(refused.json.error).toMatchObject({ code: 400, details: [{ field: 'path' }] });
    expect(served).toBe(before);
  });
});
