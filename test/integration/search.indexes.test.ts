/**
 * Indexes over REST (`/api/instant/indexes`): create, view, list with sort and cursors, replace,
 * delete; the round trip of every field; alias generation; processing state; scopes, tenancy and
 * refused input (each refused write checked to have changed nothing).
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { createKey, createTenant, startTestApp, type Tenant } from '../helpers/app';
import { sql } from '../helpers/db';
import { type RestResponse, expectRestError } from '../helpers/rest';

const { rest, databaseUrl } = await startTestApp();

const INDEXES = '/api/instant/indexes';
const MESSAGES = {
  400: 'Bad request: invalid filter, pagination or request body',
  401: 'Unauthorized: invalid or expired authorization header',
  403: 'Forbidden: insufficient scopes for resource',
  404: 'Not found: could not find requested entity',
  409: 'Conflict:',
} as const;

const storedIndexes = () => sql(databaseUrl, 'SELECT * FROM search_indexes ORDER BY id');

/** An index with every input field set. */
const fullIndex = (alias: string) => ({
  name: 'Products (NL)',
  alias,
  source: { id: 'feed-7', type: 'CSV_INTEGRATION' },
  fields: [
    { from: 'title', to: 'name', type: 'STRING', label: 'Name' },
    { from: 'brand.name', to: 'brand', type: 'STRING', label: 'Brand' },
    { from: 'price', to: 'price', type: 'NUMBER', label: 'Price' },
    { from: 'stock', to: 'in_stock', type: 'BOOLEAN', label: null },
    { from: 'sku', to: 'sku', label: 'SKU' },
  ],
  search_fields: ['name', 'brand'],
  display_fields: ['name', 'price', 'sku'],
  filters: [{ key: 'brand' }, { key: 'price' }],
  facet_fields: ['brand', 'price', 'in_stock'],
  distinct_field: 'sku',
  synonyms: [{ synonyms: ['sofa', 'couch'] }, { root: 'tv', synonyms: ['television'] }],
  stop_words: ['the', 'a'],
  ranking_rules: ['exactness', 'typo', 'price:desc'],
  sortable_fields: ['price', 'name'],
  matching: {
    exact_fields: ['brand'],
    typos_on_digit_words: true,
    min_word_length_for_one_typo: 4,
    min_word_length_for_two_typos: 8,
    token_separators: ['-', '/'],
    symbols_to_index: ['+'],
  },
  language: 'nl',
  is_active: true,
});

let a: Tenant;
let b: Tenant;

beforeAll(async () => {
  a = await createTenant(rest, 'A');
  b = await createTenant(rest, 'B');
});

const create = (token: string, index: object) => rest.post(INDEXES, { token, body: { data: index } });

describe('create and view', () => {
  it('creates an index: 201 with every field round-tripped, LIVE, processed', async () => {
    const response = await create(a.key, fullIndex('full'));
    expect(response.status, response.rawBody).toBe(201);
    const { is_active, ...input } = fullIndex('full');
    expect(response.body).toEqual({
      data: {
        ...input,
        id: expect.any(String),
        state: 'LIVE',
        is_active,
        fields: input.fields.map((field) => ({ type: null, ...field })),
        filters: [
          { key: 'brand', type: 'STRING', is_processed: true },
          { key: 'price', type: 'NUMBER', is_processed: true },
        ],
        available_fields: [
          { key: 'name', type: 'STRING' },
          { key: 'brand', type: 'STRING' },
          { key: 'price', type: 'NUMBER' },
          { key: 'in_stock', type: 'BOOLEAN' },
          { key: 'sku', type: null },
        ],
        has_pending_updates: false,
        last_processed_at: expect.any(String),
        created_at: expect.any(String),
        updated_at: expect.any(String),
      },
      page: null,
      meta: null,
    });
    const view = await rest.get(`${INDEXES}/full`, { token: a.key });
    expect(view.status).toBe(200);
    expect(view.body).toEqual(response.body);
    const [row] = await sql(databaseUrl, 'SELECT tenant_id, alias FROM search_indexes WHERE alias = $1', ['full']);
    expect(row).toEqual({ tenant_id: a.id, alias: 'full' });
  });

  it('fills the defaults of left-out settings, and types undeclared fields from the documents', async () => {
    const created = await create(a.key, { name: 'Minimal', filters: [{ key: 'brand' }] });
    expect(created.status).toBe(201);
    expect(created.body.data).toMatchObject({
      alias: 'minimal',
      source: { id: null, type: 'API' },
      fields: [],
      search_fields: [],
      display_fields: [],
      facet_fields: ['brand'],
      distinct_field: null,
      synonyms: [],
      stop_words: [],
      ranking_rules: ['words', 'typo', 'proximity', 'attribute', 'exactness'],
      filters: [{ key: 'brand', type: null, is_processed: true }],
      available_fields: [],
      matching: {
        exact_fields: [],
        typos_on_digit_words: false,
        min_word_length_for_one_typo: 5,
        min_word_length_for_two_typos: 9,
        token_separators: [],
        symbols_to_index: [],
      },
      language: null,
    });
    const upsert = await rest.put(`${INDEXES}/minimal/documents`, {
      token: a.key,
      body: { data: [{ id: 1, name: 'Lamp', brand: 'Lumo', price: 10 }] },
    });
    expect(upsert.status).toBe(204);
    const view = await rest.get(`${INDEXES}/minimal`, { token: a.key });
    expect(view.body.data).toMatchObject({
      search_fields: ['brand', 'name'],
      display_fields: ['brand', 'name', 'price'],
      filters: [{ key: 'brand', type: 'STRING', is_processed: true }],
      available_fields: [
        { key: 'brand', type: 'STRING' },
        { key: 'name', type: 'STRING' },
        { key: 'price', type: 'NUMBER' },
      ],
    });
  });

  it('generates the alias from the name, unique within the tenant; another tenant may use the same', async () => {
    const first = await create(a.key, { name: 'Café Été!' });
    const second = await create(a.key, { name: 'Café Été' });
    const other = await create(b.key, { name: 'Café Été' });
    expect([first.body.data.alias, second.body.data.alias, other.body.data.alias]).toEqual([
      'cafe-ete',
      'cafe-ete-2',
      'cafe-ete',
    ]);
  });

  it('a taken alias is a 409 and changes nothing', async () => {
    await create(a.key, { name: 'Taken', alias: 'taken' });
    const before = await storedIndexes();
    expectRestError(await create(a.key, { name: 'Other', alias: 'taken' }), 409, { message: MESSAGES[409] });
    expect(await storedIndexes()).toEqual(before);
  });

  it("another tenant's index is a 404, as is an unknown alias", async () => {
    await create(a.key, { name: 'Private', alias: 'private-a' });
    expectRestError(await rest.get(`${INDEXES}/private-a`, { token: b.key }), 404, { message: MESSAGES[404] });
    expectRestError(await rest.get(`${INDEXES}/nope`, { token: a.key }), 404, { message: MESSAGES[404] });
  });
});

describe('refused input changes nothing', () => {
  const cases: [string, unknown][] = [
    ['a missing name', { alias: 'x' }],
    ['an unknown field', { name: 'X', colour: 'red' }],
    ['a malformed alias', { name: 'X', alias: 'Not An Alias' }],
    ['an unknown field type', { name: 'X', fields: [{ from: 'a', type: 'DATE' }] }],
    ['a search field that is not a declared field', { name: 'X', fields: [{ from: 'a' }], search_fields: ['b'] }],
    ['a filter on an undeclared field', { name: 'X', fields: [{ from: 'a' }], filters: [{ key: 'b' }] }],
    ['a sort rule on an undeclared field', { name: 'X', fields: [{ from: 'a' }], ranking_rules: ['b:asc'] }],
    ['an unknown ranking rule', { name: 'X', ranking_rules: ['popularity'] }],
    ['a sortable field that is not a declared field', { name: 'X', fields: [{ from: 'a' }], sortable_fields: ['b'] }],
    ['a repeated ranking rule', { name: 'X', ranking_rules: ['typo', 'typo'] }],
    ['a multi-way synonym of one word', { name: 'X', synonyms: [{ synonyms: ['sofa'] }] }],
    ['a synonym of more than 5 words', { name: 'X', synonyms: [{ synonyms: ['sofa', 'a b c d e f'] }] }],
    ['a stop phrase of no words', { name: 'X', stop_words: ['--'] }],
    [
      'a field mapped twice',
      {
        name: 'X',
        fields: [
          { from: 'a', to: 'c' },
          { from: 'b', to: 'c' },
        ],
      },
    ],
    ['a reserved field name', { name: 'X', fields: [{ from: 'a', to: 'metadata' }] }],
    ['a wrong type', { name: 42 }],
  ];
  for (const [what, data] of cases) {
    it(`create with ${what}: 400`, async () => {
      const before = await storedIndexes();
      expectRestError(await create(a.key, data as object), 400, { message: MESSAGES[400] });
      expect(await storedIndexes()).toEqual(before);
    });
  }

  it('malformed JSON: 400; no body: 400', async () => {
    const before = await storedIndexes();
    expectRestError(
      await rest.post(INDEXES, { token: a.key, rawBody: '{"data":', headers: { 'content-type': 'application/json' } }),
      400,
      { message: MESSAGES[400] },
    );
    expect(await storedIndexes()).toEqual(before);
  });
});

describe('credentials and scopes', () => {
  it('no token: 401; a token without the scope: 403; nothing created', async () => {
    const readOnly = await createKey(rest, a.id, ['indexes:read']);
    const writeOnly = await createKey(rest, a.id, ['indexes:write']);
    const before = await storedIndexes();
    expectRestError(await create('', { name: 'X' }), 401, { message: MESSAGES[401] });
    expectRestError(await rest.post(INDEXES, { body: { data: { name: 'X' } } }), 401, { message: MESSAGES[401] });
    expectRestError(await create('cpk_bogus', { name: 'X' }), 401, { message: MESSAGES[401] });
    expectRestError(await create(readOnly, { name: 'X' }), 403, { message: MESSAGES[403] });
    expectRestError(await rest.get(INDEXES, { token: writeOnly }), 403, { message: MESSAGES[403] });
    expectRestError(await rest.get(`${INDEXES}/full`, { token: writeOnly }), 403, { message: MESSAGES[403] });
    expectRestError(await rest.put(`${INDEXES}/full`, { token: readOnly, body: { data: { name: 'X' } } }), 403, {
      message: MESSAGES[403],
    });
    expectRestError(await rest.delete(`${INDEXES}/full`, { token: readOnly }), 403, { message: MESSAGES[403] });
    expect(await storedIndexes()).toEqual(before);
  });
});

describe('replace and delete', () => {
  it('PUT replaces the whole definition: 204, left-out settings back to defaults, documents kept and re-indexed', async () => {
    await create(a.key, fullIndex('replaced'));
    const before = (await rest.get(`${INDEXES}/replaced`, { token: a.key })).body.data;
    await rest.put(`${INDEXES}/replaced/documents`, {
      token: a.key,
      body: { data: [{ id: 'x', title: 'Lamp', price: 5, sku: 'L1' }] },
    });

    const response = await rest.put(`${INDEXES}/replaced`, {
      token: a.key,
      body: { data: { name: 'Renamed', fields: [{ from: 'title', to: 'name' }] } },
    });
    expect(response.status).toBe(204);
    expect(response.rawBody).toBe('');
    let after = (await rest.get(`${INDEXES}/replaced`, { token: a.key })).body.data;
    for (let i = 0; i < 100 && after.has_pending_updates; i++) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      after = (await rest.get(`${INDEXES}/replaced`, { token: a.key })).body.data;
    }
    expect(after).toMatchObject({
      id: before.id,
      alias: 'replaced',
      name: 'Renamed',
      source: { id: null, type: 'API' },
      fields: [{ from: 'title', to: 'name', type: 'STRING', label: null }],
      filters: [],
      synonyms: [],
      stop_words: [],
      ranking_rules: ['words', 'typo', 'proximity', 'attribute', 'exactness'],
      has_pending_updates: false,
      created_at: before.created_at,
    });
    expect(Date.parse(after.updated_at)).toBeGreaterThan(Date.parse(before.updated_at));
    const search = await rest.post('/api/instant/search/indexes/replaced', {
      token: a.key,
      body: { data: [{ q: 'lamp' }] },
    });
    expect(search.body.data[0].results[0].hits).toEqual([expect.objectContaining({ id: 'x', name: 'Lamp' })]);
  });

  it('has_pending_updates is true while a change is not applied, and a search that applies it sets last_processed_at', async () => {
    await create(a.key, { name: 'Pending', alias: 'pending' });
    const processed = (await rest.get(`${INDEXES}/pending`, { token: a.key })).body.data.last_processed_at;
    // A process that committed a change and stopped before the engine applied it.
    await sql(databaseUrl, "UPDATE search_indexes SET version = version + 1 WHERE alias = 'pending'");
    const pending = (await rest.get(`${INDEXES}/pending`, { token: a.key })).body.data;
    expect(pending).toMatchObject({ has_pending_updates: true, last_processed_at: processed });
    await new Promise((resolve) => setTimeout(resolve, 5));
    expect(
      (await rest.post('/api/instant/search/indexes/pending', { token: a.key, body: { data: [{}] } })).status,
    ).toBe(201);
    const done = (await rest.get(`${INDEXES}/pending`, { token: a.key })).body.data;
    expect(done.has_pending_updates).toBe(false);
    expect(Date.parse(done.last_processed_at)).toBeGreaterThan(Date.parse(processed));
  });

  it('PUT: an alias in the body must equal the path; unknown alias 404; another tenant 404; nothing changes', async () => {
    await create(a.key, { name: 'Fixed', alias: 'fixed' });
    const before = await storedIndexes();
    expectRestError(
      await rest.put(`${INDEXES}/fixed`, { token: a.key, body: { data: { name: 'X', alias: 'other' } } }),
      400,
      { message: MESSAGES[400] },
    );
    expectRestError(await rest.put(`${INDEXES}/unknown`, { token: a.key, body: { data: { name: 'X' } } }), 404, {
      message: MESSAGES[404],
    });
    expectRestError(await rest.put(`${INDEXES}/fixed`, { token: b.key, body: { data: { name: 'X' } } }), 404, {
      message: MESSAGES[404],
    });
    expect(await storedIndexes()).toEqual(before);
  });

  it('DELETE: 204 and the index is gone with its documents; again 404; another tenant 404', async () => {
    await create(a.key, { name: 'Doomed', alias: 'doomed' });
    await rest.put(`${INDEXES}/doomed/documents`, { token: a.key, body: { data: [{ id: 1, name: 'x' }] } });
    expectRestError(await rest.delete(`${INDEXES}/doomed`, { token: b.key }), 404, { message: MESSAGES[404] });
    const response = await rest.delete(`${INDEXES}/doomed`, { token: a.key });
    expect(response.status).toBe(204);
    expectRestError(await rest.get(`${INDEXES}/doomed`, { token: a.key }), 404, { message: MESSAGES[404] });
    expectRestError(await rest.delete(`${INDEXES}/doomed`, { token: a.key }), 404, { message: MESSAGES[404] });
    expect(
      await sql(
        databaseUrl,
        'SELECT count(*)::int AS n FROM search_documents d WHERE NOT EXISTS (SELECT 1 FROM search_indexes i WHERE i.id = d.index_id)',
      ),
    ).toEqual([{ n: 0 }]);
  });
});

describe('list', () => {
  let tenant: Tenant;
  beforeAll(async () => {
    tenant = await createTenant(rest, 'Lister');
    for (const name of ['Delta', 'Alpha', 'Charlie', 'Bravo', 'Echo']) {
      expect((await create(tenant.key, { name })).status).toBe(201);
      // Distinct creation times, so that created_at alone orders them.
      await new Promise((resolve) => setTimeout(resolve, 3));
    }
  });

  const walk = async (query: string) => {
    const seen: string[] = [];
    let url: string | null = `${INDEXES}?${query}&page[size]=2`;
    while (url) {
      const response: RestResponse = await rest.get(url.replace(/^https?:\/\/[^/]+/, ''), { token: tenant.key });
      expect(response.status).toBe(200);
      seen.push(...response.body.data.map((index: { alias: string }) => index.alias));
      url = response.body.page.next;
    }
    return seen;
  };

  it("holds only the tenant's indexes, in creation order by default, page after page", async () => {
    expect(await walk('sort=created_at')).toEqual(['delta', 'alpha', 'charlie', 'bravo', 'echo']);
    const first = await rest.get(INDEXES, { token: tenant.key });
    expect(first.body.data.map((index: { alias: string }) => index.alias)).toEqual([
      'delta',
      'alpha',
      'charlie',
      'bravo',
      'echo',
    ]);
    expect(first.body.page).toMatchObject({ next: null, previous: null, after: null, before: null });
  });

  it('sorts by alias, name and created_at, ascending or descending with a leading -', async () => {
    expect(await walk('sort=alias')).toEqual(['alpha', 'bravo', 'charlie', 'delta', 'echo']);
    expect(await walk('sort=-alias')).toEqual(['echo', 'delta', 'charlie', 'bravo', 'alpha']);
    expect(await walk('sort=-name')).toEqual(['echo', 'delta', 'charlie', 'bravo', 'alpha']);
    expect(await walk('sort=-created_at')).toEqual(['echo', 'bravo', 'charlie', 'alpha', 'delta']);
  });

  it('walks backwards with page.previous', async () => {
    const last = await rest.get(
      `${INDEXES}?sort=-alias&page[size]=2&page[after]=${(await rest.get(`${INDEXES}?sort=-alias&page[size]=2`, { token: tenant.key })).body.page.after}`,
      { token: tenant.key },
    );
    expect(last.body.data.map((index: { alias: string }) => index.alias)).toEqual(['charlie', 'bravo']);
    const back = await rest.get(last.body.page.previous.replace(/^https?:\/\/[^/]+/, ''), { token: tenant.key });
    expect(back.body.data.map((index: { alias: string }) => index.alias)).toEqual(['echo', 'delta']);
    expect(back.body.page.previous).toBeNull();
  });

  it('an unknown sort, a cursor of another sort and a page size over 100 are 400s', async () => {
    expectRestError(await rest.get(`${INDEXES}?sort=colour`, { token: tenant.key }), 400, { message: MESSAGES[400] });
    const cursor = (await rest.get(`${INDEXES}?sort=alias&page[size]=1`, { token: tenant.key })).body.page.after;
    expectRestError(await rest.get(`${INDEXES}?sort=name&page[after]=${cursor}`, { token: tenant.key }), 400, {
      message: MESSAGES[400],
    });
    expectRestError(await rest.get(`${INDEXES}?page[after]=${cursor}`, { token: a.key }), 400, {
      message: MESSAGES[400],
    });
    expectRestError(await rest.get(`${INDEXES}?page[size]=101`, { token: tenant.key }), 400, {
      message: MESSAGES[400],
    });
  });
});
