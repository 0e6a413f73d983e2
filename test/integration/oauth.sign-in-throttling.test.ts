/**
 * Sign-in throttling of the login page, through its HTTP form: failures counted per account and
 * per client address in PostgreSQL, the lock they lead to (the right password refused too, with the
 * same answer whether or not the account exists), longer locks after the first, the reset by a
 * successful sign-in, the window, two processes of one deployment adding up to one count,
 * concurrent failures counted exactly, hostile forms refused with nothing stored, and housekeeping.
 */
import { createHash } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { beforeAll, describe, expect, it } from 'vitest';
import { deleteExpired } from '../../src/modules/housekeeping';
import { createTenant, startTestApp, type Tenant } from '../helpers/app';
import { sql } from '../helpers/db';
import { Browser, createOAuthClient, createUser, PASSWORD, REDIRECT_URI, type TestClient } from '../helpers/oauth';

/** Two processes of one deployment: their own app and pool each, one database. */
const one = await startTestApp();
const two = await startTestApp({ databaseUrl: one.databaseUrl });
const { databaseUrl } = one;

const WRONG = 'not the password at all';
const LOCKED_15_MINUTES = 'Too many failed sign-in attempts. Try again in 15 minutes.';

let tenant: Tenant;
let client: TestClient;

beforeAll(async () => {
  tenant = await createTenant(one.rest, 'Acme');
  client = await createOAuthClient(one.rest, tenant.id);
});

let addresses = 0;
/** A client address no other test uses, so that each test starts with an address count of 0. */
const freshAddress = () => `198.51.100.${++addresses}`;

/** A user of the tenant with PASSWORD. */
const newUser = async (name: string) => (await createUser(one.rest, tenant.id, `${name}@example.com`)).email;

type PageResponse = Awaited<ReturnType<Browser['request']>>;

interface LoginPage {
  /** Posts the login form, to process `one` unless told otherwise. */
  signIn(email: string, password: string, app?: FastifyInstance): Promise<PageResponse>;
}

/** A browser at `address` on the login page of a new authorization session. */
async function openLoginPage(address: string, c: TestClient = client): Promise<LoginPage> {
  const query = new URLSearchParams({ client_id: c.client_id, redirect_uri: REDIRECT_URI, response_type: 'code' });
  const session = await one.rest.get(`/api/oauth/session/authorize?${query}`);
  expect(session.status).toBe(200);
  const path = new URL(session.body.data.forward_uri).pathname;
  const browser = new Browser(one.app, address);
  const page = await browser.request('GET', path);
  const csrf = Browser.csrf(page.body);
  return {
    signIn: (email, password, app = one.app) =>
      browser.request('POST', `${path}/login`, { csrf_token: csrf, email, password }, app),
  };
}

/** The message of a login page's alert. */
const alertOf = (html: string) => /<p class="error" role="alert">([^<]*)<\/p>/.exec(html)?.[1];

const expectWrongPassword = (response: PageResponse) => {
  expect(response.statusCode).toBe(401);
  expect(alertOf(response.body)).toBe('Wrong e-mail address or password.');
};

const expectLocked = (response: PageResponse, message = LOCKED_15_MINUTES) => {
  expect(response.statusCode).toBe(429);
  expect(alertOf(response.body)).toBe(message);
  return Number(response.headers['retry-after']);
};

const sha256 = (value: string) => createHash('sha256').update(value).digest();

interface ThrottleRow {
  failures: number;
  lockouts: number;
  locked: boolean;
}

/** The stored count of an account (by its e-mail address) or an address of the tenant, if any. */
async function throttleRow(kind: 'ACCOUNT' | 'ADDRESS', subject: string): Promise<ThrottleRow | undefined> {
  const [row] = await sql<ThrottleRow>(
    databaseUrl,
    `SELECT failures, lockouts, coalesce(locked_until > now(), false) AS locked FROM oauth_sign_in_throttles
     WHERE tenant_id = $1 AND kind = $2 AND subject_hash = $3`,
    [tenant.id, kind, sha256(subject)],
  );
  return row;
}

/** Moves a stored row's clock: `changes` is the SET list, in SQL. */
const alterRow = (kind: 'ACCOUNT' | 'ADDRESS', subject: string, changes: string) =>
  sql(
    databaseUrl,
    `UPDATE oauth_sign_in_throttles SET ${changes} WHERE tenant_id = $1 AND kind = $2 AND subject_hash = $3`,
    [tenant.id, kind, sha256(subject)],
  );

describe('failures of one account', () => {
  it('lock the account at the 5th within 15 minutes, for 15 minutes, and the right password is refused too', async () => {
    const email = await newUser('lock');
    const page = await openLoginPage(freshAddress());
    for (let failure = 1; failure <= 4; failure += 1) expectWrongPassword(await page.signIn(email, WRONG));
    expect(await throttleRow('ACCOUNT', email)).toEqual({ failures: 4, lockouts: 0, locked: false });

    const fifth = await page.signIn(email, WRONG);
    expect(expectLocked(fifth)).toBe(900);
    expect(await throttleRow('ACCOUNT', email)).toEqual({ failures: 0, lockouts: 1, locked: true });

    const right = await page.signIn(email, PASSWORD);
    expect(expectLocked(right)).toBeGreaterThan(880);
    expect(right.headers['set-cookie']).toBeUndefined();
    // The form stays, filled in, for when the lock ends.
    expect(right.body).toContain(`value="${email}"`);
    // Refused while locked without counting: the lock does not grow by being knocked on.
    expect(await throttleRow('ACCOUNT', email)).toEqual({ failures: 0, lockouts: 1, locked: true });
  });

  it('answer a locked account that does not exist exactly as one that does', async () => {
    const existing = await newUser('exists');
    const missing = 'missing@example.com';
    const answers: { email: string; page: LoginPage }[] = [];
    for (const email of [existing, missing]) {
      const page = await openLoginPage(freshAddress());
      const failures = [];
      for (let failure = 1; failure <= 5; failure += 1) failures.push(await page.signIn(email, WRONG));
      expect(failures.map((response) => response.statusCode)).toEqual([401, 401, 401, 401, 429]);
      answers.push({ email, page });
    }
    // Both locks end at one instant, 9.5 minutes from now: the same message, and a Retry-After a
    // second apart at most (the two answers are not given at the same instant).
    await sql(
      databaseUrl,
      `UPDATE oauth_sign_in_throttles SET locked_until = now() + interval '570.5 seconds'
       WHERE tenant_id = $1 AND kind = 'ACCOUNT' AND subject_hash IN ($2, $3)`,
      [tenant.id, sha256(existing), sha256(missing)],
    );
    const locked = await Promise.all(
      answers.map(({ email, page }) => page.signIn(email, email === existing ? PASSWORD : WRONG)),
    );
    // Apart from what differs by construction: the address typed (and so the length), the session, the
    // CSRF token, the request id and the clock.
    const comparable = (response: PageResponse, email: string) => ({
      status: response.statusCode,
      headers: {
        ...response.headers,
        date: undefined,
        'x-request-id': undefined,
        'content-length': undefined,
        'retry-after': undefined,
      },
      body: response.body
        .replaceAll(email, '<email>')
        .replace(/\/oauth\/sessions\/[^/]+\//, '/oauth/sessions/<id>/')
        .replace(/name="csrf_token" value="[^"]+"/, 'name="csrf_token"'),
    });
    const [ofExisting, ofMissing] = locked.map((response, index) => comparable(response, answers[index]!.email));
    expect(ofExisting).toEqual(ofMissing);
    expect(ofExisting!.status).toBe(429);
    expect(alertOf(locked[0]!.body)).toBe('Too many failed sign-in attempts. Try again in 10 minutes.');
    const [waitExisting, waitMissing] = locked.map((response) => Number(response.headers['retry-after']));
    expect(waitExisting).toBeGreaterThan(540);
    expect(Math.abs(waitExisting! - waitMissing!)).toBeLessThanOrEqual(1);
    expect(await throttleRow('ACCOUNT', existing)).toEqual(await throttleRow('ACCOUNT', missing));
  });

  it('are cleared by a successful sign-in, which the address count also takes back', async () => {
    const email = await newUser('reset');
    const address = freshAddress();
    const page = await openLoginPage(address);
    for (let failure = 1; failure <= 4; failure += 1) expectWrongPassword(await page.signIn(email, WRONG));
    expect((await page.signIn(email, PASSWORD)).statusCode).toBe(303);
    expect(await throttleRow('ACCOUNT', email)).toBeUndefined();
    expect(await throttleRow('ADDRESS', address)).toMatchObject({ failures: 4 });

    for (let failure = 1; failure <= 4; failure += 1) expectWrongPassword(await page.signIn(email, WRONG));
    expectLocked(await page.signIn(email, WRONG));
  });

  it('lock for twice as long each time, at most 4 hours, until a successful sign-in', async () => {
    const email = await newUser('again');
    // Each round from another address, which would otherwise be locked by the 20th failure.
    const lockAgain = async () => {
      await alterRow('ACCOUNT', email, `locked_until = now() - interval '1 second'`);
      const page = await openLoginPage(freshAddress());
      for (let failure = 1; failure <= 4; failure += 1) expectWrongPassword(await page.signIn(email, WRONG));
      return page.signIn(email, WRONG);
    };
    const page = await openLoginPage(freshAddress());
    for (let failure = 1; failure <= 4; failure += 1) expectWrongPassword(await page.signIn(email, WRONG));
    expect(expectLocked(await page.signIn(email, WRONG))).toBe(900);
    expect(expectLocked(await lockAgain(), 'Too many failed sign-in attempts. Try again in 30 minutes.')).toBe(1800);
    expect(expectLocked(await lockAgain(), 'Too many failed sign-in attempts. Try again in 60 minutes.')).toBe(3600);
    await alterRow('ACCOUNT', email, 'lockouts = 40');
    expect(expectLocked(await lockAgain(), 'Too many failed sign-in attempts. Try again in 4 hours.')).toBe(14_400);

    await alterRow('ACCOUNT', email, `locked_until = now() - interval '1 second'`);
    expect((await page.signIn(email, PASSWORD)).statusCode).toBe(303);
    expect(expectLocked(await lockAgain())).toBe(900);
  });

  it('count again from 1 once their 15-minute window has passed', async () => {
    const email = await newUser('window');
    const page = await openLoginPage(freshAddress());
    for (let failure = 1; failure <= 4; failure += 1) expectWrongPassword(await page.signIn(email, WRONG));
    await alterRow('ACCOUNT', email, `window_start = window_start - interval '15 minutes 1 second'`);
    expectWrongPassword(await page.signIn(email, WRONG));
    expect(await throttleRow('ACCOUNT', email)).toEqual({ failures: 1, lockouts: 0, locked: false });
    for (let failure = 2; failure <= 4; failure += 1) expectWrongPassword(await page.signIn(email, WRONG));
    expectLocked(await page.signIn(email, WRONG));
  });

  it('are counted by the e-mail address as stored: case and surrounding spaces do not make another account', async () => {
    const email = await newUser('spelling');
    const page = await openLoginPage(freshAddress());
    for (const spelling of ['Spelling@Example.com', ' spelling@example.com', 'SPELLING@EXAMPLE.COM ', email])
      expectWrongPassword(await page.signIn(spelling, WRONG));
    expectLocked(await page.signIn(email.toUpperCase(), WRONG));
  });
});

describe('failures from one client address', () => {
  it('lock the address at the 20th within 15 minutes, whichever accounts they were for', async () => {
    const address = freshAddress();
    const page = await openLoginPage(address);
    for (let failure = 1; failure <= 19; failure += 1)
      expectWrongPassword(await page.signIn(`sprayed-${failure}@example.com`, WRONG));
    expectLocked(await page.signIn('sprayed-20@example.com', WRONG));
    expect(await throttleRow('ADDRESS', address)).toEqual({ failures: 0, lockouts: 1, locked: true });

    // The right password of an account with no failures is refused from there, and accepted from elsewhere.
    const email = await newUser('bystander');
    expectLocked(await page.signIn(email, PASSWORD));
    expect((await (await openLoginPage(freshAddress())).signIn(email, PASSWORD)).statusCode).toBe(303);
  });

  it('count an IPv6 client by its /64, and an IPv4-mapped one as its IPv4 address', async () => {
    for (let failure = 1; failure <= 19; failure += 1) {
      const page = await openLoginPage(`2001:db8:7:7::${failure.toString(16)}`);
      expectWrongPassword(await page.signIn(`v6-${failure}@example.com`, WRONG));
    }
    expectLocked(await (await openLoginPage('2001:db8:7:7:ffff::1')).signIn('v6-20@example.com', WRONG));
    expect(await throttleRow('ADDRESS', '2001:db8:7:7::/64')).toMatchObject({ locked: true });
    expectWrongPassword(await (await openLoginPage('2001:db8:7:8::1')).signIn('v6-21@example.com', WRONG));

    const mapped = freshAddress();
    expectWrongPassword(await (await openLoginPage(`::ffff:${mapped}`)).signIn('mapped@example.com', WRONG));
    expect(await throttleRow('ADDRESS', mapped)).toMatchObject({ failures: 1 });
  });
});

describe('two processes of one deployment', () => {
  it('add their failures up to one lock, which both then answer', async () => {
    const email = await newUser('processes');
    const page = await openLoginPage(freshAddress());
    for (const app of [one.app, two.app, one.app, two.app]) expectWrongPassword(await page.signIn(email, WRONG, app));
    expectLocked(await page.signIn(email, WRONG, one.app));
    expectLocked(await page.signIn(email, PASSWORD, two.app));
    expectLocked(await page.signIn(email, PASSWORD, one.app));
  });

  it('count 19 concurrent failures from one address exactly, so the next one locks it', async () => {
    const address = freshAddress();
    const page = await openLoginPage(address);
    const responses = await Promise.all(
      Array.from({ length: 19 }, (_, index) =>
        page.signIn(`concurrent-${index}@example.com`, WRONG, index % 2 === 0 ? one.app : two.app),
      ),
    );
    for (const response of responses) expectWrongPassword(response);
    expect(await throttleRow('ADDRESS', address)).toEqual({ failures: 19, lockouts: 0, locked: false });
    expectLocked(await page.signIn('concurrent-19@example.com', WRONG, two.app));
    expect(await throttleRow('ADDRESS', address)).toEqual({ failures: 0, lockouts: 1, locked: true });
  });

  it('check no more than 5 passwords of an account when 20 guesses arrive at once', async () => {
    const email = await newUser('burst');
    const pages = await Promise.all(Array.from({ length: 20 }, () => openLoginPage(freshAddress())));
    const responses = await Promise.all(
      pages.map((page, index) => page.signIn(email, WRONG, index % 2 === 0 ? one.app : two.app)),
    );
    const statuses = responses.map((response) => response.statusCode).sort();
    // Four wrong answers, and the fifth check's failure or a guess beyond it set the lock.
    expect(statuses).toEqual([...Array(4).fill(401), ...Array(16).fill(429)]);
    expect(await throttleRow('ACCOUNT', email)).toEqual({ failures: 0, lockouts: 1, locked: true });
    expectLocked(await pages[0]!.signIn(email, PASSWORD, two.app));
  });
});

describe('hostile sign-in forms', () => {
  let hostileTenant: Tenant;
  let hostileClient: TestClient;
  let page: LoginPage;
  let raw: (payload: string) => Promise<PageResponse>;

  beforeAll(async () => {
    hostileTenant = await createTenant(one.rest, 'Hostile');
    hostileClient = await createOAuthClient(one.rest, hostileTenant.id);
    await createUser(one.rest, hostileTenant.id, 'target@example.com');
    const address = freshAddress();
    page = await openLoginPage(address, hostileClient);
    // The same session and browser, with a body written by hand.
    const query = new URLSearchParams({
      client_id: hostileClient.client_id,
      redirect_uri: REDIRECT_URI,
      response_type: 'code',
    });
    const session = await one.rest.get(`/api/oauth/session/authorize?${query}`);
    const path = new URL(session.body.data.forward_uri).pathname;
    const browser = new Browser(one.app, address);
    const csrf = Browser.csrf((await browser.request('GET', path)).body);
    raw = (payload) =>
      one.app.inject({
        method: 'POST',
        url: `${path}/login`,
        remoteAddress: address,
        headers: { cookie: browser.cookieHeader, 'content-type': 'application/x-www-form-urlencoded' },
        payload: `csrf_token=${encodeURIComponent(csrf)}&${payload}`,
      });
  });

  const storedRows = async () =>
    (await sql(databaseUrl, 'SELECT 1 FROM oauth_sign_in_throttles WHERE tenant_id = $1', [hostileTenant.id])).length;

  const expectRefusedPage = (response: PageResponse, status: number, reason: string) => {
    expect(response.statusCode).toBe(status);
    expect(response.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(response.headers['cache-control']).toBe('no-store');
    expect(response.body).toContain('<h1>Invalid sign-in request</h1>');
    expect(response.body).toContain(reason);
  };

  it('refuse a 1 MiB user name as a page, counting and storing nothing', async () => {
    const huge = 'a'.repeat(1024 * 1024);
    expectRefusedPage(await raw(`email=${huge}&password=x`), 413, 'the request body exceeds 1 MiB');
    const justUnder = 'a'.repeat(1000 * 1000);
    expectRefusedPage(await raw(`email=${justUnder}&password=x`), 400, 'email is longer than 320 characters');
    expectRefusedPage(
      await raw(`email=target%40example.com&password=${'p'.repeat(1025)}`),
      400,
      'password is longer than 1024 characters',
    );
    expect(await storedRows()).toBe(0);
  });

  it('refuse a form with too many or repeated fields as a page, counting and storing nothing', async () => {
    const fields = Array.from({ length: 300 }, (_, index) => `f${index}=v`).join('&');
    expectRefusedPage(await raw(`email=target%40example.com&password=x&${fields}`), 400, 'more than 256 parameters');
    expectRefusedPage(
      await raw('email=target%40example.com&email=other%40example.com&password=x'),
      400,
      'the form field email appears more than once',
    );
    expectRefusedPage(await raw('email=target%40example.com&password=%00'), 400, 'body.password must not contain');
    expect(await storedRows()).toBe(0);

    // The page still works: a wrong password is counted.
    expectWrongPassword(await page.signIn('target@example.com', WRONG));
    expect(await storedRows()).toBe(2);
  });
});

describe('housekeeping', () => {
  it('deletes a count 12 hours after its last failure or lock, and keeps the others', async () => {
    const kept = await newUser('kept');
    const expired = await newUser('expired');
    const page = await openLoginPage(freshAddress());
    expectWrongPassword(await page.signIn(kept, WRONG));
    expectWrongPassword(await page.signIn(expired, WRONG));
    const [row] = await sql<{ hours: number }>(
      databaseUrl,
      `SELECT round(extract(epoch FROM expires_at - now()) / 3600)::int AS hours FROM oauth_sign_in_throttles
       WHERE tenant_id = $1 AND kind = 'ACCOUNT' AND subject_hash = $2`,
      [tenant.id, sha256(kept)],
    );
    expect(row!.hours).toBe(12);
    await alterRow('ACCOUNT', expired, `expires_at = now() - interval '1 second'`);

    const deleted = await deleteExpired(one.services);
    expect(deleted.signInThrottles).toBeGreaterThanOrEqual(1);
    expect(await throttleRow('ACCOUNT', expired)).toBeUndefined();
    expect(await throttleRow('ACCOUNT', kept)).toMatchObject({ failures: 1 });
  });
});
