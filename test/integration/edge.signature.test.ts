/**
 * Signed wildcard routes: a request served by the wildcard route of a proxy with a signature
 * secret needs `expires` and a valid `signature`; signed responses are cached for
 * `auth.signature.cache.age`.
 */
import { createHmac } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { createTenant } from '../helpers/app';
import { edgeGet, proxyWith, startEdgeApp, startOrigin } from '../helpers/edge';

const { rest, baseUrl } = await startEdgeApp();

const SECRET = 'signing-secret-0123456789';
const origin = await startOrigin((request, response) => {
  response.setHeader('content-type', 'text/plain');
  response.end(`origin ${request.url}`);
});

/** Signs as docs/guides/edge.md tells users to: hex HMAC-SHA256 of "<path>\n<expires>". */
const sign = (path: string, expires: number, secret = SECRET) =>
  createHmac('sha256', secret).update(`${path}\n${expires}`).digest('hex');
const inOneHour = () => Math.floor(Date.now() / 1000) + 3600;
const signedUrl = (path: string, expires = inOneHour(), extra = '') =>
  `${baseUrl}/edge/signed${path}?${extra}expires=${expires}&signature=${sign(path, expires)}`;

beforeAll(async () => {
  const tenant = await createTenant(rest, 'Signing tenant');
  const created = await rest.post('/api/storage/edge/proxies', {
    token: tenant.key,
    body: proxyWith(
      'signed',
      [
        { path: '/public', origin: { uri: `${origin.url}/public` } },
        { path: '*', origin: { uri: `${origin.url}/files` } },
      ],
      { auth: { signature: { secret: SECRET, cache: { age: 600, is_public: true } } } },
    ),
  });
  expect(created.status).toBe(201);
});

const forbidden = (reason: RegExp) => ({
  error: {
    code: 403,
    message: expect.stringMatching(
      new RegExp(`^Forbidden: the URL signature is missing, malformed, expired or wrong; ${reason.source}`),
    ),
    details: null,
  },
  meta: null,
});

describe('signed wildcard routes', () => {
  it('serve a request with a valid signature, without the signature parameters reaching the origin', async () => {
    const before = origin.requests.length;
    const response = await edgeGet(signedUrl('/docs/a.pdf', inOneHour(), 'v=2&'));
    expect(response.status).toBe(200);
    expect(response.text).toBe('origin /files/docs/a.pdf?v=2');
    expect(origin.requests.length).toBe(before + 1);
  });

  it('refuse a request without a signature', async () => {
    const response = await edgeGet(`${baseUrl}/edge/signed/docs/b.pdf`);
    expect(response.status).toBe(403);
    expect(response.json).toEqual(forbidden(/the wildcard route needs/));
    const onlyExpires = await edgeGet(`${baseUrl}/edge/signed/docs/b.pdf?expires=${inOneHour()}`);
    expect(onlyExpires.status).toBe(403);
  });

  it('refuse an expired signature', async () => {
    const expired = Math.floor(Date.now() / 1000) - 1;
    const response = await edgeGet(signedUrl('/docs/c.pdf', expired));
    expect(response.status).toBe(403);
    expect(response.json).toEqual(forbidden(/the signed URL has expired/));
  });

  it('refuse a tampered path, expiry or signature', async () => {
    const expires = inOneHour();
    const signature = sign('/docs/d.pdf', expires);
    const urls = [
      `${baseUrl}/edge/signed/docs/other.pdf?expires=${expires}&signature=${signature}`,
      `${baseUrl}/edge/signed/docs/d.pdf?expires=${expires + 1}&signature=${signature}`,
      `${baseUrl}/edge/signed/docs/d.pdf?expires=${expires}&signature=${signature.slice(0, -1)}${signature.endsWith('0') ? '1' : '0'}`,
      `${baseUrl}/edge/signed/docs/d.pdf?expires=${expires}&signature=${sign('/docs/d.pdf', expires, 'another-secret-0123456789')}`,
      `${baseUrl}/edge/signed/docs/d.pdf?expires=${expires}&signature=not-hex`,
    ];
    const before = origin.requests.length;
    for (const url of urls) {
      const response = await edgeGet(url);
      expect(response.status, url).toBe(403);
      expect(response.json.error.message).toMatch(
        /^Forbidden: the URL signature is missing, malformed, expired or wrong; (the signature does not match|"expires" must be Unix seconds)$/,
      );
      expect(response.json.error.message).not.toContain('scopes');
    }
    expect(origin.requests.length).toBe(before);
  });

  it('accept the signature in either case of hex', async () => {
    const expires = inOneHour();
    const response = await edgeGet(
      `${baseUrl}/edge/signed/docs/e.pdf?expires=${expires}&signature=${sign('/docs/e.pdf', expires).toUpperCase()}`,
    );
    expect(response.status).toBe(200);
  });

  it('are not needed on prefix routes', async () => {
    const response = await edgeGet(`${baseUrl}/edge/signed/public/logo.svg`);
    expect(response.status).toBe(200);
    expect(response.text).toBe('origin /public/logo.svg');
  });

  it('cache signed responses for auth.signature.cache.age, whatever the expiry of each URL', async () => {
    const first = await edgeGet(signedUrl('/docs/cached.pdf', inOneHour()));
    expect(first.headers['x-cache']).toBe('MISS');
    expect(first.headers['cache-control']).toBe('public, max-age=600');
    const second = await edgeGet(signedUrl('/docs/cached.pdf', inOneHour() + 60));
    expect(second.headers['x-cache']).toBe('HIT');
    expect(second.text).toBe('origin /files/docs/cached.pdf');
    expect(origin.requests.filter((r) => r.url === '/files/docs/cached.pdf')).toHaveLength(1);
    // A cached response still needs a valid signature.
    const unsigned = await edgeGet(`${baseUrl}/edge/signed/docs/cached.pdf`);
    expect(unsigned.status).toBe(403);
  });
});
