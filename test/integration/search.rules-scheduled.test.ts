/**
 * Merchandising rules that replace the query, carry a payload and are active in a period: the
 * replacement is searched, `rule_data` comes with the results, rules outside their period are
 * skipped, rules without these members read back as before, and refusals that change nothing.
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
  { id: 'p3', name: 'Office chair', brand: 'Sitwell', price: 150 },
  { id: 'p4', name: 'Garden chair', brand: 'Sitwell', price: 60 },
];

let a: Tenant;

const state = async () => (await sql(databaseUrl, "SELECT version, rules FROM search_indexes WHERE alias = 'shop'"))[0];

beforeAll(async () => {
  a = await createTenant(rest, 'A');
  const index = { name: 'Shop', alias: 'shop', filters: [{ key: 'brand' }, { key: 'price' }] };
  expect((await rest.post(INDEXES, { token: a.key, body: { data: index } })).status).toBe(201);
  expect((await rest.put(`${INDEXES}/shop/documents`, { token: a.key, body: { data: products } })).status).toBe(204);
});

const search = async (context: object) => {
  const response = await rest.post('/api/instant/search/indexes/shop', { token: a.key, body: { data: [context] } });
  expect(response.status, response.rawBody).toBe(201);
  return response.body.data[0].results[0];
};
const ids = (result: { hits: { id: string }[] }) => result.hits.map((hit) => hit.id);

const HOUR = 3600_000;
const at = (ms: number) => new Date(Date.now() + ms).toISOString();
const instant = at(0);

describe('rules that replace the query, carry data and have a period', () => {
  it('stores the new members as given (timestamps normalized to UTC) and omits absent ones', async () => {
    const rules = [
      {
        id: 'seating',
        query: { text: 'seating', match: 'exact' },
        replace_query: 'chair',
        data: { banner: 'Sit well this week', redirect: null },
        active_from: '2000-01-01T00:00:00+02:00',
      },
      { id: 'plain', query: { text: 'lamp', match: 'contains' }, hide: ['p2'] },
    ];
    const response = await rest.put(RULES, { token: a.key, body: { data: rules } });
    expect(response.status, response.rawBody).toBe(200);
    expect(response.body.data).toEqual([
      { ...rules[0], active_from: '1999-12-31T22:00:00.000Z', filters: [], pin: [], hide: [] },
      { ...rules[1], filters: [], pin: [] },
    ]);
    expect(response.body.data[1]).not.toHaveProperty('data');
  });

  it('searches the replacement query and returns the rule data with the results', async () => {
    const result = await search({ q: 'seating' });
    expect(ids(result).sort()).toEqual(['p3', 'p4']);
    expect(result.rule_data).toEqual({ banner: 'Sit well this week', redirect: null });
    expect(result.hits[0]._rule).toBe('seating');
  });

  it('a result whose rule has no data has no rule_data; without a rule neither', async () => {
    const lamps = await search({ q: 'lamp' });
    expect(ids(lamps)).toEqual(['p1']);
    expect(lamps).not.toHaveProperty('rule_data');
    expect(await search({ q: 'office' })).not.toHaveProperty('rule_data');
  });

  it('skips a rule before its period and after it, and applies it within', async () => {
    const rules = [
      { id: 'later', query: { text: 'lamp', match: 'contains' }, hide: ['p1'], active_from: at(HOUR) },
      { id: 'over', query: { text: 'lamp', match: 'contains' }, hide: ['p2'], active_to: at(-HOUR) },
      {
        id: 'now',
        query: { text: 'lamp', match: 'contains' },
        data: { banner: 'now' },
        active_from: at(-HOUR),
        active_to: at(HOUR),
      },
    ];
    expect((await rest.put(RULES, { token: a.key, body: { data: rules } })).status).toBe(200);
    const result = await search({ q: 'lamp' });
    expect(ids(result).sort()).toEqual(['p1', 'p2']);
    expect(result.hits[0]._rule).toBe('now');
    expect(result.rule_data).toEqual({ banner: 'now' });

    // With only rules outside their period, none applies.
    expect((await rest.put(RULES, { token: a.key, body: { data: rules.slice(0, 2) } })).status).toBe(200);
    const none = await search({ q: 'lamp' });
    expect(ids(none).sort()).toEqual(['p1', 'p2']);
    expect(none.hits[0]._rule).toBeNull();
  });

  const big = { text: 'x'.repeat(5000) };
  const refused: [string, unknown, string, string?][] = [
    [
      'active_from after active_to',
      [{ id: 'x', active_from: at(HOUR), active_to: at(-HOUR) }],
      'body.data[0].active_to',
      'before',
    ],
    [
      'active_from equal to active_to',
      [{ id: 'x', active_from: instant, active_to: instant }],
      'body.data[0].active_to',
    ],
    ['a timestamp that is not ISO', [{ id: 'x', active_from: 'next monday' }], 'body.data[0].active_from'],
    ['a timestamp without an offset', [{ id: 'x', active_to: '2030-01-01T00:00:00' }], 'body.data[0].active_to'],
    ['data over 4096 bytes', [{ id: 'x', data: big }], 'body.data[0].data', '4096'],
    ['data that is an array', [{ id: 'x', data: [1, 2] }], 'body.data[0].data'],
    ['data that is a string', [{ id: 'x', data: 'banner' }], 'body.data[0].data'],
    [
      'a replace_query of 10,000 characters',
      [{ id: 'x', replace_query: 'q'.repeat(10_000) }],
      'body.data[0].replace_query',
    ],
    ['a replace_query that is a number', [{ id: 'x', replace_query: 3 }], 'body.data[0].replace_query'],
    [
      '101 rules with data',
      Array.from({ length: 101 }, (_, i) => ({ id: `r${i}`, data: { banner: 'b' } })),
      'body.data',
      '100',
    ],
  ];
  for (const [what, data, field, named] of refused) {
    it(`${what}: 400 naming ${field}, and nothing changes`, async () => {
      const before = await state();
      const response = await rest.put(RULES, { token: a.key, body: { data } });
      expectRestError(response, 400);
      const problem = (response.body.error.details as { field: string; message: string }[]).find(
        (detail) => detail.field === field,
      );
      expect(problem, response.rawBody).toBeDefined();
      if (named) expect(problem!.message).toContain(named);
      expect(await state()).toEqual(before);
    });
  }

  it('rules without the new members keep working: pin and hide as before', async () => {
    const rules = [{ id: 'old', query: { text: 'chair', match: 'contains' }, pin: [{ id: 'p1', position: 1 }] }];
    const response = await rest.put(RULES, { token: a.key, body: { data: rules } });
    expect(response.body.data).toEqual([{ ...rules[0], filters: [], hide: [] }]);
    const result = await search({ q: 'chair' });
    expect(ids(result)[0]).toBe('p1');
    expect(result).not.toHaveProperty('rule_data');
  });
});
