/**
 * Range facets over REST: named, contiguous ranges of NUMBER facet fields counted under the query
 * and filters (disjunctively when asked), and refused ranges, each a 400 naming the range.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { createTenant, startTestApp, type Tenant } from '../helpers/app';
import { expectRestError } from '../helpers/rest';

const { rest } = await startTestApp();

const SEARCH = '/api/instant/search/indexes/ranged';
const PRICE_RANGES = [
  { label: 'cheap', to: 20 },
  { label: 'mid', from: 20, to: 100 },
  { label: 'high', from: 100 },
];

let a: Tenant;

const search = (context: object) => rest.post(SEARCH, { token: a.key, body: { data: [context] } });

beforeAll(async () => {
  a = await createTenant(rest, 'A');
  const created = await rest.post('/api/instant/indexes', {
    token: a.key,
    body: {
      data: {
        name: 'Ranged',
        alias: 'ranged',
        fields: [
          { from: 'name', type: 'STRING' },
          { from: 'brand', type: 'STRING' },
          { from: 'price', type: 'NUMBER' },
          { from: 'sizes', type: 'NUMBER' },
        ],
        facet_fields: ['brand', 'price', 'sizes'],
      },
    },
  });
  expect(created.status, created.rawBody).toBe(201);
  const upsert = await rest.put('/api/instant/indexes/ranged/documents', {
    token: a.key,
    body: {
      data: [
        { id: 'p1', name: 'Desk lamp', brand: 'Lumo', price: 19.99, sizes: [1, 2] },
        { id: 'p2', name: 'Floor lamp', brand: 'Lumo', price: 20, sizes: [3] },
        { id: 'p3', name: 'Lamp shade', brand: 'Shade', price: 99.5 },
        { id: 'p4', name: 'Chandelier lamp', brand: 'Shade', price: 100 },
        { id: 'p5', name: 'Office chair', brand: 'Sitwell', price: 150 },
      ],
    },
  });
  expect(upsert.status, upsert.rawBody).toBe(204);
});

describe('range facets', () => {
  it('counts the documents in each range, from included and to left out, in the order asked', async () => {
    const response = await search({ q: 'lamp', facet_ranges: { price: PRICE_RANGES } });
    expect(response.status, response.rawBody).toBe(201);
    expect(response.body.data[0].results[0].facet_ranges).toEqual({
      price: [
        { label: 'cheap', from: null, to: 20, count: 1 },
        { label: 'mid', from: 20, to: 100, count: 2 },
        { label: 'high', from: 100, to: null, count: 1 },
      ],
    });
  });

  it('counts a document once per range it has any value in', async () => {
    const response = await search({
      facet_ranges: {
        sizes: [
          { label: 'small', from: 1, to: 3 },
          { label: 'large', from: 3 },
        ],
      },
    });
    expect(response.body.data[0].results[0].facet_ranges.sizes.map((r: { count: number }) => r.count)).toEqual([1, 1]);
  });

  it('counts under the filters, and without the field’s own filters when disjunctive_facets is true', async () => {
    const filters = [
      { key: 'price', operator: 'gte', values: [100] },
      { key: 'brand', operator: 'in', values: ['Shade'] },
    ];
    const counts = async (disjunctive: boolean) =>
      (
        await search({ filters, disjunctive_facets: disjunctive, facet_ranges: { price: PRICE_RANGES } })
      ).body.data[0].results[0].facet_ranges.price.map((range: { count: number }) => range.count);
    expect(await counts(false)).toEqual([0, 0, 1]);
    expect(await counts(true)).toEqual([0, 1, 1]);
  });

  it('leaves facet_ranges out of a result that asked for none', async () => {
    const response = await search({ q: 'lamp' });
    expect(response.body.data[0].results[0]).not.toHaveProperty('facet_ranges');
  });
});

describe('refused range facets', () => {
  const many = <T>(count: number, make: (i: number) => T) => Array.from({ length: count }, (_, i) => make(i));
  const cases: [string, object, string][] = [
    ['a field that is not a facet field', { name: [{ label: 'a', to: 1 }] }, 'facet_ranges.name'],
    ['a STRING facet field', { brand: [{ label: 'a', to: 1 }] }, 'facet_ranges.brand'],
    ['an unknown field', { weight: [{ label: 'a', to: 1 }] }, 'facet_ranges.weight'],
    [
      'a gap between ranges',
      {
        price: [
          { label: 'a', to: 10 },
          { label: 'b', from: 20 },
        ],
      },
      'facet_ranges.price[1].from',
    ],
    [
      'overlapping ranges',
      {
        price: [
          { label: 'a', to: 10 },
          { label: 'b', from: 5 },
        ],
      },
      'facet_ranges.price[1].from',
    ],
    [
      'a range whose to is not above its from',
      { price: [{ label: 'a', from: 10, to: 10 }] },
      'facet_ranges.price[0].to',
    ],
    [
      'an open from after the first range',
      { price: [{ label: 'a', to: 10 }, { label: 'b' }] },
      'facet_ranges.price[1].from',
    ],
    [
      'an open to before the last range',
      { price: [{ label: 'a' }, { label: 'b', from: 10 }] },
      'facet_ranges.price[0].to',
    ],
    [
      'a repeated label',
      {
        price: [
          { label: 'a', to: 10 },
          { label: 'a', from: 10 },
        ],
      },
      'facet_ranges.price[1].label',
    ],
    ['an empty label', { price: [{ label: ' ', to: 10 }] }, 'facet_ranges.price[0].label'],
    ['a long label', { price: [{ label: 'x'.repeat(100_000), to: 10 }] }, 'facet_ranges.price[0].label'],
    ['a bound that is not a number', { price: [{ label: 'a', to: '10' }] }, 'facet_ranges.price[0].to'],
    ['a bound beyond the safe integers', { price: [{ label: 'a', to: 1e300 }] }, 'facet_ranges.price[0].to'],
    ['an unknown key in a range', { price: [{ label: 'a', to: 10, step: 1 }] }, 'facet_ranges.price[0].step'],
    ['no ranges', { price: [] }, 'facet_ranges.price'],
    ['too many ranges', { price: many(10_000, (i) => ({ label: `r${i}`, from: i, to: i + 1 })) }, 'facet_ranges.price'],
    ['too many fields', Object.fromEntries(many(900, (i) => [`f${i}`, [{ label: 'a', to: 1 }]])), 'facet_ranges'],
    [
      'a field name of 100 000 characters',
      { ['f'.repeat(100_000)]: [{ label: 'a', to: 1 }] },
      `facet_ranges.${'f'.repeat(100_000)}`,
    ],
  ];
  for (const [what, ranges, field] of cases) {
    it(`${what}: 400 naming ${field}`, async () => {
      expectRestError(await search({ q: 'lamp', facet_ranges: ranges }), 400, `body.data[0].${field}`);
    });
  }
});
