/**
 * GraphiQL reads the schema when it opens, usually before a key is in its header editor. Typing
 * the key into the header editor reads the schema again with it, without a manual re-fetch. Runs
 * in Debian's Chromium (playwright-core); skipped, saying so, when /usr/bin/chromium is absent.
 */
import { existsSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Browser, type Response } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTenant, type Tenant } from '../helpers/app';
import { startListeningApp } from '../helpers/oauth';

const CHROMIUM = '/usr/bin/chromium';
const chromiumPresent = existsSync(CHROMIUM);
if (!chromiumPresent)
  console.warn(`Skipping the browser tests: no Chromium at ${CHROMIUM} (apt-get install chromium).`);

const service = chromiumPresent ? await startListeningApp() : undefined;
const screenshots = join(tmpdir(), 'commerce-platform-screenshots');

describe.skipIf(!chromiumPresent)('GraphiQL and its header editor', () => {
  let browser: Browser;
  let tenant: Tenant;

  beforeAll(async () => {
    mkdirSync(screenshots, { recursive: true });
    tenant = await createTenant(service!.rest, 'Header editor tenant');
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--no-first-run'],
    });
  });

  afterAll(async () => {
    await browser?.close();
  });

  it('reads the schema again, with the key, once the key is typed into the header editor', async () => {
    const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    const schemaReads: Response[] = [];
    page.on('response', (response) => {
      if (response.url() === `${service!.origin}/graphql?private=1`) schemaReads.push(response);
    });
    await page.goto(`${service!.origin}/graphql`);
    await page.locator('.graphiql-container').first().waitFor({ timeout: 20_000 });
    // Without a key the first read is refused.
    await expect.poll(() => schemaReads.length, { timeout: 20_000 }).toBeGreaterThan(0);
    expect(schemaReads[0]!.status()).toBe(401);

    await page.getByRole('button', { name: 'Headers' }).click();
    const editor = page.locator('.graphiql-editor-tool .graphiql-editor').last();
    await editor.click();
    await page.keyboard.press('Control+A');
    await page.keyboard.press('Delete');
    await page.keyboard.insertText(JSON.stringify({ Authorization: `Bearer ${tenant.key}` }));

    // Nothing else is pressed: the changed headers alone make GraphiQL read the schema again.
    await expect.poll(() => schemaReads.some((response) => response.status() === 200), { timeout: 20_000 }).toBe(true);
    const accepted = schemaReads.find((response) => response.status() === 200)!;
    expect(await accepted.request().headerValue('authorization')).toBe(`Bearer ${tenant.key}`);
    const file = join(screenshots, 'graphiql-headers.png');
    await page.screenshot({ path: file });
    console.log(`screenshot of GraphiQL after the key was entered: ${file}`);
    await page.close();
  });
});
