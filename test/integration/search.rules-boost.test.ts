/**
 * Merchandising rules that boost and bury (embedded engine): documents matching a `boost` filter come
 * before, and those matching a `bury` filter after, the others of equal relevance; a document matching
 * both is buried; relevance and the query's sort decide first; pins still apply on top; an inactive
 * rule does nothing; refusals (filters the index does not take, hostile bodies) change nothing.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { createTenant, startTestApp, type Tenant } from '../helpers/app';
import { sql } from '../helpers/db';
import { expectRestError } from '../helpers/rest';

const { rest, databaseUrl } = await startTestApp();

const INDEXES = '/api/instant/indexes';
const RULES = `${INDEXES}/shop/rules`;

// The four chairs are equally relevant to `chair` (one word, first in a two-word name).
const products = [
  { id: 'a1', name: 'Chair Alpha', brand: 'Basic', price: 50, in_stock: true },
  { id: 'a2', name: 'Chair Beta', brand: 'Lumo', price: 50, in_stock: true },
  { id: 'a3', name: 'Chair Gamma', brand: 'Sitwell', price: 50, in_stock: false },
  { id: 'a4', name: 'Chair Delta', brand: 'Basic', price: 40, in_stock: true },
  { id: 'r1', name: 'Red chair', brand: 'Lumo', price: 90, in_stock: true },
  { id: 'l1', name: 'Desk lamp', brand: 'Sitwell', price: 20, in_stock: true },
];

let a: Tenant;

const state = async () => (await sql(databaseUrl, "SELECT version, rules FROM search_indexes WHERE alias = 'shop'"))[0];

beforeAll(async () => {
  a = await createTenant(rest, 'A');
  const index = {
    name: 'Shop',
    alias: 'shop',
    search_fields: ['name'],
    filters: [{ key: 'brand' }, { key: 'price' }, { key: 'in_stock' }],
    sortable_fields: ['price'],
  };
  expect((await rest.post(INDEXES, { token: a.key, body: { data: index } })).status).toBe(201);
  expect((await rest.put(`${INDEXES}/shop/documents`, { token: a.key, body: { data: products } })).status).toBe(204);
});

const search = async (context: object) => {
  const response = await rest.post('/api/instant/search/indexes/shop', { token: a.key, body: { data: [context] } });
  expect(response.status, response.rawBody).toBe(201);
  return response.body.data[0].results[0];
};
const ids = async (context: object) => (await search(context)).hits.map((hit: { id: string }) => hit.id);

const putRules = async (rules: object[]) => {
  const response = await rest.put(RULES, { token: a.key, body: { data: rules } });
  expect(response.status, response.rawBody).toBe(200);
  return response.body.data;
};

const brand = (...values: string[]) => ({ key: 'brand', operator: 'in', values });
const chairs = { text: 'chair', match: 'contains' };

describe('rules that boost and bury', () => {
  it('without a rule, equally relevant chairs come by id', async () => {
    await putRules([]);
    expect(await ids({ q: 'chair' })).toEqual(['a1', 'a2', 'a3', 'a4', 'r1']);
  });

  it('stores boost and bury as given and reads them back; a rule without them has neither', async () => {
    const rules = [
      { id: 'sit', query: chairs, boost: [brand('Sitwell')], bury: [{ key: 'price', operator: 'gte', values: [80] }] },
      { id: 'plain', query: { text: 'lamp', match: 'exact' } },
    ];
    const stored = await putRules(rules);
    expect(stored[0]).toEqual({ ...rules[0], filters: [], pin: [], hide: [] });
    expect(stored[1]).not.toHaveProperty('boost');
    expect(stored[1]).not.toHaveProperty('bury');
    expect((await rest.get(RULES, { token: a.key })).body.data).toEqual(stored);
  });

  it('a boosted brand among equal hits moves first, keeping id order among the others', async () => {
    await putRules([{ id: 'sit', query: chairs, boost: [brand('Sitwell')] }]);
    const result = await search({ q: 'chair' });
    expect(result.hits.map((hit: { id: string }) => hit.id)).toEqual(['a3', 'a1', 'a2', 'a4', 'r1']);
    expect(result.hits[0]._rule).toBe('sit');
    expect(result.count).toBe(5);
  });

  it('a buried brand goes last among equal hits', async () => {
    await putRules([{ id: 'basic', query: chairs, bury: [brand('Basic')] }]);
    // The others (a2, a3 and r1, as relevant as the chairs) keep their id order before the buried.
    expect(await ids({ q: 'chair' })).toEqual(['a2', 'a3', 'r1', 'a1', 'a4']);
  });

  it('a document matching any of several boost filters is boosted', async () => {
    await putRules([
      { id: 'two', query: chairs, boost: [brand('Sitwell'), { key: 'price', operator: 'lt', values: [45] }] },
    ]);
    expect(await ids({ q: 'chair' })).toEqual(['a3', 'a4', 'a1', 'a2', 'r1']);
  });

  it('a document matching both a boost and a bury filter is buried', async () => {
    await putRules([
      {
        id: 'both',
        query: chairs,
        boost: [brand('Sitwell', 'Lumo')],
        bury: [{ key: 'in_stock', operator: 'in', values: [false] }],
      },
    ]);
    // a3 (Sitwell, out of stock) is both: after a1 and a4, which are neither; a2 and r1 (Lumo) are boosted.
    expect(await ids({ q: 'chair' })).toEqual(['a2', 'r1', 'a1', 'a4', 'a3']);
  });

  it('unequal relevance is not overridden: the hit matching more words stays first', async () => {
    await putRules([
      { id: 'red', query: { text: 'chair red', match: 'exact' }, boost: [brand('Basic')], bury: [brand('Lumo')] },
    ]);
    // Fewer than 10 hits for both words: `red` is dropped, and the hits are ranked by the words they match.
    // r1 (Lumo, buried) matches both; the chairs one. Among those, Basic first, Lumo last.
    expect(await ids({ q: 'chair red', threshold: 10 })).toEqual(['r1', 'a1', 'a4', 'a3', 'a2']);
  });

  it('with an empty query, boost and bury order every document', async () => {
    await putRules([{ id: 'page', boost: [brand('Sitwell')], bury: [brand('Basic')] }]);
    expect(await ids({ q: '' })).toEqual(['a3', 'l1', 'a2', 'r1', 'a1', 'a4']);
  });

  it('with an explicit sort, boost and bury decide only among equal sort values', async () => {
    await putRules([{ id: 'sit', query: chairs, boost: [brand('Sitwell')] }]);
    expect(await ids({ q: 'chair', sort: ['price:asc'] })).toEqual(['a4', 'a3', 'a1', 'a2', 'r1']);
    await putRules([{ id: 'page', boost: [brand('Sitwell')] }]);
    expect(await ids({ q: '', sort: ['price:desc'] })).toEqual(['r1', 'a3', 'a1', 'a2', 'a4', 'l1']);
  });

  it('pins still apply on top, and hidden documents stay hidden', async () => {
    await putRules([
      { id: 'pinned', query: chairs, boost: [brand('Sitwell')], pin: [{ id: 'a4', position: 1 }], hide: ['a1'] },
    ]);
    expect(await ids({ q: 'chair' })).toEqual(['a4', 'a3', 'a2', 'r1']);
  });

  it('filters of the search still apply: boost only orders what passes them', async () => {
    await putRules([{ id: 'sit', query: chairs, boost: [brand('Sitwell')] }]);
    expect(await ids({ q: 'chair', filters: [brand('Basic', 'Lumo')] })).toEqual(['a1', 'a2', 'a4', 'r1']);
  });

  it('an inactive rule (before its period) or a rule whose conditions fail has no effect', async () => {
    const later = new Date(Date.now() + 3600_000).toISOString();
    await putRules([{ id: 'later', query: chairs, boost: [brand('Sitwell')], active_from: later }]);
    const result = await search({ q: 'chair' });
    expect(result.hits.map((hit: { id: string }) => hit.id)).toEqual(['a1', 'a2', 'a3', 'a4', 'r1']);
    expect(result.hits[0]._rule).toBeNull();
    await putRules([{ id: 'lamps', query: { text: 'lamp', match: 'exact' }, bury: [brand('Basic')] }]);
    expect(await ids({ q: 'chair' })).toEqual(['a1', 'a2', 'a3', 'a4', 'r1']);
  });

  it('paging follows the boosted order', async () => {
    await putRules([{ id: 'sit', query: chairs, boost: [brand('Sitwell')], bury: [brand('Basic')] }]);
    expect(await ids({ q: 'chair', limit: 2, offset: 1 })).toEqual(['a2', 'r1']);
  });
});

describe('refused boost and bury', () => {
  const nested = (depth: number): object => (depth === 0 ? brand('Basic') : { any: [nested(depth - 1)] });
  const refused: [string, unknown, string, string?][] = [
    [
      'a boost on a field that is not filterable',
      [{ id: 'x', boost: [{ key: 'name', operator: 'in', values: ['Chair'] }] }],
      'body.data[0].boost[0].key',
      'not a filterable field',
    ],
    [
      'a bury with a range on a STRING field',
      [{ id: 'x', bury: [{ key: 'brand', operator: 'gte', values: [3] }] }],
      'body.data[0].bury[0].operator',
      'NUMBER',
    ],
    [
      'a boost whose value is not a NUMBER',
      [{ id: 'x', boost: [{ key: 'price', operator: 'in', values: ['cheap'] }] }],
      'body.data[0].boost[0].values',
      'NUMBER',
    ],
    [
      'a bury without values',
      [{ id: 'x', bury: [{ key: 'brand', operator: 'in' }] }],
      'body.data[0].bury[0].values',
      'required',
    ],
    [
      'an unknown operator',
      [{ id: 'x', boost: [{ key: 'brand', operator: 'like', values: ['a'] }] }],
      'body.data[0].boost[0].operator',
    ],
    [
      '10,000 boost filters',
      [{ id: 'x', boost: Array.from({ length: 10_000 }, () => brand('Basic')) }],
      'body.data[0].boost',
      '10',
    ],
    ['11 bury filters', [{ id: 'x', bury: Array.from({ length: 11 }, () => brand('Basic')) }], 'body.data[0].bury'],
    ['a nested group, 20 levels deep', [{ id: 'x', boost: [nested(20)] }], 'body.data[0].boost[0]'],
    ['a group instead of a filter', [{ id: 'x', bury: [{ any: [brand('Basic')] }] }], 'body.data[0].bury[0]'],
    [
      'a value of 10,000 characters',
      [{ id: 'x', boost: [{ key: 'brand', operator: 'in', values: ['x'.repeat(10_000)] }] }],
      'body.data[0].boost[0].values[0]',
    ],
    [
      'a filter with 990 extra keys',
      [
        {
          id: 'x',
          boost: [{ ...brand('Basic'), ...Object.fromEntries(Array.from({ length: 990 }, (_, i) => [`k${i}`, i])) }],
        },
      ],
      'body.data[0].boost[0]',
    ],
    ['a boost that is an object', [{ id: 'x', boost: brand('Basic') }], 'body.data[0].boost'],
    ['a bury that is a string', [{ id: 'x', bury: 'brand:Basic' }], 'body.data[0].bury'],
    [
      'a valid rule beside one whose bury is refused',
      [
        { id: 'ok', boost: [brand('Basic')] },
        { id: 'bad', bury: [{ key: 'unknown', operator: 'exists' }] },
      ],
      'body.data[1].bury[0].key',
    ],
  ];
  for (const [what, data, field, named] of refused) {
    it(`${what}: 400 naming ${field}, and the rules do not change`, async () => {
      await putRules([{ id: 'kept', query: chairs, boost: [brand('Lumo')] }]);
      const before = await state();
      const rulesBefore = (await rest.get(RULES, { token: a.key })).body.data;
      const response = await rest.put(RULES, { token: a.key, body: { data } });
      expectRestError(response, 400);
      const problem = (response.body.error.details as { field: string; message: string }[]).find(
        (detail) => detail.field === field || detail.field.startsWith(`${field}.`),
      );
      expect(problem, response.rawBody.slice(0, 500)).toBeDefined();
      if (named) expect(problem!.message).toContain(named);
      expect(await state()).toEqual(before);
      expect((await rest.get(RULES, { token: a.key })).body.data).toEqual(rulesBefore);
      // The kept rule still boosts.
      expect((await ids({ q: 'chair' }))[0]).toBe('a2');
    });
  }

  it('deeply nested JSON in a rule body: a clear 400 in the envelope, nothing changes', async () => {
    const before = await state();
    let deep = '"x"';
    for (let i = 0; i < 5000; i++) deep = `{"any":[${deep}]}`;
    const body = `{"data":[{"id":"x","boost":[${deep}]}]}`;
    const response = await rest.put(RULES, {
      token: a.key,
      rawBody: body,
      headers: { 'content-type': 'application/json' },
    });
    expectRestError(response, 400);
    expect(await state()).toEqual(before);
  });
});

describe('a rule saved before its boost field stopped being filterable', () => {
  it('searches without that filter (the others still apply) until the rules are saved again', async () => {
    await putRules([
      { id: 'sit', query: chairs, boost: [brand('Sitwell'), { key: 'price', operator: 'lt', values: [45] }] },
    ]);
    expect(await ids({ q: 'chair' })).toEqual(['a3', 'a4', 'a1', 'a2', 'r1']);
    const index = {
      name: 'Shop',
      search_fields: ['name'],
      filters: [{ key: 'price' }, { key: 'in_stock' }],
      sortable_fields: ['price'],
    };
    const replaced = await rest.put(`${INDEXES}/shop`, { token: a.key, body: { data: index } });
    expect(replaced.status, replaced.rawBody).toBe(204);
    // brand is no longer filterable: only the price boost is left.
    expect(await ids({ q: 'chair' })).toEqual(['a4', 'a1', 'a2', 'a3', 'r1']);
    const again = await rest.put(RULES, { token: a.key, body: { data: [{ id: 'sit', boost: [brand('Sitwell')] }] } });
    expectRestError(again, 400);
    expect(again.body.error.details).toEqual([
      { field: 'body.data[0].boost[0].key', message: 'brand is not a filterable field of index shop' },
    ]);
  });
});
