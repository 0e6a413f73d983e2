/**
 * Query suggestions (`GET /api/instant/search/{key}/suggestions`): popular queries of the search log
 * (seeded through the public search endpoint and its log) that found results, matched by prefix and
 * with typos, most searched first; the minimum count and the deny list of the key's settings; the
 * limit and the choice of index; the key's access rule and the limit per client address; refusals of
 * the settings block that change nothing; hostile query strings; and the rebuild per process: what a
 * process keeps is served until its refresh, after which new searches show up.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app';
import { createDb } from '../../src/kernel/db';
import { IndexRows } from '../../src/modules/search/index-rows';
import { popularQueries } from '../../src/modules/search/suggestions/suggestions.repository';
import { SuggestionsService } from '../../src/modules/search/suggestions/suggestions.service';
import { createKey, createTenant, startTestApp, TEST_MASTER_KEY, type Tenant } from '../helpers/app';
import { createRestClient, type RestClient, type RestResponse, expectRestError } from '../helpers/rest';

const SUGGESTIONS_PER_MINUTE = 30;
const t = await startTestApp({ env: { SEARCH_SUGGESTIONS_PER_MINUTE: String(SUGGESTIONS_PER_MINUTE) } });
const { rest } = t;

/** A second process of the same deployment that rebuilds its suggestions every second. */
const otherDb = createDb(t.databaseUrl, { poolSize: 2 });
const other = await buildApp({
  config: { ...t.config, searchSuggestionsRefreshSeconds: 1 },
  db: otherDb,
  masterKey: TEST_MASTER_KEY,
  backgroundWorkers: false,
});
await other.app.ready();
const otherRest = createRestClient(other.app);

const INDEXES = '/api/instant/indexes';
const SEARCH = '/api/instant/search';

const products = [
  { id: 'p1', name: 'Desk lamp' },
  { id: 'p2', name: 'Floor lamp' },
  { id: 'p3', name: 'Lamp shade' },
  { id: 'p4', name: 'Leather jacket' },
  { id: 'p5', name: 'Rain jacket' },
  { id: 'p6', name: 'Office chair' },
  { id: 'p7', name: 'Cheap chair' },
  { id: 'p8', name: 'Café table' },
];

/** Queries searched through the key, how often; `lampion` and `unicorn` find nothing. */
const SEARCHED: [string, number][] = [
  ['desk lamp', 5],
  ['Lamp', 3],
  ['lamp shade', 2],
  ['floor lamp', 2],
  ['leather', 2],
  ['lampion', 4],
  ['leather jacket', 4],
  ['jacket', 2],
  ['cheap chair', 3],
  ['office chair', 2],
  ['chair', 1],
  ['café table', 2],
  ['unicorn', 6],
];

let shop: Tenant;
/** Result counts of the seeded searches of `catalog`, by query as stored. */
const resultCounts = new Map<string, number>();

async function createIndex(alias: string, documents = products) {
  const created = await rest.post(INDEXES, { token: shop.key, body: { data: { name: alias, alias } } });
  expect(created.status, created.rawBody).toBe(201);
  const upserted = await rest.put(`${INDEXES}/${alias}/documents`, { token: shop.key, body: { data: documents } });
  expect(upserted.status, upserted.rawBody).toBe(204);
}

async function createProxy(key: string, settings: unknown, isPrivate = false) {
  const routes = {
    path: '*',
    origin: { uri: 'https://shop.example.com' },
    settings: { auth: { is_required: isPrivate } },
  };
  const created = await rest.post('/api/storage/edge/proxies', { token: shop.key, body: { data: { key, routes } } });
  expect(created.status, created.rawBody).toBe(201);
  const put = await rest.put(`${SEARCH}/${key}/settings`, { token: shop.key, body: { data: settings } });
  expect(put.status, put.rawBody).toBe(200);
}

/** Searches `q` `times` times through a key (one request of up to 10 contexts), as a storefront does. */
async function searchTimes(key: string, alias: string, q: string, times: number, client: RestClient = rest) {
  for (let done = 0; done < times; done += 10) {
    const contexts = Array.from({ length: Math.min(10, times - done) }, () => ({ q, indices: [alias] }));
    const response = await client.post(`${SEARCH}/${key}`, { body: { data: contexts } });
    expect(response.status, response.rawBody).toBe(201);
    if (alias === 'catalog') resultCounts.set(q.trim().toLowerCase(), response.body.data[0].results[0].count);
  }
}

/** Each group of tests asks from an address of its own, so that only the rate-limit test reaches the limit. */
function suggest(key: string, query: string, options: { address?: string; token?: string; client?: RestClient } = {}) {
  return (options.client ?? rest).get(`${SEARCH}/${key}/suggestions?${query}`, {
    remoteAddress: options.address ?? '10.1.0.1',
    token: options.token,
  });
}

const queriesOf = (response: RestResponse) => {
  expect(response.status, response.rawBody).toBe(200);
  return (response.body.data as { query: string }[]).map((suggestion) => suggestion.query);
};

const settingsOf = async (key: string) => {
  const response = await rest.get(`${SEARCH}/${key}/settings`);
  expect(response.status, response.rawBody).toBe(200);
  return response.body;
};

beforeAll(async () => {
  shop = await createTenant(rest, 'Shop');
  await createIndex('catalog');
  await createIndex('blog', [{ id: 'b1', name: 'How to light a desk' }]);
  await createProxy('shop', { indexes: [{ alias: 'catalog' }, { alias: 'blog' }] });
  await createProxy('loose', { indexes: [{ alias: 'catalog' }], suggestions: { min_searches: 1 } });
  await createProxy('strict', {
    indexes: [{ alias: 'catalog' }],
    suggestions: { deny: ['CHEAP', 'Desk Lamp', 'lam'] },
  });
  await createProxy('private', { indexes: [{ alias: 'catalog' }] }, true);
  for (const [q, times] of SEARCHED) await searchTimes('shop', 'catalog', q, times);
  await searchTimes('shop', 'blog', 'desk', 3);
  await t.services.search.log.flush();
  return async () => {
    await other.app.close();
    await otherDb.$disconnect();
  };
});

describe('which queries are suggested', () => {
  it('matches the typed prefix case-insensitively, most searched first, with the searches and average hits', async () => {
    const response = await suggest('shop', 'q=LAM');
    expect(response.headers['content-type']).toMatch(/^application\/json/);
    expect(response.body).toEqual({
      data: [
        { query: 'desk lamp', count: 5, hits: resultCounts.get('desk lamp') },
        { query: 'lamp', count: 3, hits: resultCounts.get('lamp') },
        // Equally searched: in the order of the query.
        { query: 'floor lamp', count: 2, hits: resultCounts.get('floor lamp') },
        { query: 'lamp shade', count: 2, hits: resultCounts.get('lamp shade') },
      ],
      page: null,
      meta: null,
    });
    expect(resultCounts.get('lamp')).toBe(3);
  });

  it('matches with typos, ignoring accents, fewer typos first', async () => {
    expect(queriesOf(await suggest('shop', 'q=lether'))).toEqual(['leather jacket', 'leather']);
    expect(queriesOf(await suggest('shop', 'q=jakcet'))).toEqual(['leather jacket', 'jacket']);
    expect(queriesOf(await suggest('shop', 'q=cafe'))).toEqual(['café table']);
    // Every typed word must match, the last as a prefix.
    expect(queriesOf(await suggest('shop', 'q=leather%20ja'))).toEqual(['leather jacket']);
    expect(queriesOf(await suggest('shop', 'q=leather%20chai'))).toEqual([]);
  });

  it('leaves out queries that found nothing and queries searched fewer times than the minimum', async () => {
    // `lampion` was searched 4 times, finding nothing (`lampi` is a typo of `lamp`).
    expect(queriesOf(await suggest('shop', 'q=lampio'))).toEqual([]);
    expect(queriesOf(await suggest('shop', 'q=unic'))).toEqual([]);
    // `chair` was searched once: the default minimum is 2; the key `loose` asks for 1.
    expect(queriesOf(await suggest('shop', 'q=chai'))).toEqual(['cheap chair', 'office chair']);
    expect(queriesOf(await suggest('loose', 'q=chai'))).toEqual(['cheap chair', 'office chair', 'chair']);
  });

  it('never suggests a query holding a denied word or phrase, whole words, case-insensitive', async () => {
    expect(queriesOf(await suggest('strict', 'q=ch'))).toEqual(['office chair']);
    // `Desk Lamp` hides `desk lamp` but not `lamp`; `lam` is not a whole word of `lamp`.
    expect(queriesOf(await suggest('strict', 'q=lam'))).toEqual(['lamp', 'floor lamp', 'lamp shade']);
    expect(queriesOf(await suggest('shop', 'q=ch'))).toEqual(['cheap chair', 'office chair']);
  });

  it('gives at most `limit` suggestions, 5 by default', async () => {
    expect(queriesOf(await suggest('loose', 'q=la&limit=1'))).toEqual(['desk lamp']);
    expect(queriesOf(await suggest('loose', 'q=l'))).toHaveLength(5);
    expect(queriesOf(await suggest('loose', 'q=l&limit=20'))).toEqual([
      'desk lamp',
      'leather jacket',
      'lamp',
      'floor lamp',
      'lamp shade',
      'leather',
    ]);
    for (const limit of ['0', '21', 'many', '1.5', '']) {
      expectRestError(await suggest('loose', `q=l&limit=${limit}`), 400, 'query.limit');
    }
  });

  it('suggests from the first index of the settings unless `index` names another of them', async () => {
    expect(queriesOf(await suggest('shop', 'q=desk'))).toEqual(['desk lamp']);
    expect(queriesOf(await suggest('shop', 'q=desk&index=catalog'))).toEqual(['desk lamp']);
    expect(queriesOf(await suggest('shop', 'q=desk&index=blog'))).toEqual(['desk']);
    // An index of the tenant that the key does not search, and one that does not exist.
    expectRestError(await suggest('loose', 'q=desk&index=blog'), 400, 'query.index');
    expectRestError(await suggest('shop', 'q=desk&index=nope'), 400, 'query.index');
  });

  it('answers browsers (CORS)', async () => {
    const response = await rest.get(`${SEARCH}/shop/suggestions?q=lam`, {
      remoteAddress: '10.1.0.1',
      headers: { origin: 'https://shop.example.com' },
    });
    expect(queriesOf(response)).toContain('desk lamp');
    expect(response.headers['access-control-allow-origin']).toBe('*');
  });

  it('answers a query without words with no suggestions', async () => {
    expect(queriesOf(await suggest('shop', 'q=%20%21'))).toEqual([]);
  });
});

describe('the access rule of the key', () => {
  it('a private key needs a token of its tenant with scope search; an unknown key is a 404', async () => {
    const anonymous = await suggest('private', 'q=lam', { address: '10.1.0.2' });
    expect(anonymous.status, anonymous.rawBody).toBe(401);
    const searcher = await createKey(rest, shop.id, ['search']);
    expect(queriesOf(await suggest('private', 'q=lam', { address: '10.1.0.2', token: searcher }))).toEqual([
      'desk lamp',
      'lamp',
      'floor lamp',
      'lamp shade',
    ]);
    const reader = await createKey(rest, shop.id, ['indexes:read']);
    expect((await suggest('private', 'q=lam', { address: '10.1.0.2', token: reader })).status).toBe(403);
    const stranger = await createTenant(rest, 'Stranger');
    expect((await suggest('private', 'q=lam', { address: '10.1.0.2', token: stranger.key })).status).toBe(404);
    expect((await suggest('nope', 'q=lam', { address: '10.1.0.2' })).status).toBe(404);
  });
});

describe('the limit per client address', () => {
  it(`${SUGGESTIONS_PER_MINUTE} requests a minute per address, malformed ones too, then 429 with Retry-After`, async () => {
    const address = '10.1.0.3';
    const malformed = await suggest('shop', 'q=', { address });
    expect(malformed.status, malformed.rawBody).toBe(400);
    expect(malformed.headers['ratelimit-remaining']).toBe(String(SUGGESTIONS_PER_MINUTE - 1));
    for (let i = 1; i < SUGGESTIONS_PER_MINUTE; i++) {
      const response = await suggest('shop', 'q=lam', { address });
      expect(response.status, response.rawBody).toBe(200);
      expect(response.headers['ratelimit-limit']).toBe(String(SUGGESTIONS_PER_MINUTE));
    }
    const refused = await suggest('shop', 'q=lam', { address });
    expect(refused.status, refused.rawBody).toBe(429);
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    // Another address has its own count.
    expect((await suggest('shop', 'q=lam', { address: '10.1.0.4' })).status).toBe(200);
  });
});

describe('the suggestions block of the search settings', () => {
  it('reads back as stored, trimmed and with its defaults; settings without it read back without it', async () => {
    expect((await settingsOf('strict')).data.suggestions).toEqual({
      deny: ['CHEAP', 'Desk Lamp', 'lam'],
      min_searches: 2,
    });
    expect((await settingsOf('loose')).data.suggestions).toEqual({ deny: [], min_searches: 1 });
    expect((await settingsOf('shop')).data).not.toHaveProperty('suggestions');
    const put = await rest.put(`${SEARCH}/loose/settings`, {
      token: shop.key,
      body: { data: { indexes: [{ alias: 'catalog' }], suggestions: { deny: ['  spam  '] } } },
    });
    expect(put.status, put.rawBody).toBe(200);
    expect(put.body.data.suggestions).toEqual({ deny: ['spam'], min_searches: 2 });
    const restored = await rest.put(`${SEARCH}/loose/settings`, {
      token: shop.key,
      body: { data: { indexes: [{ alias: 'catalog' }], suggestions: { min_searches: 1 } } },
    });
    expect(restored.status, restored.rawBody).toBe(200);
    // `null` stores no block, as leaving it out does.
    const cleared = await rest.put(`${SEARCH}/shop/settings`, {
      token: shop.key,
      body: { data: { indexes: [{ alias: 'catalog' }, { alias: 'blog' }], suggestions: null } },
    });
    expect(cleared.status, cleared.rawBody).toBe(200);
    expect(cleared.body.data).not.toHaveProperty('suggestions');
  });

  it.each([
    ['too many entries', { deny: Array.from({ length: 1001 }, (_, i) => `w${i}`) }, 'suggestions.deny'],
    ['an entry too long', { deny: ['ok', 'x'.repeat(101)] }, 'suggestions.deny[1]'],
    ['an empty entry', { deny: ['   '] }, 'suggestions.deny[0]'],
    ['an entry without a word', { deny: ['!!!'] }, 'suggestions.deny[0]'],
    ['an entry of the wrong type', { deny: [{ word: 'x' }] }, 'suggestions.deny[0]'],
    ['an entry with U+0000', { deny: ['bad\u0000word'] }, 'suggestions.deny[0]'],
    ['deny that is not a list', { deny: 'cheap' }, 'suggestions.deny'],
    ['a minimum of 0', { min_searches: 0 }, 'suggestions.min_searches'],
    ['a fractional minimum', { min_searches: 1.5 }, 'suggestions.min_searches'],
    ['an unknown member', { deny: [], boost: 2 }, 'suggestions.boost'],
    ['a block that is not an object', 'cheap', 'suggestions'],
  ])('refuses %s with a 400 naming it, changing nothing', async (_, suggestions, field) => {
    const before = await settingsOf('strict');
    const response = await rest.put(`${SEARCH}/strict/settings`, {
      token: shop.key,
      body: { data: { indexes: [{ alias: 'catalog' }], suggestions } },
    });
    expectRestError(response, 400, `body.data.${field}`);
    expect(await settingsOf('strict')).toEqual(before);
  });

  it('refuses a deeply nested block with a 400, changing nothing', async () => {
    const before = await settingsOf('strict');
    const nested = `${'{"deny":'.repeat(5000)}"x"${'}'.repeat(5000)}`;
    const response = await rest.put(`${SEARCH}/strict/settings`, {
      token: shop.key,
      rawBody: `{"data":{"indexes":[{"alias":"catalog"}],"suggestions":${nested}}}`,
      headers: { 'content-type': 'application/json' },
    });
    expect(response.status, response.rawBody).toBe(400);
    expect(await settingsOf('strict')).toEqual(before);
  });
});

describe('hostile query strings', () => {
  const address = '10.1.0.5';
  it.each([
    ['a missing q', '', 'query.q'],
    ['an empty q', 'q=', 'query.q'],
    ['a q of 201 characters', `q=${'a'.repeat(201)}`, 'query.q'],
    ['a q of 16 KiB', `q=${'a'.repeat(16 * 1024)}`, 'query.q'],
    ['a repeated q', 'q=a&q=b', 'query.q'],
    ['a nested q', 'q[a][b][c]=lamp', 'query.q'],
    ['an undocumented parameter', 'q=lam&sort=asc', 'query.sort'],
    ['an undocumented parameter named like a nested one', 'q=lam&q[a][b]=c', 'query.q[a][b]'],
  ])('refuses %s with a 400 naming the parameter', async (_, query, field) => {
    expectRestError(await suggest('shop', query, { address }), 400, field);
  });

  it('refuses 10,000 parameters with a 400 naming the query', async () => {
    const query = ['q=lam', ...Array.from({ length: 10_000 }, (_, i) => `p${i}=1`)].join('&');
    const response = await suggest('shop', query, { address });
    expectRestError(response, 400, 'query');
  });
});

describe('the suggestions kept by each process', () => {
  it('are served until the refresh, then rebuilt from the search log in the background', async () => {
    // The other process builds its suggestions of `catalog` now; this one built them in the tests above.
    expect(queriesOf(await suggest('shop', 'q=rain', { client: otherRest }))).toEqual([]);
    await searchTimes('shop', 'catalog', 'rain jacket', 2);
    await t.services.search.log.flush();
    // This process refreshes every 300 seconds: it still serves what it kept.
    expect(queriesOf(await suggest('shop', 'q=rain'))).toEqual([]);
    // The other one rebuilds every second, without a request waiting for it: the new query shows up.
    await expect
      .poll(async () => queriesOf(await suggest('shop', 'q=rain', { client: otherRest, address: '10.1.0.6' })), {
        timeout: 15_000,
        interval: 250,
      })
      .toEqual(['rain jacket']);
  });
});

describe('the builds of a process', () => {
  /** A service of its own whose reads of the search log are counted, and held back while `gate` is set. */
  function observedService(refreshSeconds: number) {
    const observed = {
      builds: 0,
      gate: undefined as Promise<void> | undefined,
      fail: false,
      errors: [] as unknown[],
    };
    const service = new SuggestionsService(t.db, new IndexRows(t.db), {
      refreshSeconds,
      retentionDays: 90,
      onBackgroundError: (error) => observed.errors.push(error),
      load: async (...args) => {
        observed.builds += 1;
        await observed.gate;
        if (observed.fail) throw new Error('the search log cannot be read');
        return popularQueries(...args);
      },
    });
    return { service, observed };
  }
  const request = { q: 'lam', limit: 5 };

  it('concurrent first requests for an index share one build', async () => {
    const { service, observed } = observedService(300);
    const answers = await Promise.all(Array.from({ length: 10 }, () => service.suggest(null, 'shop', request)));
    expect(observed.builds).toBe(1);
    for (const answer of answers) expect(answer.map((s) => s.query)).toEqual(answers[0]!.map((s) => s.query));
    expect(answers[0]!.map((s) => s.query)).toContain('desk lamp');
    // Kept: later requests read no log.
    await service.suggest(null, 'shop', { q: 'jack', limit: 5 });
    expect(observed.builds).toBe(1);
  });

  it('after the refresh time, requests are answered from what is kept while the rebuild runs', async () => {
    const { service, observed } = observedService(1);
    const first = await service.suggest(null, 'shop', request);
    let open!: () => void;
    observed.gate = new Promise<void>((resolve) => (open = resolve));
    // Once the kept suggestions are stale, a request starts the rebuild, which the gate holds back ...
    await expect.poll(async () => (await service.suggest(null, 'shop', request), observed.builds)).toBe(2);
    // ... and requests meanwhile get the kept suggestions without waiting for it.
    expect(await service.suggest(null, 'shop', request)).toEqual(first);
    open();
    expect(observed.errors).toEqual([]);
  });

  it('a rebuild that fails keeps what is kept, and is reported', async () => {
    const { service, observed } = observedService(1);
    const first = await service.suggest(null, 'shop', request);
    observed.fail = true;
    await expect
      .poll(async () => (await service.suggest(null, 'shop', request), observed.errors.length))
      .toBeGreaterThanOrEqual(1);
    expect(String((observed.errors[0] as Error).message)).toMatch(/were not rebuilt/);
    expect(await service.suggest(null, 'shop', request)).toEqual(first);
  });
});
