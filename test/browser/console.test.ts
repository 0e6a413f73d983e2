/**
 * The operators' console end to end in Debian's Chromium (playwright-core): a user signs in through
 * the OAuth login and consent pages, receives and counts stock and sees the levels and the ledger
 * change, releases a reservation, purges a proxy's cache by tag; a user whose client lacks
 * `inventory:write` sees no stock write control; axe-core finds no serious violation on each page.
 * Screenshots of each area are kept under the system's temporary folder (the paths are printed).
 * Skipped, saying so, when /usr/bin/chromium is absent (`apt-get install chromium`).
 */
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTenant, type Tenant } from '../helpers/app';
import { createOAuthClient, createUser, PASSWORD, startListeningApp, type TestClient } from '../helpers/oauth';
import { createCatalog, graphqlData, type Catalog } from '../integration/stock.fixtures';
import type { TestApp } from '../helpers/app';

const CHROMIUM = '/usr/bin/chromium';
const chromiumPresent = existsSync(CHROMIUM);
if (!chromiumPresent)
  console.warn(`Skipping the browser tests: no Chromium at ${CHROMIUM} (apt-get install chromium).`);

const service = chromiumPresent ? await startListeningApp() : undefined;
const screenshots = join(tmpdir(), 'commerce-platform-screenshots');
const axeSource = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

const WRITER_SCOPES = [
  'inventory:read',
  'inventory:write',
  'catalog:read',
  'orders:read',
  'orders:write',
  'proxies:read',
  'proxies:write',
  'indexes:read',
  'indexes:write',
  'search',
];
const READER_SCOPES = ['inventory:read', 'catalog:read', 'orders:read', 'proxies:read'];

describe.skipIf(!chromiumPresent)('operators console in Chromium', { timeout: 90_000 }, () => {
  let browser: Browser;
  let tenant: Tenant;
  let catalog: Catalog;
  let channelId: string;
  let writer: TestClient;
  let reader: TestClient;
  const app = () => service as unknown as TestApp;

  beforeAll(async () => {
    const { rest, origin } = service!;
    mkdirSync(screenshots, { recursive: true });
    tenant = await createTenant(rest, 'Acme');
    catalog = await createCatalog(app(), tenant.key, { products: 3 });
    const channel = await graphqlData<{ createSalesChannel: { sales_channel: { id: string } } }>(
      app(),
      tenant.key,
      'mutation($input: CreateSalesChannelInput!) { createSalesChannel(input: $input) { sales_channel { id } } }',
      { input: { name: 'Web shop' } },
    );
    channelId = channel.createSalesChannel.sales_channel.id;
    const redirect = [`${origin}/console/`];
    writer = await createOAuthClient(rest, tenant.id, {
      name: 'Console',
      is_confidential: false,
      scopes: WRITER_SCOPES,
      redirect_uris: redirect,
    });
    reader = await createOAuthClient(rest, tenant.id, {
      name: 'Console (read only)',
      is_confidential: false,
      scopes: READER_SCOPES,
      redirect_uris: redirect,
    });
    await createUser(rest, tenant.id, 'mia@example.com');
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: [
        '--no-sandbox',
        '--disable-gpu',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
        '--no-first-run',
      ],
    });
  });

  afterAll(async () => {
    await browser?.close();
  });

  /** Opens the console with the client's id, signs in on the login page and approves. */
  async function signIn(client: TestClient, viewport = { width: 1280, height: 900 }): Promise<Page> {
    const context = await browser.newContext({ viewport });
    const page = await context.newPage();
    await page.goto(`${service!.origin}/console/?client_id=${client.client_id}`);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForSelector('#email', { timeout: 10_000 });
    await page.fill('#email', 'mia@example.com');
    await page.fill('#password', PASSWORD);
    await page.click('button[type=submit]');
    // The consent page comes only until the user has approved this client's scopes once.
    const approve = page.locator('button[value=approve]');
    const stock = page.locator('h1:text("Stock")');
    await approve.or(stock).first().waitFor({ timeout: 10_000 });
    if (await approve.isVisible()) await approve.click();
    await stock.waitFor({ timeout: 10_000 });
    expect(new URL(page.url()).search).toBe('');
    return page;
  }

  async function expectAccessible(page: Page) {
    await page.evaluate(axeSource);
    const violations = await page.evaluate(async () => {
      const axe = (
        globalThis as unknown as { axe: { run(): Promise<{ violations: { id: string; impact: string }[] }> } }
      ).axe;
      return (await axe.run()).violations.map(({ id, impact }) => ({ id, impact }));
    });
    expect(violations.filter((entry) => ['serious', 'critical'].includes(entry.impact))).toEqual([]);
  }

  async function screenshot(page: Page, name: string) {
    const file = join(screenshots, `console-${name}.png`);
    await page.screenshot({ path: file, fullPage: true });
    console.log(`screenshot of the console (${name}): ${file}`);
  }

  it('serves the built console with its security headers, and redirects /console to it', async () => {
    const response = await fetch(`${service!.origin}/console/`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-security-policy')).toContain("script-src 'self'");
    expect(response.headers.get('cache-control')).toBe('no-store');
    expect(await response.text()).toContain('/console/assets/');
    const bare = await fetch(`${service!.origin}/console`, { redirect: 'manual' });
    expect(bare.status).toBe(301);
    expect(bare.headers.get('location')).toBe('/console/');
    // The build's stamp stays on disk.
    expect((await fetch(`${service!.origin}/console/.stamp`)).status).toBe(404);
  });

  it('signs in, receives and counts stock, and shows the level and the ledger change', async () => {
    const page = await signIn(writer);
    await expectAccessible(page);
    await page.getByRole('button', { name: 'SKU-1' }).click();
    await page.waitForSelector('text=No stock of SKU-1 anywhere yet.');

    await page.selectOption('#receive-warehouse', { label: 'Warehouse 1' });
    await page.fill('#receive-position', 'A-01');
    await page.fill('#receive-quantity', '5');
    await page.getByRole('button', { name: 'Receive' }).click();
    const onHand = page.locator('table.levels td[data-field=quantity]');
    await expect.poll(() => onHand.allTextContents()).toEqual(['5']);
    const ledger = page.locator('table.ledger tbody tr');
    await expect.poll(() => ledger.count()).toBe(1);
    expect(await ledger.first().textContent()).toContain('REGISTER');
    expect(await ledger.first().textContent()).toContain('+5');

    // A count of 3: the line is corrected and the ledger gains a CORRECTION of −2.
    await page.locator('table.levels input[type=number]').fill('3');
    await page.getByRole('button', { name: 'Save count' }).click();
    await expect.poll(() => onHand.allTextContents()).toEqual(['3']);
    await expect.poll(() => ledger.count()).toBe(2);
    expect(await ledger.first().textContent()).toContain('CORRECTION');
    expect(await ledger.first().textContent()).toContain('-2');
    await expectAccessible(page);
    await screenshot(page, 'stock');

    // The API's refusal is shown in its own words: a position the warehouse does not have.
    await page.fill('#receive-position', 'Z-99');
    await page.getByRole('button', { name: 'Receive' }).click();
    const alert = page.locator('form.receive [role=alert]');
    await expect.poll(() => alert.textContent()).toMatch(/Z-99/);
    await expect.poll(() => onHand.allTextContents()).toEqual(['3']);
    await page.context().close();
  });

  it('releases a reservation, and its units are available again', async () => {
    const received = await service!.rest.post('/api/inventory/items', {
      token: tenant.key,
      body: {
        data: [{ sku: 'SKU-2', warehouseId: catalog.warehouseIds[0], businessId: catalog.businessId, quantity: 4 }],
      },
    });
    expect(received.status).toBe(201);
    await graphqlData(
      app(),
      tenant.key,
      'mutation($input: CreateReservationInput!) { createReservation(input: $input) { reservation { id } } }',
      {
        input: {
          business_id: catalog.businessId,
          warehouse_id: catalog.warehouseIds[0],
          channel_id: channelId,
          customer: { name: 'Ada Lovelace' },
          items: [{ sku: 'SKU-2', quantity: 2 }],
          expires_at: Date.now() + 3_600_000,
        },
      },
    );
    const page = await signIn(writer);
    const release = page.getByRole('button', { name: 'Release the reservation of Ada Lovelace' });
    await release.waitFor();
    await screenshot(page, 'reservations');
    await release.click();
    await page.waitForSelector('text=No active reservations.');
    const left = await graphqlData<{ reservations: { edges: unknown[] } }>(
      app(),
      tenant.key,
      '{ reservations(status: ACTIVE) { edges { node { id } } } }',
    );
    expect(left.reservations.edges).toEqual([]);
    await page.context().close();
  });

  it('lists orders and ships one', async () => {
    const received = await service!.rest.post('/api/inventory/items', {
      token: tenant.key,
      body: {
        data: [{ sku: 'SKU-3', warehouseId: catalog.warehouseIds[0], businessId: catalog.businessId, quantity: 6 }],
      },
    });
    expect(received.status).toBe(201);
    const placed = await graphqlData<{ createOrder: { order: { id: string } } }>(
      app(),
      tenant.key,
      'mutation($input: CreateOrderInput!) { createOrder(input: $input) { order { id } } }',
      {
        input: {
          business_id: catalog.businessId,
          warehouse_id: catalog.warehouseIds[0],
          channel_id: channelId,
          items: [{ sku: 'SKU-3', quantity: 2 }],
        },
      },
    );
    const orderId = placed.createOrder.order.id;
    const page = await signIn(writer);
    await page.getByRole('link', { name: 'Orders' }).click();
    await page.getByRole('button', { name: orderId.slice(0, 8) }).click();
    await page.getByRole('button', { name: 'Ship order' }).click();
    await expect
      .poll(() => page.locator('table.order-list td[data-field=status]').allTextContents())
      .toEqual(['SHIPPED']);
    expect(await page.getByRole('button', { name: 'Ship order' }).count()).toBe(0);
    const order = await graphqlData<{ order: { status: string } }>(
      app(),
      tenant.key,
      'query($id: ID!) { order(id: $id) { status } }',
      { id: orderId },
    );
    expect(order.order.status).toBe('SHIPPED');
    await expectAccessible(page);
    await screenshot(page, 'orders');
    await page.context().close();
  });

  it('lists proxies and purges one by tag', async () => {
    const created = await service!.rest.post('/api/storage/edge/proxies', {
      token: tenant.key,
      body: { data: { key: 'acme-shop', routes: { path: '*', origin: { uri: 'https://shop.example.com' } } } },
    });
    expect(created.status).toBe(201);
    const page = await signIn(writer);
    await page.getByRole('link', { name: 'Edge' }).click();
    await page.waitForSelector('td:text("acme-shop")');
    await page.fill('#purge-tag', 'product-42');
    await page.getByRole('button', { name: 'Purge' }).click();
    await page.waitForSelector('text=Purged tag=product-42 on acme-shop.');
    // More than 100 tags: the API's 400, in its words, and nothing purged.
    await page.fill('#purge-tag', Array.from({ length: 101 }, (_, index) => `t${index}`).join(','));
    await page.getByRole('button', { name: 'Purge' }).click();
    await expect.poll(() => page.locator('form.purge [role=alert]').textContent()).toMatch(/^Bad request: /);
    await expectAccessible(page);
    await screenshot(page, 'edge');
    await page.context().close();
  });

  it('adds a synonym and the preview finds the product with it', async () => {
    const index = await service!.rest.post('/api/instant/indexes', {
      token: tenant.key,
      body: {
        data: {
          name: 'Products',
          alias: 'products',
          fields: [{ from: 'name', type: 'STRING' }],
          search_fields: ['name'],
        },
      },
    });
    expect(index.status).toBe(201);
    const documents = await service!.rest.put('/api/instant/indexes/products/documents', {
      token: tenant.key,
      body: { data: [{ id: 'p1', name: 'Desk lamp' }] },
    });
    expect(documents.status).toBe(204);
    const page = await signIn(writer);
    await page.getByRole('link', { name: 'Search' }).click();
    await page.getByRole('button', { name: 'products' }).click();
    await page.fill('#preview-q', 'luminaire');
    await page.getByRole('button', { name: 'Preview' }).click();
    await page.waitForSelector('[role=status]:text("0 matches")');

    await page.fill('#synonym-root', 'luminaire');
    await page.fill('#synonym-words', 'lamp');
    await page.getByRole('button', { name: 'Add synonym' }).click();
    await page.waitForSelector('ul.synonyms li:text("luminaire → lamp")');
    await expect
      .poll(async () => {
        await page.getByRole('button', { name: 'Preview' }).click();
        return page.locator('ol.hits li').allTextContents();
      })
      .toEqual(['Desk lamp']);
    await expectAccessible(page);
    await screenshot(page, 'search');
    await page.context().close();
  });

  it('shows a user without inventory:write no stock write control, at phone width too', async () => {
    const page = await signIn(reader, { width: 390, height: 844 });
    await page.getByRole('button', { name: 'SKU-1' }).click();
    await page.waitForSelector('table.levels');
    await page.waitForSelector('table.ledger tbody tr');
    expect(await page.locator('form.receive').count()).toBe(0);
    expect(await page.getByRole('button', { name: 'Save count' }).count()).toBe(0);
    expect(await page.getByRole('button', { name: /Release/ }).count()).toBe(0);
    await page.getByRole('link', { name: 'Edge' }).click();
    await page.waitForSelector('td:text("acme-shop")');
    expect(await page.getByRole('button', { name: /Delete|Purge/ }).count()).toBe(0);
    await expectAccessible(page);
    await screenshot(page, 'read-only-phone');

    // Signing out revokes the token: the console is back at its sign-in form.
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('button', { name: 'Sign in' }).waitFor();
    await page.context().close();
  });
});
