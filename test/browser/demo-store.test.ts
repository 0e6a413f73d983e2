/**
 * The demo store (/demo/{proxy key}) in Debian's Chromium (playwright-core), over a small index:
 * typing searches as you type, a facet narrows the hits, a sort orders them, a typo still finds,
 * hostile document text stays text, views and clicks are measured, and nothing is loaded from
 * another origin. A screenshot is kept under the system's temporary folder (the path is printed).
 * Skipped, saying so, when /usr/bin/chromium is absent.
 */
import { existsSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { demoProducts } from '../../scripts/seed/products';
import { createTenant, type Tenant, type TestApp } from '../helpers/app';
import { startListeningApp } from '../helpers/oauth';
import { addStock, createStockWorld } from '../integration/orders.fixtures';
import { graphqlData } from '../integration/stock.fixtures';

const CHROMIUM = '/usr/bin/chromium';
const chromiumPresent = existsSync(CHROMIUM);
if (!chromiumPresent)
  console.warn(`Skipping the browser tests: no Chromium at ${CHROMIUM} (apt-get install chromium).`);

const service = chromiumPresent ? await startListeningApp() : undefined;
const screenshots = join(tmpdir(), 'commerce-platform-screenshots');
const SHOP = 'https://shop.example.com';

/** A document whose text would run script if the page put it in as HTML. */
const HOSTILE = {
  id: 'HOSTILE-1',
  name: 'Evil <img src=x onerror="window.__pwned=1"> Lamp',
  brand: '<b>Bold</b>',
  category: 'Lighting',
  price: 1,
  description: '</p><script>window.__pwned=2</script>',
  url: 'javascript:window.__pwned=3',
};

describe.skipIf(!chromiumPresent)('the demo store in Chromium', () => {
  let browser: Browser;
  let tenant: Tenant;

  beforeAll(async () => {
    mkdirSync(screenshots, { recursive: true });
    const { rest } = service!;
    tenant = await createTenant(rest, 'Demo store tenant');
    const index = await rest.post('/api/instant/indexes', {
      token: tenant.key,
      body: {
        data: {
          name: 'Products',
          alias: 'products',
          fields: [
            { from: 'name', type: 'STRING' },
            { from: 'brand', type: 'STRING' },
            { from: 'category', type: 'STRING' },
            { from: 'description', type: 'STRING' },
            { from: 'price', type: 'NUMBER' },
            { from: 'url', type: 'STRING' },
          ],
          search_fields: ['name', 'brand', 'category', 'description'],
          filters: [{ key: 'brand' }, { key: 'category' }, { key: 'price' }],
          sortable_fields: ['price'],
        },
      },
    });
    expect(index.status).toBe(201);
    const documents = demoProducts(120, SHOP).map(({ id, name, brand, category, description, price, url }) => ({
      id,
      name,
      brand,
      category,
      description,
      price,
      url,
    }));
    const upserted = await rest.put('/api/instant/indexes/products/documents', {
      token: tenant.key,
      body: { data: [...documents, HOSTILE] },
    });
    expect(upserted.status).toBe(204);
    const proxy = await rest.post('/api/storage/edge/proxies', {
      token: tenant.key,
      body: { data: { key: 'browser-store', routes: { path: '*', origin: { uri: SHOP } } } },
    });
    expect(proxy.status).toBe(201);
    const settings = await rest.put('/api/instant/search/browser-store/settings', {
      token: tenant.key,
      body: {
        data: {
          indexes: [
            {
              alias: 'products',
              filters: [
                { key: 'category', label: 'Category' },
                { key: 'brand', label: 'Brand' },
              ],
              results_per_page: 12,
              sort_options: [
                { label: 'Relevance', sort: [] },
                { label: 'Price: low to high', sort: ['price:asc'] },
              ],
            },
          ],
        },
      },
    });
    expect(settings.status).toBe(200);
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--no-first-run'],
    });
  });

  afterAll(async () => {
    await browser?.close();
  });

  const status = (page: Page) => page.locator('#status');
  const hitTitles = (page: Page) => page.locator('#hits .title').allTextContents();

  /** Types a new query and waits until the page says it shows its results. */
  async function typeQuery(page: Page, q: string) {
    await page.locator('#q').fill(q);
    await status(page)
      .filter({ hasText: `"${q}"` })
      .waitFor({ timeout: 20_000 });
  }

  it('searches as you type, filters by a facet, sorts, tolerates typos and measures views and clicks', async () => {
    const page = await browser.newPage({ viewport: { width: 1300, height: 900 } });
    const errors: string[] = [];
    const requests: string[] = [];
    page.on('console', (message) => {
      if (message.type() === 'error') errors.push(message.text());
    });
    page.on('pageerror', (error) => errors.push(error.message));
    page.on('dialog', (dialog) => {
      errors.push(`dialog: ${dialog.message()}`);
      void dialog.dismiss();
    });
    page.on('request', (request) => requests.push(request.url()));
    // The shop's product pages, where followed clicks end: answered here, no network.
    await page.route(`${SHOP}/**`, (route) =>
      route.fulfill({ contentType: 'text/html', body: '<h1>Product page</h1>' }),
    );

    await page.goto(`${service!.origin}/demo/browser-store`);
    await status(page)
      .filter({ hasText: /^121 products$/ })
      .waitFor({ timeout: 20_000 });

    // Search as you type, with the matched words highlighted.
    await typeQuery(page, 'lamp');
    const lamps = await hitTitles(page);
    expect(lamps.length).toBeGreaterThan(1);
    for (const title of lamps) expect(title.toLowerCase()).toContain('lamp');
    expect(await page.locator('#hits .title mark').first().textContent()).toMatch(/^lamp$/i);
    const countOf = async () => Number(/^(\d+)/.exec((await status(page).textContent()) ?? '')![1]);
    const allLamps = await countOf();

    // A facet value narrows the hits to it; its count is what the page then shows.
    const brand = page.locator('fieldset', { hasText: 'Brand' }).locator('.facet-value').first();
    const brandName = (await brand.locator('.facet-name').textContent())!;
    const brandCount = Number(await brand.locator('.facet-count').textContent());
    expect(brandCount).toBeLessThan(allLamps);
    await brand.click();
    await status(page)
      .filter({ hasText: new RegExp(`^${brandCount} products? for "lamp"$`) })
      .waitFor({ timeout: 20_000 });
    for (const facts of await page.locator('#hits .facts').allTextContents()) expect(facts).toContain(brandName);
    const file = join(screenshots, 'demo-store.png');
    await page.screenshot({ path: file });
    console.log(`screenshot of the demo store: ${file}`);
    await brand.click();
    await status(page)
      .filter({ hasText: `${allLamps} products for "lamp"` })
      .waitFor({ timeout: 20_000 });

    // A sort from the search settings.
    await page.locator('#sort').selectOption({ label: 'Price: low to high' });
    await expect
      .poll(async () => {
        const prices = (await page.locator('#hits .price').allTextContents()).map(Number);
        return prices.length > 1 && prices.every((price, i) => i === 0 || prices[i - 1]! <= price);
      })
      .toBe(true);
    await page.locator('#sort').selectOption({ label: 'Relevance' });

    // The engine's typo tolerance: a word of a product's name with one letter left out still finds it.
    const word = demoProducts(120, SHOP)
      .flatMap((product) => product.name.split(' '))
      .find((candidate) => candidate.length >= 7)!;
    const typo = (word.slice(0, 3) + word.slice(4)).toLowerCase();
    await typeQuery(page, typo);
    expect((await hitTitles(page)).some((title) => title.includes(word))).toBe(true);

    // Views of the settled results are reported to the events endpoint.
    const views = page.waitForResponse(
      (response) => response.url() === `${service!.origin}/api/instant/search/browser-store/events`,
    );
    await typeQuery(page, 'lamp');
    expect((await views).status()).toBe(204);

    // Following a hit goes through its click URL (307 to the product page), which records the click.
    const first = page.locator('#hits .title').first();
    expect(await first.getAttribute('href')).toMatch(/\/api\/instant\/search\/products\/click\//);
    await first.click();
    await page.waitForURL(`${SHOP}/**`, { timeout: 20_000 });
    const analytics = await service!.rest.get('/api/instant/indexes/products/analytics', { token: tenant.key });
    expect(analytics.status).toBe(200);
    await expect
      .poll(async () => {
        const answer = await service!.rest.get('/api/instant/indexes/products/analytics', { token: tenant.key });
        return (answer.body as { data: { clicks: number; views: number } }).data;
      })
      .toMatchObject({ clicks: 1, views: expect.any(Number) });

    const foreign = requests.filter((url) => !url.startsWith(`${service!.origin}/`) && !url.startsWith(SHOP));
    expect(foreign, 'requests to other origins').toEqual([]);
    expect(errors).toEqual([]);
    await page.close();
  });

  it('shows hostile document text as text: no markup, no script, no javascript: link', async () => {
    const page = await browser.newPage();
    const dialogs: string[] = [];
    page.on('dialog', (dialog) => {
      dialogs.push(dialog.message());
      void dialog.dismiss();
    });
    await page.goto(`${service!.origin}/demo/browser-store`);
    await status(page).filter({ hasText: 'products' }).waitFor({ timeout: 20_000 });
    await typeQuery(page, 'evil');
    const hit = page.locator('#hits .hit').first();
    expect(await hit.locator('.title').textContent()).toBe(HOSTILE.name);
    expect(await hit.locator('.facts').textContent()).toContain('<b>Bold</b>');
    expect(await hit.locator('.description').textContent()).toBe(HOSTILE.description);
    expect(await page.locator('#hits img, #hits script, #hits b').count()).toBe(0);
    expect(await hit.locator('a').count()).toBe(0);
    // The brand facet lists the hostile value as text too.
    expect(await page.locator('#facets').textContent()).toContain('<b>Bold</b>');
    expect(await page.evaluate(() => (window as unknown as { __pwned?: number }).__pwned)).toBeUndefined();
    expect(dialogs).toEqual([]);
    await page.close();
  });

  it('shows whether each product is in stock when the key serves a storefront catalog, and nothing when it does not', async () => {
    const { rest } = service!;
    const t: TestApp = { ...service!, config: service!.services.config };
    // A tenant whose catalog has SKU-1 (5 units) and SKU-2 (none left), and an index naming them.
    const world = await createStockWorld(t, 'Stocked store tenant', 2);
    await addStock(t, world, 'SKU-1', 5);
    const token = world.tenant.key;
    const index = await rest.post('/api/instant/indexes', {
      token,
      body: {
        data: {
          name: 'Stocked',
          alias: 'stocked',
          fields: [
            { from: 'name', type: 'STRING' },
            { from: 'sku', type: 'STRING' },
            { from: 'price', type: 'NUMBER' },
          ],
          search_fields: ['name'],
          filters: [{ key: 'sku' }, { key: 'price' }],
        },
      },
    });
    expect(index.status).toBe(201);
    const documents = [
      { id: 'one', sku: 'SKU-1', name: 'Stocked lamp', price: 10 },
      { id: 'two', sku: 'SKU-2', name: 'Sold out lamp', price: 12 },
    ];
    expect(
      (await rest.put('/api/instant/indexes/stocked/documents', { token, body: { data: documents } })).status,
    ).toBe(204);
    const proxy = await rest.post('/api/storage/edge/proxies', {
      token,
      body: { data: { key: 'stocked-store', routes: { path: '*', origin: { uri: SHOP } } } },
    });
    expect(proxy.status).toBe(201);
    const settings = await rest.put('/api/instant/search/stocked-store/settings', {
      token,
      body: { data: { indexes: [{ alias: 'stocked' }] } },
    });
    expect(settings.status).toBe(200);
    const mapping = { product_id: 'sku', sku: 'sku', title: 'name', price: 'price', price_scale: 2, currency: 'EUR' };
    const catalog = await rest.put('/api/agents/catalog', { token, body: { data: { index: 'stocked', mapping } } });
    expect(catalog.status).toBe(200);

    const page = await browser.newPage();
    const errors: string[] = [];
    page.on('console', (message) => {
      if (message.type() === 'error') errors.push(message.text());
    });
    page.on('pageerror', (error) => errors.push(error.message));
    await page.goto(`${service!.origin}/demo/stocked-store`);
    await typeQuery(page, 'lamp');
    const stockOf = (title: string) => page.locator('#hits .hit', { hasText: title }).locator('.stock');
    await expect.poll(() => stockOf('Stocked lamp').textContent(), { timeout: 20_000 }).toBe('In stock');
    expect(await stockOf('Sold out lamp').textContent()).toBe('Out of stock');
    const file = join(screenshots, 'demo-store-stock.png');
    await page.screenshot({ path: file });
    console.log(`screenshot of the demo store with stock: ${file}`);

    // Reserving the last units shows on the next search.
    await graphqlData(
      t,
      token,
      'mutation($input: CreateReservationInput!) { createReservation(input: $input) { reservation { id } } }',
      {
        input: {
          business_id: world.catalog.businessId,
          warehouse_id: world.warehouseId,
          channel_id: world.channelId,
          items: [{ sku: 'SKU-1', quantity: 5 }],
          customer: { name: 'Buyer' },
          expires_at: Date.now() + 3_600_000,
        },
      },
    );
    await typeQuery(page, 'stocked');
    await expect.poll(() => stockOf('Stocked lamp').textContent(), { timeout: 20_000 }).toBe('Out of stock');
    expect(errors).toEqual([]);
    await page.close();

    // A key without a storefront catalog shows no stock, and asks for none.
    const plain = await browser.newPage();
    const asked: string[] = [];
    plain.on('request', (request) => asked.push(request.url()));
    await plain.goto(`${service!.origin}/demo/browser-store`);
    await typeQuery(plain, 'lamp');
    expect(await plain.locator('#hits .hit').count()).toBeGreaterThan(0);
    expect(await plain.locator('#hits .stock').count()).toBe(0);
    expect(asked.filter((url) => url.includes('/ucp/'))).toEqual([]);
    await plain.close();
  });

  it('answers an unknown key with the 404 page', async () => {
    const page = await browser.newPage();
    const response = await page.goto(`${service!.origin}/demo/no-such-store`);
    expect(response!.status()).toBe(404);
    await page.getByText('No public search engine has this key').waitFor();
    await page.close();
  });
});
