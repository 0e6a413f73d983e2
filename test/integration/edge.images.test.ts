/**
 * Image transforms of image routes (`settings.image`): width, height, fit, format (auto from
 * Accept) and quality; allow-listed sizes or signed URLs; input pixel limits against decompression
 * bombs; variants cached and purged by tag with their source; errors in the envelope; refused settings.
 * Fixture images are made with sharp, and answers are read back with it.
 */
import { createHmac } from 'node:crypto';
import sharp from 'sharp';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { createTenant, type Tenant } from '../helpers/app';
import { sql } from '../helpers/db';
import { expectRestError } from '../helpers/rest';
import { edgeGet, proxyWith, startEdgeApp, startOrigin } from '../helpers/edge';

const { rest, baseUrl, databaseUrl, services } = await startEdgeApp();
const PROXIES = '/api/storage/edge/proxies';
const SECRET = 'image-secret-0123456789';

const photo = await sharp({
  create: { width: 1200, height: 800, channels: 3, background: { r: 200, g: 80, b: 40 } },
})
  .jpeg()
  .toBuffer();
const logo = await sharp({
  create: { width: 300, height: 300, channels: 4, background: { r: 0, g: 0, b: 255, alpha: 0.5 } },
})
  .png()
  .toBuffer();
/** Small on the wire, 16 million pixels once decoded: over the route's limit of 10 million. */
const bomb = await sharp({ create: { width: 4000, height: 4000, channels: 3, background: 'black' } })
  .png({ compressionLevel: 9 })
  .toBuffer();

const origin = await startOrigin((request, response) => {
  const path = request.url!.split('?')[0]!;
  const send = (type: string, body: Buffer | string) => {
    response.setHeader('content-type', type);
    response.setHeader('cache-tag', `image-${path.split('/').pop()}`);
    response.end(body);
  };
  if (path.endsWith('/photo.jpg')) return send('image/jpeg', photo);
  if (path.endsWith('/logo.png')) return send('image/png', logo);
  if (path.endsWith('/bomb.png')) return send('image/png', bomb);
  if (path.endsWith('/text.jpg')) return send('image/jpeg', 'not an image at all');
  response.statusCode = 404;
  response.end('missing');
});
const originCount = (name: string) => origin.requests.filter((r) => r.url.startsWith(`/img/${name}`)).length;

let tenant: Tenant;
beforeAll(async () => {
  tenant = await createTenant(rest, 'Image tenant');
  const created = await rest.post(PROXIES, {
    token: tenant.key,
    body: proxyWith(
      'pics',
      {
        path: '/img',
        origin: { uri: `${origin.url}/img` },
        settings: {
          cache: { age: 300 },
          image: { is_enabled: true, sizes: ['200x0', '100x100', '0x50'], max_input_pixels: 10_000_000 },
        },
      },
      { auth: { signature: { secret: SECRET } } },
    ),
  });
  expect(created.status, created.rawBody).toBe(201);
});

const get = (query: string, headers: Record<string, string> = {}) =>
  edgeGet(`${baseUrl}/edge/pics/img/${query}`, headers);
const sign = (path: string, options: string, expires = Math.floor(Date.now() / 1000) + 600) =>
  `expires=${expires}&signature=${createHmac('sha256', SECRET).update(`${path}?${options}\n${expires}`).digest('hex')}`;

describe('image transforms', () => {
  it('resizes to an allow-listed width in the format asked for, keeping the aspect ratio', async () => {
    const answer = await get('photo.jpg?w=200&format=webp');
    expect(answer.status, answer.text).toBe(200);
    expect(answer.headers['content-type']).toBe('image/webp');
    expect(Number(answer.headers['content-length'])).toBe(answer.body.length);
    const meta = await sharp(answer.body).metadata();
    expect([meta.format, meta.width, meta.height]).toEqual(['webp', 200, 133]);
  });

  it('covers a fixed box, and picks avif, webp or the source format from Accept with format=auto', async () => {
    const cases: [string, string][] = [
      ['image/avif,image/webp,*/*', 'heif'],
      ['image/webp,*/*', 'webp'],
      ['*/*', 'jpeg'],
    ];
    for (const [accept, format] of cases) {
      const answer = await get('photo.jpg?w=100&h=100&fit=cover&format=auto&q=60', { accept });
      expect(answer.status, answer.text).toBe(200);
      expect(answer.headers.vary).toBe('accept');
      const meta = await sharp(answer.body).metadata();
      expect([meta.format, meta.width, meta.height], accept).toEqual([format, 100, 100]);
    }
    const png = await get('logo.png?h=50&format=auto', { accept: '*/*' });
    const meta = await sharp(png.body).metadata();
    expect([meta.format, meta.width, meta.height, meta.hasAlpha]).toEqual(['png', 50, 50, true]);
  });

  it('caches a variant, fetching its source once, and purges it by tag with the source', async () => {
    const before = originCount('logo.png');
    const first = await get('logo.png?w=100&h=100&format=webp');
    expect(first.headers['x-cache']).toBe('MISS');
    const again = await get('logo.png?w=100&h=100&format=webp');
    expect(again.headers['x-cache']).toBe('HIT');
    expect(again.body.equals(first.body)).toBe(true);
    const many = await Promise.all(Array.from({ length: 10 }, () => get('logo.png?w=200&format=png')));
    for (const answer of many) expect(answer.status).toBe(200);
    // The source is fetched at most once (the test before may have cached it already).
    expect(originCount('logo.png') - before).toBeLessThanOrEqual(1);
    const fetched = originCount('logo.png');

    const purged = await rest.delete(`${PROXIES}/pics/cache?tag=image-logo.png`, { token: tenant.key });
    expect(purged.status).toBe(204);
    expect((await get('logo.png?w=100&h=100&format=webp')).headers['x-cache']).toBe('MISS');
    expect(originCount('logo.png')).toBe(fetched + 1);
  });

  it('answers hits of listed sizes before the service, per Accept with format=auto', async () => {
    for (const accept of ['image/webp', '*/*']) await get('photo.jpg?w=200&format=auto', { accept });
    const serve = vi.spyOn(services.edge, 'serve');
    try {
      const webp = await get('photo.jpg?w=200&format=auto', { accept: 'image/webp' });
      const jpeg = await get('photo.jpg?w=200&format=auto', { accept: '*/*' });
      expect([webp.headers['x-cache'], webp.headers['content-type']]).toEqual(['HIT', 'image/webp']);
      expect([jpeg.headers['x-cache'], jpeg.headers['content-type']]).toEqual(['HIT', 'image/jpeg']);
      expect(serve).not.toHaveBeenCalled();
      expect((await get('photo.jpg?w=9&format=auto')).status).toBe(403);
      expect(serve).toHaveBeenCalled();
    } finally {
      serve.mockRestore();
    }
  });

  it('refuses a size not on the list unless the URL is signed for exactly those options', async () => {
    const refused = await get('photo.jpg?w=333');
    expectRestError(
      { status: refused.status, headers: refused.headers, body: refused.json, rawBody: refused.text } as never,
      403,
    );
    expect(refused.json.error.message).toMatch(/needs a signed URL/);
    const signed = await get(`photo.jpg?w=333&format=png&${sign('/img/photo.jpg', 'w=333&format=png')}`);
    expect(signed.status, signed.text).toBe(200);
    const meta = await sharp(signed.body).metadata();
    expect([meta.format, meta.width]).toEqual(['png', 333]);
    const tampered = await get(`photo.jpg?w=999&format=png&${sign('/img/photo.jpg', 'w=333&format=png')}`);
    expect(tampered.status).toBe(403);
    const expired = await get(`photo.jpg?w=333&${sign('/img/photo.jpg', 'w=333', 1000)}`);
    expect(expired.status).toBe(403);
  });

  it('answers bad options with a 400 in the envelope', async () => {
    for (const query of [
      'w=0',
      'w=5000',
      'w=abc',
      'w=200&w=200',
      'w=200&fit=stretch',
      'w=200&format=gif',
      'w=200&q=0',
      'w=200&q=101',
      `w=${'9'.repeat(5000)}`,
    ]) {
      const answer = await get(`photo.jpg?${query}`);
      expect(answer.status, query).toBe(400);
      expect(answer.json.error.code).toBe(400);
      expect(answer.json.meta).toBeNull();
    }
  });

  it('refuses a decompression bomb and a source that is no image with a 502, and passes a missing source on', async () => {
    const bombed = await get('bomb.png?w=200');
    expect(bombed.status).toBe(502);
    expect(bombed.json.error.message).toMatch(/pixel limit/i);
    const text = await get('text.jpg?w=200');
    expect(text.status).toBe(502);
    expect(text.json.error.code).toBe(502);
    const missing = await get('nothing.jpg?w=200');
    expect(missing.status).toBe(404);
    expect(missing.text).toBe('missing');
  });

  it('serves the image as it is without transform options', async () => {
    const plain = await get('photo.jpg');
    expect(plain.body.equals(photo)).toBe(true);
  });
});

describe('refused image settings', () => {
  const stored = () => sql(databaseUrl, "SELECT routes, updated_at FROM proxies WHERE key = 'pics'");
  it.each([
    ['a size without x', { is_enabled: true, sizes: ['200'] }],
    ['a huge size list', { is_enabled: true, sizes: Array.from({ length: 10_000 }, (_, i) => `${i}x${i}`) }],
    ['an overlong size', { is_enabled: true, sizes: ['1'.repeat(10_000) + 'x1'] }],
    ['no pixels', { is_enabled: true, max_input_pixels: 0 }],
    ['too many pixels', { is_enabled: true, max_input_pixels: 1e12 }],
    ['an unknown field', { is_enabled: true, formats: ['webp'] }],
    ['a string flag', { is_enabled: 'true' }],
  ])('refuses %s with a 400 that changes nothing', async (_name, image) => {
    const before = await stored();
    const response = await rest.put(`${PROXIES}/pics`, {
      token: tenant.key,
      body: proxyWith('pics', { path: '/img', origin: { uri: origin.url }, settings: { image } }),
    });
    expectRestError(response, 400);
    expect(await stored()).toEqual(before);
  });
});
