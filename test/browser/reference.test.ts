/**
 * The API reference (/docs) and GraphiQL (/graphql) in Debian's Chromium (playwright-core): each
 * renders, logs no console error and makes no request to another origin; GraphiQL runs a query
 * with the key from its header editor. A screenshot of each is kept under the system's temporary
 * folder (the path is printed). Skipped, saying so, when /usr/bin/chromium is absent.
 */
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { parse } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OPENAPI_FILE } from '../../src/kernel/rest/openapi-yaml';
import { createTenant, type Tenant } from '../helpers/app';
import { startListeningApp } from '../helpers/oauth';
import { graphqlData } from '../integration/stock.fixtures';

const CHROMIUM = '/usr/bin/chromium';
const chromiumPresent = existsSync(CHROMIUM);
if (!chromiumPresent)
  console.warn(`Skipping the browser tests: no Chromium at ${CHROMIUM} (apt-get install chromium).`);

const service = chromiumPresent ? await startListeningApp() : undefined;
const screenshots = join(tmpdir(), 'commerce-platform-screenshots');

describe.skipIf(!chromiumPresent)('API reference and GraphiQL in Chromium', () => {
  let browser: Browser;
  let tenant: Tenant;

  beforeAll(async () => {
    mkdirSync(screenshots, { recursive: true });
    tenant = await createTenant(service!.rest, 'Acme');
    await graphqlData(
      service!,
      tenant.key,
      'mutation { createProduct(input: { sku: "LAMP-1", name: "Desk lamp" }) { product { id } } }',
    );
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--no-first-run'],
    });
  });

  afterAll(async () => {
    await browser?.close();
  });

  /** A page that records console errors and warnings, and every request it makes. */
  async function openPage(path: string, init?: (page: Page) => Promise<void>) {
    const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    const errors: string[] = [];
    const warnings: string[] = [];
    const requests: string[] = [];
    page.on('console', (message) => {
      if (message.type() === 'error') errors.push(message.text());
      if (message.type() === 'warning') warnings.push(message.text());
    });
    page.on('pageerror', (error) => errors.push(error.message));
    page.on('request', (request) => requests.push(request.url()));
    await init?.(page);
    await page.goto(`${service!.origin}${path}`);
    return { page, errors, warnings, requests };
  }

  const foreign = (requests: string[]) =>
    requests.filter(
      (url) => !url.startsWith(`${service!.origin}/`) && !url.startsWith('blob:') && !url.startsWith('data:'),
    );

  it('the reference renders every operation group, from this origin only, without console errors', async () => {
    const { page, errors, requests } = await openPage('/docs');
    const tags = [
      ...new Set(
        Object.values(
          parse(readFileSync(OPENAPI_FILE, 'utf8')).paths as Record<string, Record<string, { tags?: string[] }>>,
        )
          .flatMap((item) => Object.values(item))
          .flatMap((operation) => operation.tags ?? []),
      ),
    ];
    expect(tags.length).toBeGreaterThan(3);
    for (const tag of tags) await page.getByText(tag, { exact: true }).first().waitFor({ timeout: 20_000 });
    // The first group, a tenant's, is open; the operator's Admin group comes last.
    await page.getByText('List proxies', { exact: true }).first().waitFor();
    // The content beside the navigation: the contract's title, its download and the bearer field.
    await page.getByRole('heading', { name: 'Commerce Platform API' }).first().waitFor({ timeout: 20_000 });
    await page.getByText('Download OpenAPI Document').first().waitFor();
    await page.getByText('Bearer Token').first().waitFor();
    const file = join(screenshots, 'docs.png');
    await page.screenshot({ path: file, fullPage: false });
    console.log(`screenshot of /docs: ${file}`);
    expect(foreign(requests), 'requests to other origins').toEqual([]);
    expect(errors).toEqual([]);
    await page.close();
  });

  it('the reference takes the whole contract without validation errors and shows the examples', async () => {
    const { page, errors, warnings } = await openPage('/docs');
    await page.getByRole('heading', { name: 'Commerce Platform API' }).first().waitFor({ timeout: 20_000 });
    await page.getByText('Edge proxies', { exact: true }).first().click();
    await page.getByText('List proxies', { exact: true }).first().click();
    const listProxies = page.locator('[id$="/GET/api/storage/edge/proxies"]').first();
    await listProxies.getByText('"my-shop"').first().waitFor({ timeout: 20_000 });
    // Scalar checks the document once it is loaded and logs "document validation errors: " with a
    // list of the schemas it dropped; a dropped schema's example shows null.
    expect(warnings.filter((warning) => /validation/i.test(warning))).toEqual([]);
    const example = await listProxies.innerText();
    expect(example).toContain('"routes": [');
    expect(example).not.toContain('"routes": null');
    expect(errors).toEqual([]);
    await page.close();
  });

  it("the reference opens on the tenant's groups with Admin last, and says the rest is GraphQL", async () => {
    const { page, errors } = await openPage('/docs');
    await page.getByRole('heading', { name: 'Commerce Platform API' }).first().waitFor({ timeout: 20_000 });
    const intro = page.getByText(/stock, orders and reservations, transfers and supplies are GraphQL/).first();
    await intro.waitFor();
    expect(await page.locator('a[href="/graphql"]').count()).toBeGreaterThan(0);
    // The groups in the order the navigation shows them, after its introduction.
    const names = (parse(readFileSync(OPENAPI_FILE, 'utf8')).tags as { name: string }[]).map((tag) => tag.name);
    expect(names[0]).toBe('Edge proxies');
    expect(names.at(-1)).toBe('Admin');
    const sidebar = (await page.locator('.t-doc__sidebar').first().innerText()).split('\n').map((line) => line.trim());
    const groups = sidebar.slice(sidebar.indexOf('Introduction')).filter((line) => names.includes(line));
    expect(groups).toEqual(names);
    expect(errors).toEqual([]);
    await page.close();
  });

  it('a guide renders from this origin, and its relative links and anchors lead to the other pages', async () => {
    const { page, errors, requests } = await openPage('/');
    await page.getByRole('link', { name: 'Edge proxies and the data plane' }).click();
    await page.getByRole('heading', { name: 'Purging by path and by tag' }).waitFor();
    await page.locator('a[href="../reference/configuration.md#edge-data-plane"]').first().click();
    await page.waitForURL(`${service!.origin}/docs/reference/configuration.md#edge-data-plane`);
    await page.getByRole('heading', { name: 'Edge data plane' }).waitFor();
    const file = join(screenshots, 'guide.png');
    await page.screenshot({ path: file });
    console.log(`screenshot of a guide: ${file}`);
    expect(foreign(requests), 'requests to other origins').toEqual([]);
    expect(errors).toEqual([]);
    await page.close();
  });

  it('GraphiQL loads the schema and runs a query with the key from its header editor', async () => {
    const headers = JSON.stringify({ Authorization: `Bearer ${tenant.key}` });
    const { page, errors, requests } = await openPage('/graphql', async (p) => {
      // The header editor's content, as GraphiQL keeps it between visits.
      await p.addInitScript((value) => localStorage.setItem('graphiql:headers', value), headers);
    });
    await page.locator('.graphiql-container').first().waitFor({ timeout: 20_000 });
    await page.getByRole('button', { name: /execute query/i }).click();
    await page.getByText('LAMP-1').first().waitFor({ timeout: 20_000 });
    // The schema was read through GET /graphql?private=1 (POST refuses introspection).
    expect(requests).toContain(`${service!.origin}/graphql?private=1`);
    const file = join(screenshots, 'graphiql.png');
    await page.screenshot({ path: file });
    console.log(`screenshot of GraphiQL: ${file}`);
    expect(foreign(requests), 'requests to other origins').toEqual([]);
    expect(errors).toEqual([]);
    await page.close();
  });

  it('GraphiQL without a key says how to give one instead of failing silently', async () => {
    const { page } = await openPage('/graphql');
    await page.locator('.graphiql-container').first().waitFor({ timeout: 20_000 });
    await page.getByRole('button', { name: /execute query/i }).click();
    await page
      .getByText(/UNAUTHORIZED|Unauthorized/)
      .first()
      .waitFor({ timeout: 20_000 });
    await page.close();
  });
});
