/**
 * The login and consent page end to end in Debian's Chromium (playwright-core): a user signs in,
 * approves, the browser lands on the client's redirect URI with a code, the code is exchanged with
 * PKCE and the access token calls the API; a user whose sign-in is locked after failures is told
 * when to come back. Skipped, saying so, when /usr/bin/chromium is absent
 * (`apt-get install chromium`; .ci/run installs it).
 */
import { existsSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTenant, type Tenant } from '../helpers/app';
import { createOAuthClient, createUser, PASSWORD, pkce, startListeningApp, type TestClient } from '../helpers/oauth';

const CHROMIUM = '/usr/bin/chromium';
const chromiumPresent = existsSync(CHROMIUM);
if (!chromiumPresent)
  console.warn(`Skipping the browser tests: no Chromium at ${CHROMIUM} (apt-get install chromium).`);

const service = chromiumPresent ? await startListeningApp() : undefined;

describe.skipIf(!chromiumPresent)('login and consent page in Chromium', () => {
  let browser: Browser;
  let callbackServer: Server;
  let callbackUri: string;
  let tenant: Tenant;
  let client: TestClient;
  /** A second client the user has never approved. */
  let otherClient: TestClient;

  beforeAll(async () => {
    // The client's redirect URI: a real server on 127.0.0.1 that the browser lands on.
    callbackServer = createServer((_request, response) =>
      response.end('<!doctype html><title>Signed in</title><p>Back at the client.</p>'),
    );
    await new Promise<void>((resolve) => callbackServer.listen(0, '127.0.0.1', resolve));
    callbackUri = `http://127.0.0.1:${(callbackServer.address() as { port: number }).port}/callback`;

    const { rest } = service!;
    tenant = await createTenant(rest, 'Acme');
    client = await createOAuthClient(rest, tenant.id, {
      name: 'Acme Storefront',
      is_confidential: false,
      scopes: ['proxies:read', 'openid'],
      redirect_uris: [callbackUri],
    });
    otherClient = await createOAuthClient(rest, tenant.id, {
      name: 'Acme Reports',
      is_confidential: false,
      scopes: ['proxies:read', 'openid'],
      redirect_uris: [callbackUri],
    });
    await createUser(rest, tenant.id, 'mia@example.com');
    await createUser(rest, tenant.id, 'noah@example.com');
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
    await new Promise((resolve) => callbackServer?.close(resolve));
  });

  const authorizeQuery = (challenge: string, extra: Record<string, string> = {}) =>
    new URLSearchParams({
      client_id: extra.client_id ?? client.client_id,
      redirect_uri: callbackUri,
      response_type: 'code',
      scope: 'openid proxies:read',
      state: 'state-1',
      nonce: 'nonce-1',
      code_challenge: challenge,
      code_challenge_method: 'S256',
      ...extra,
    });

  async function exchange(code: string, verifier: string) {
    const response = await fetch(`${service!.origin}/api/oauth/authorize`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'authorization_code',
        client_id: client.client_id,
        code,
        redirect_uri: callbackUri,
        code_verifier: verifier,
      }),
    });
    expect(response.status).toBe(200);
    return (await response.json()) as { access_token: string; id_token: string };
  }

  it('signs in, approves, lands on the redirect URI with a code that buys a working access token', async () => {
    const { verifier, challenge } = pkce();
    const session = await service!.rest.get(`/api/oauth/session/authorize?${authorizeQuery(challenge)}`);
    expect(session.status).toBe(200);

    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(session.body.data.forward_uri);
    expect(await page.title()).toBe('Sign in');
    expect(await page.locator('h1').textContent()).toContain('Acme Storefront');

    await page.fill('#email', 'mia@example.com');
    await page.fill('#password', 'wrong password');
    await page.click('button[type=submit]');
    expect(await page.locator('[role=alert]').textContent()).toBe('Wrong e-mail address or password.');

    await page.fill('#password', PASSWORD);
    await page.click('button[type=submit]');
    await page.waitForSelector('#scopes', { timeout: 10_000 });
    expect(await page.title()).toBe('Allow access');
    const scopes = await page.locator('#scopes li').allTextContents();
    expect(scopes.map((text) => text.trim())).toEqual([
      expect.stringContaining('openid'),
      expect.stringContaining('proxies:read'),
    ]);

    await Promise.all([
      page.waitForURL((url) => url.href.startsWith(callbackUri), { timeout: 10_000 }),
      page.click('button[value=approve]'),
    ]);
    const landed = new URL(page.url());
    expect(landed.searchParams.get('state')).toBe('state-1');
    const code = landed.searchParams.get('code')!;
    expect(code).toMatch(/^[A-Za-z0-9_-]{43}$/);

    const tokens = await exchange(code, verifier);
    const api = await fetch(`${service!.origin}/api/storage/edge/proxies`, {
      headers: { authorization: `Bearer ${tokens.access_token}` },
    });
    expect(api.status).toBe(200);
    expect((await api.json()).data).toEqual([]);

    // Signed in and approved: a silent request through the browser-facing endpoint comes straight back with a code.
    const again = pkce();
    await page.goto(
      `${service!.origin}/oauth/authorize?${authorizeQuery(again.challenge, { silent: 'true', state: 'state-2' })}`,
    );
    const silent = new URL(page.url());
    expect(silent.href.startsWith(callbackUri)).toBe(true);
    expect(silent.searchParams.get('state')).toBe('state-2');
    expect((await exchange(silent.searchParams.get('code')!, again.verifier)).access_token).toBeTruthy();
    await context.close();
  });

  it('sends the user back with access_denied when they deny', async () => {
    const { challenge } = pkce();
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(
      `${service!.origin}/oauth/authorize?${authorizeQuery(challenge, { state: 'state-3', client_id: otherClient.client_id })}`,
    );
    expect(await page.locator('h1').textContent()).toContain('Acme Reports');
    await page.fill('#email', 'mia@example.com');
    await page.fill('#password', PASSWORD);
    await page.click('button[type=submit]');
    await page.waitForSelector('#scopes', { timeout: 10_000 });
    await Promise.all([
      page.waitForURL((url) => url.href.startsWith(callbackUri), { timeout: 10_000 }),
      page.click('button[value=deny]'),
    ]);
    const landed = new URL(page.url());
    expect(landed.searchParams.get('error')).toBe('access_denied');
    expect(landed.searchParams.get('state')).toBe('state-3');
    expect(landed.searchParams.get('code')).toBeNull();
    await context.close();
  });

  it('tells a user whose sign-in is locked after 5 failures when to try again, even with the right password', async () => {
    const { challenge } = pkce();
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(`${service!.origin}/oauth/authorize?${authorizeQuery(challenge, { state: 'state-4' })}`);
    const signIn = async (password: string) => {
      await page.fill('#email', 'noah@example.com');
      await page.fill('#password', password);
      // The answer is a new page: wait for its load, not the current page's.
      await Promise.all([page.waitForEvent('load'), page.click('button[type=submit]')]);
      return page.locator('[role=alert]').textContent();
    };
    for (let failure = 1; failure <= 4; failure += 1)
      expect(await signIn('wrong password')).toBe('Wrong e-mail address or password.');
    const locked = 'Too many failed sign-in attempts. Try again in 15 minutes.';
    expect(await signIn('wrong password')).toBe(locked);
    expect(await signIn(PASSWORD)).toBe(locked);
    expect(await page.title()).toBe('Sign in');
    expect(await page.inputValue('#email')).toBe('noah@example.com');
    await context.close();
  });
});
