/**
 * What a person or a code generator opens first: `/` (HTML or JSON), the contracts as files
 * (`/openapi.yaml`, `/openapi.json`, `/graphql/schema.graphql`, cacheable with ETags), the API
 * reference page and GraphiQL, each page with its assets served from this origin.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildSchema, findBreakingChanges, findDangerousChanges } from 'graphql';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { buildGraphQLSchema } from '../../src/app';
import { OPENAPI_FILE } from '../../src/kernel/rest/openapi-yaml';
import { documentationFiles } from '../../src/modules/reference/documentation';
import { outlineOf } from '../../src/modules/reference/markdown';
import { startTestApp } from '../helpers/app';

const t = await startTestApp();
const get = (url: string, headers: Record<string, string> = {}) => t.app.inject({ method: 'GET', url, headers });
const committed = parse(readFileSync(OPENAPI_FILE, 'utf8'));
const root = join(import.meta.dirname, '..', '..');
const BROWSER_ACCEPT = 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8';

describe('served contracts', () => {
  it.each([
    ['/openapi.yaml', /^application\/yaml/],
    ['/openapi.json', /^application\/json/],
    ['/graphql/schema.graphql', /^text\/plain/],
  ])('%s is public, cacheable, and 304 for a client that has it', async (url, type) => {
    const response = await get(url);
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toMatch(type);
    expect(response.headers['cache-control']).toBe('public, max-age=300');
    const etag = String(response.headers.etag);
    expect(etag).toMatch(/^"[\w-]{43}"$/);
    const again = await get(url, { 'if-none-match': `"other", ${etag}` });
    expect(again.statusCode).toBe(304);
    expect(again.body).toBe('');
    expect((await get(url, { 'if-none-match': '"other"' })).statusCode).toBe(200);
  });

  it('serves the committed OpenAPI contract with servers naming this deployment, in YAML and JSON alike', async () => {
    const json = (await get('/openapi.json')).json();
    const yaml = parse((await get('/openapi.yaml')).body);
    expect(json.servers).toEqual([{ url: t.services.baseUrl }]);
    expect(yaml).toEqual(json);
    expect({ ...json, servers: committed.servers }).toEqual(committed);
  });

  it("serves the SDL of the service's schema", async () => {
    const sdl = (await get('/graphql/schema.graphql')).body;
    expect(sdl).toContain('type Query');
    expect(sdl).toContain('enum ErrorCode');
    // The same types, fields and arguments as the schema the service executes: no change either way.
    const served = buildSchema(sdl);
    const executed = buildGraphQLSchema();
    for (const [from, to] of [
      [served, executed],
      [executed, served],
    ] as const) {
      expect(findBreakingChanges(from, to)).toEqual([]);
      expect(findDangerousChanges(from, to)).toEqual([]);
    }
  });
});

describe('the REST reference', () => {
  it("lists a tenant's groups first and the operator's Admin group last, each with what it is for", () => {
    const tags = committed.tags as { name: string; description: string }[];
    const used = new Set(
      Object.values(committed.paths as Record<string, Record<string, { tags: string[] }>>).flatMap((item) =>
        Object.values(item).flatMap((operation) => operation.tags),
      ),
    );
    expect(new Set(tags.map((tag) => tag.name))).toEqual(used);
    expect(tags[0]!.name).toBe('Edge proxies');
    expect(tags.at(-1)!.name).toBe('Admin');
    for (const tag of tags) expect(tag.description, tag.name).toMatch(/\(\/docs\/[a-z/-]+\.md[#a-z-]*\)/);
  });

  it('opens by saying that the catalog, stock, orders and reservations are GraphQL, linking /graphql', () => {
    const intro = committed.info.description as string;
    expect(intro).toMatch(/catalog .*stock, orders and reservations.* are GraphQL/);
    expect(intro).toContain('[/graphql](/graphql)');
  });
});

describe('pages', () => {
  it('/ is a page of links for a browser and JSON for anything else', async () => {
    const json = await get('/');
    expect(json.statusCode).toBe(200);
    expect(json.json()).toEqual({
      name: 'commerce-platform-api',
      version: expect.stringMatching(/^\d+\.\d+\.\d+$/),
      links: expect.arrayContaining([
        { rel: 'docs', href: '/docs', title: 'API reference' },
        { rel: 'graphiql', href: '/graphql', title: 'GraphiQL' },
        { rel: 'openapi-json', href: '/openapi.json', title: 'OpenAPI contract (JSON)' },
      ]),
    });
    expect((await get('/', { accept: 'application/json' })).json().links).toHaveLength(6);
    const html = await get('/', { accept: BROWSER_ACCEPT });
    expect(html.headers['content-type']).toMatch(/^text\/html/);
    for (const href of ['/docs', '/graphql', '/healthz', '/openapi.yaml', '/openapi.json', '/graphql/schema.graphql'])
      expect(html.body).toContain(`href="${href}"`);
    expect(html.headers['content-security-policy']).toContain("default-src 'self'");
    // The one command that gets a newcomer a key.
    expect(html.body).toContain('<code>npm run admin -- quickstart</code>');
  });

  it('/ links every page of the documentation, by its title, grouped as the README groups them', async () => {
    const html = (await get('/', { accept: BROWSER_ACCEPT })).body;
    for (const file of documentationFiles(root)) {
      const title = outlineOf(readFileSync(join(root, file), 'utf8')).title!;
      expect(html).toContain(`<a href="/${file}">${title.replaceAll("'", '&#39;')}</a>`);
    }
    const sections = [...html.matchAll(/<h3>([^<]+)<\/h3>/g)].map((match) => match[1]);
    expect(sections).toEqual(['Guides', 'Reference', 'Operations', 'The project']);
    expect(html.indexOf('/docs/guides/edge.md')).toBeLessThan(html.indexOf('/docs/reference/errors.md'));
  });

  it('serves each documentation page read-only at its repository path, with the anchors GitHub gives its headings', async () => {
    const page = await get('/docs/guides/edge.md', { accept: BROWSER_ACCEPT });
    expect(page.statusCode).toBe(200);
    expect(page.headers['content-type']).toMatch(/^text\/html/);
    expect(page.headers['content-security-policy']).toContain("script-src 'self'");
    expect(page.body).toContain('<title>Edge proxies and the data plane · Commerce Platform API</title>');
    // Relative links stay as written, so they resolve on the service as on GitHub.
    expect(page.body).toContain('<a href="search.md">');
    expect(page.body).toContain('<a href="../reference/configuration.md#edge-data-plane">');
    expect(page.body).toContain('<h3 id="purging-by-path-and-by-tag">Purging by path and by tag</h3>');
    expect((await get('/docs/reference/configuration.md')).body).toContain('<h2 id="edge-data-plane">');
    expect((await get('/README.md')).body).toContain('<h2 id="where-to-find-what">');
    // Raw HTML in a page would be escaped, not run: markdown-it renders with html off.
    expect(page.body).not.toMatch(/<script/);
  });

  it.each([
    '/docs/guides/none.md',
    '/docs/../package.json',
    '/docs/guides/edge.md.bak',
    '/src/main.ts',
    '/docs/guides/',
  ])('%s is not a page: only the documentation files are served', async (url) => {
    expect((await get(url, { accept: BROWSER_ACCEPT })).statusCode).toBe(404);
  });

  it('/docs loads the reference renderer and its settings from this origin only', async () => {
    const page = await get('/docs', { accept: BROWSER_ACCEPT });
    expect(page.statusCode).toBe(200);
    const scripts = [...page.body.matchAll(/<script src="([^"]+)"/g)].map((match) => match[1]!);
    expect(scripts).toEqual(['/docs/assets/standalone.js', '/docs/assets/docs.js']);
    for (const script of scripts) {
      const asset = await get(script);
      expect(asset.statusCode, script).toBe(200);
      expect(asset.headers['content-type']).toMatch(/javascript/);
    }
    expect((await get('/docs/assets/docs.js')).body).toContain("url: '/openapi.json'");
    expect((await get('/docs/assets/webpack-stats.json')).statusCode).toBe(404);
  });

  it('GET /graphql is GraphiQL for a browser, with its files from this origin; other GETs are as before', async () => {
    const page = await get('/graphql', { accept: BROWSER_ACCEPT });
    expect(page.statusCode).toBe(200);
    expect(page.headers['content-type']).toMatch(/^text\/html/);
    const assets = [...page.body.matchAll(/(?:src|href)="(\/[^"]+)"/g)].map((match) => match[1]!);
    expect(assets).toEqual([
      '/graphql/graphiql/assets/graphiql.css',
      '/graphql/graphiql/assets/yoga-graphiql.umd.js',
      '/graphql/graphiql/graphiql.js',
    ]);
    for (const asset of [...assets, '/graphql/graphiql/assets/monacoeditorwork/graphql.worker..bundle.js'])
      expect((await get(asset)).statusCode, asset).toBe(200);

    expect((await get('/graphql')).statusCode).toBe(401);
    expect((await get('/graphql?private=1', { accept: BROWSER_ACCEPT })).statusCode).toBe(401);
  });
});
