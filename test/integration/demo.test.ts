/**
 * `GET /demo/{proxy key}`: the demo store's page for a public search engine, a 404 page for any
 * other key, and hostile keys (huge, odd characters, markup) that are never reflected unescaped.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { createTenant, startTestApp, type Tenant } from '../helpers/app';

const { app, rest } = await startTestApp();
let tenant: Tenant;

const get = (path: string) => app.inject({ method: 'GET', url: path, headers: { accept: 'text/html' } });

/** A proxy with search settings over a small index; `routeAuth` makes its search engine private. */
async function searchEngine(key: string, { routeAuth = false, suspended = false } = {}) {
  const proxy = await rest.post('/api/storage/edge/proxies', {
    token: tenant.key,
    body: {
      data: {
        key,
        routes: {
          path: '*',
          origin: { uri: 'https://shop.example.com' },
          ...(routeAuth ? { settings: { auth: { is_required: true } } } : {}),
        },
        is_suspended: suspended,
      },
    },
  });
  expect(proxy.status).toBe(201);
  const settings = await rest.put(`/api/instant/search/${key}/settings`, {
    token: tenant.key,
    body: { data: { indexes: [{ alias: 'demo-items' }] } },
  });
  expect(settings.status).toBe(200);
}

beforeAll(async () => {
  tenant = await createTenant(rest, 'Demo page tenant');
  const index = await rest.post('/api/instant/indexes', {
    token: tenant.key,
    body: { data: { name: 'Demo items', alias: 'demo-items', fields: [{ from: 'name', type: 'STRING' }] } },
  });
  expect(index.status).toBe(201);
  await searchEngine('public-store');
  await searchEngine('private-store', { routeAuth: true });
  await searchEngine('suspended-store', { suspended: true });
});

describe('the demo store page', () => {
  it('serves the shell and its script and stylesheet from this origin, with a strict policy', async () => {
    const page = await get('/demo/public-store');
    expect(page.statusCode).toBe(200);
    expect(page.headers['content-type']).toMatch(/^text\/html/);
    expect(page.headers['content-security-policy']).toContain("script-src 'self'");
    expect(page.headers['content-security-policy']).toContain("default-src 'none'");
    expect(page.body).toContain('data-key="public-store"');
    const scripts = [...page.body.matchAll(/<script([^>]*)>/g)].map((match) => match[1]);
    expect(scripts).toEqual([' src="/demo/assets/demo.js"']);
    for (const [asset, type] of [
      ['/demo/assets/demo.js', /javascript/],
      ['/demo/assets/demo.css', /text\/css/],
    ] as const) {
      const answer = await get(asset);
      expect(answer.statusCode, asset).toBe(200);
      expect(answer.headers['content-type']).toMatch(type);
    }
    expect((await get('/demo/assets/other.js')).statusCode).toBe(404);
  });

  it('answers a 404 page for an unknown key, and names why for a private or suspended engine', async () => {
    const unknown = await get('/demo/no-such-store');
    expect(unknown.statusCode).toBe(404);
    expect(unknown.headers['content-type']).toMatch(/^text\/html/);
    expect(unknown.body).toContain('No public search engine has this key');
    const hidden = await get('/demo/private-store');
    expect(hidden.statusCode).toBe(403);
    expect(hidden.body).toContain('This search engine is private');
    const suspended = await get('/demo/suspended-store');
    expect(suspended.statusCode).toBe(403);
    expect(suspended.body).toContain('suspended');
  });

  it.each([
    ['markup', '/demo/%3Cscript%3Ealert(1)%3C%2Fscript%3E', '&lt;script&gt;alert(1)&lt;/script&gt;'],
    ['quotes', '/demo/%22%20onmouseover%3D%22alert(1)', '&quot; onmouseover=&quot;alert(1)'],
    ['upper case', '/demo/PUBLIC-STORE', 'PUBLIC-STORE'],
    ['non-ASCII', '/demo/%C3%BCber-store', 'über-store'],
    ['encoded slash', '/demo/a%2Fb', 'a/b'],
    ['a leading dash', '/demo/-store', '-store'],
  ])('answers a 404 page for a key with %s, escaped', async (_name, path, shown) => {
    const answer = await get(path);
    expect(answer.statusCode, path).toBe(404);
    expect(answer.headers['content-type']).toMatch(/^text\/html/);
    expect(answer.body).toContain(`<code>${shown}</code>`);
    expect(answer.body).not.toMatch(/<script>alert|" onmouseover/);
  });

  it('answers a huge key with a short page, and a key beyond the path limit with the usual 400', async () => {
    const huge = await get(`/demo/${'a'.repeat(16_000)}`);
    expect(huge.statusCode).toBe(404);
    expect(huge.body.length).toBeLessThan(2_000);
    expect(huge.body).toContain(`${'a'.repeat(80)}…`);
    const hugeMarkup = await get(`/demo/${'%3C'.repeat(5_000)}`);
    expect(hugeMarkup.statusCode).toBe(404);
    expect(hugeMarkup.body).not.toContain('<<');
    const beyond = await get(`/demo/${'a'.repeat(20_000)}`);
    expect(beyond.statusCode).toBe(400);
    expect(beyond.json().error.message).toMatch(/path segment is longer than 16384 characters/);
  });

  it('refuses a NUL or an invalid percent-encoding in the key as any path does', async () => {
    for (const path of ['/demo/a%00b', '/demo/%zz', '/demo/%ED%A0%80']) {
      const answer = await get(path);
      expect([400, 404], path).toContain(answer.statusCode);
      expect(answer.body).not.toContain('\u0000');
      if (answer.statusCode === 404) expect(answer.body).toContain('<code>a\ufffdb</code>');
    }
  });
});
