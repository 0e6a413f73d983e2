/**
 * Merchandising rules (`/api/instant/indexes/{alias}/rules`): pinned and hidden documents for the
 * searches a rule matches, `_rule` on the hits, versioning with the index, and refusals that change
 * nothing.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { createTenant, startTestApp, type Tenant } from '../helpers/app';
import { sql } from '../helpers/db';
import { expectRestError } from '../helpers/rest';

const { rest, databaseUrl } = await startTestApp();

const INDEXES = '/api/instant/indexes';
const RULES = `${INDEXES}/shop/rules`;

const products = [
  { id: 'p1', name: 'Desk lamp', brand: 'Lumo', price: 25 },
  { id: 'p2', name: 'Floor lamp', brand: 'Lumo', price: 80 },
  { id: 'p3', name: 'Wall lamp', brand: 'Brite', price: 40 },
  { id: 'p4', name: 'Office chair', brand: 'Sitwell', price: 150 },
  { id: 'p5', name: 'Lamp shade', brand: 'Lumo', price: 10 },
];

let a: Tenant;
let b: Tenant;

const state = async () => ({
  version: (await sql(databaseUrl, "SELECT version, rules FROM search_indexes WHERE alias = 'shop'"))[0],
});

beforeAll(async () => {
  a = await createTenant(rest, 'A');
  b = await createTenant(rest, 'B');
  const index = { name: 'Shop', alias: 'shop', filters: [{ key: 'brand' }, { key: 'price' }] };
  expect((await rest.post(INDEXES, { token: a.key, body: { data: index } })).status).toBe(201);
  expect((await rest.put(`${INDEXES}/shop/documents`, { token: a.key, body: { data: products } })).status).toBe(204);
});

const search = async (context: object) => {
  const response = await rest.post('/api/instant/search/indexes/shop', { token: a.key, body: { data: [context] } });
  expect(response.status, response.rawBody).toBe(201);
  return response.body.data[0].results[0];
};

const rules = [
  {
    id: 'lumo-page',
    query: null,
    filters: [{ key: 'brand', operator: 'in', values: ['Lumo'] }],
    pin: [{ id: 'p5', position: 1 }],
  },
  { id: 'lamps', query: { text: 'lamp', match: 'contains' }, pin: [{ id: 'p4', position: 2 }], hide: ['p2'] },
];

describe('merchandising rules', () => {
  it('PUT stores them (200) at the next version; GET returns them', async () => {
    const before = await state();
    const response = await rest.put(RULES, { token: a.key, body: { data: rules } });
    expect(response.status, response.rawBody).toBe(200);
    const stored = [
      { ...rules[0], hide: [] },
      { ...rules[1], filters: [] },
    ];
    expect(response.body.data).toEqual(stored);
    expect((await rest.get(RULES, { token: a.key })).body).toEqual({ data: stored, page: null, meta: null });
    expect(Number((await state()).version!.version)).toBe(Number(before.version!.version) + 1);
  });

  it('pins documents at their positions, even without the query words, and hides others; hits name the rule', async () => {
    const result = await search({ q: 'lamp' });
    expect(result.hits.map((hit: { id: string }) => hit.id)).toEqual(['p1', 'p4', 'p3', 'p5']);
    expect(result.hits.map((hit: { _rule: string }) => hit._rule)).toEqual(['lamps', 'lamps', 'lamps', 'lamps']);
    // Four lamps, one hidden, one pinned document that has no lamp.
    expect(result.count).toBe(4);
  });

  it('a pinned document shows only when it passes the filters', async () => {
    const result = await search({ q: 'lamp', filters: [{ key: 'price', operator: 'lt', values: [100] }] });
    expect(result.hits.map((hit: { id: string }) => hit.id)).toEqual(['p1', 'p3', 'p5']);
  });

  it('a rule on filters alone serves a category page; the first matching rule applies', async () => {
    const result = await search({ filters: [{ key: 'brand', operator: 'in', values: ['Lumo'] }] });
    expect(result.hits.map((hit: { id: string }) => hit.id)).toEqual(['p5', 'p1', 'p2']);
    expect(result.hits[0]._rule).toBe('lumo-page');
    const both = await search({ q: 'lamp', filters: [{ key: 'brand', operator: 'in', values: ['Lumo'] }] });
    expect(both.hits[0]).toMatchObject({ id: 'p5', _rule: 'lumo-page' });
  });

  it('without a matching rule hits carry _rule null', async () => {
    const result = await search({ q: 'chair' });
    expect(result.hits).toEqual([expect.objectContaining({ id: 'p4', _rule: null })]);
  });

  const refused: [string, unknown, string][] = [
    [
      'a filter on a field that is not filterable',
      [{ id: 'x', filters: [{ key: 'name', operator: 'in', values: ['a'] }] }],
      'body.data[0].filters[0].key',
    ],
    ['a repeated rule id', [{ id: 'x' }, { id: 'x' }], 'body.data'],
    ['position 0', [{ id: 'x', pin: [{ id: 'p1', position: 0 }] }], 'body.data[0].pin[0].position'],
    ['a document id with a comma', [{ id: 'x', hide: ['a,b'] }], 'body.data[0].hide[0]'],
    ['an unknown key', [{ id: 'x', boost: 2 }], 'body.data[0].boost'],
  ];
  for (const [what, data, field] of refused) {
    it(`${what}: 400 naming ${field}, and nothing changes`, async () => {
      const before = await state();
      const response = await rest.put(RULES, { token: a.key, body: { data } });
      expectRestError(response, 400);
      expect(response.body.error.details).toEqual(expect.arrayContaining([expect.objectContaining({ field })]));
      expect(await state()).toEqual(before);
    });
  }

  it("another tenant's index: 404; no token: 401; nothing changes", async () => {
    const before = await state();
    expectRestError(await rest.put(RULES, { token: b.key, body: { data: [] } }), 404);
    expectRestError(await rest.get(RULES, { token: b.key }), 404);
    expectRestError(await rest.put(RULES, { body: { data: [] } }), 401);
    expect(await state()).toEqual(before);
  });

  it('an empty list removes the rules', async () => {
    expect((await rest.put(RULES, { token: a.key, body: { data: [] } })).body.data).toEqual([]);
    expect((await search({ q: 'lamp' })).hits.map((hit: { id: string }) => hit.id)).toEqual(['p1', 'p2', 'p3', 'p5']);
  });
});
