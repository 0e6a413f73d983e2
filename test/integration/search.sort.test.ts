/**
 * Query-time sort: `sort` in a search context over the index's `sortable_fields` (default: NUMBER
 * and BOOLEAN fields), relevance within equal values, refusals naming the key, and the search
 * settings' default `sort` and `sort_options` per index.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { createTenant, startTestApp, type Tenant } from '../helpers/app';
import { sql } from '../helpers/db';
import { expectRestError } from '../helpers/rest';

const { rest, databaseUrl } = await startTestApp();

const INDEXES = '/api/instant/indexes';
const SEARCH = '/api/instant/search';

const products = [
  { id: 'p1', name: 'Desk lamp', brand: 'Lumo', price: 25, in_stock: true },
  { id: 'p2', name: 'Floor lamp', brand: 'Lumo', price: 80, in_stock: false },
  { id: 'p3', name: 'Lamp shade', brand: 'Shade', price: 25, in_stock: true },
  { id: 'p4', name: 'Office chair', brand: 'Sitwell', price: 150, in_stock: true },
  { id: 'p5', name: 'Wall lamp', brand: 'Lumo', in_stock: false },
];

let a: Tenant;

beforeAll(async () => {
  a = await createTenant(rest, 'A');
  const index = {
    name: 'Shop',
    alias: 'shop',
    fields: [
      { from: 'name', type: 'STRING' },
      { from: 'brand', type: 'STRING' },
      { from: 'price', type: 'NUMBER' },
      { from: 'in_stock', type: 'BOOLEAN' },
    ],
    filters: [{ key: 'brand' }],
  };
  expect((await rest.post(INDEXES, { token: a.key, body: { data: index } })).status).toBe(201);
  expect((await rest.put(`${INDEXES}/shop/documents`, { token: a.key, body: { data: products } })).status).toBe(204);
  const routes = { path: '*', origin: { uri: 'https://shop.example.com' } };
  expect(
    (await rest.post('/api/storage/edge/proxies', { token: a.key, body: { data: { key: 'shop', routes } } })).status,
  ).toBe(201);
});

const search = (context: object, path = `${SEARCH}/indexes/shop`) =>
  rest.post(path, { token: a.key, body: { data: [context] } });
const ids = async (context: object, path?: string) => {
  const response = await search(context, path);
  expect(response.status, response.rawBody).toBe(201);
  return response.body.data[0].results[0].hits.map((hit: { id: string }) => hit.id);
};

describe('sort in a search context', () => {
  it('the index lists its sortable fields: by default its NUMBER and BOOLEAN fields', async () => {
    expect((await rest.get(`${INDEXES}/shop`, { token: a.key })).body.data.sortable_fields).toEqual([
      'price',
      'in_stock',
    ]);
  });

  it('sorts ascending and descending, documents without the field last either way', async () => {
    expect(await ids({ q: 'lamp', sort: ['price:asc'] })).toEqual(['p1', 'p3', 'p2', 'p5']);
    expect(await ids({ q: 'lamp', sort: ['price:desc'] })).toEqual(['p2', 'p1', 'p3', 'p5']);
  });

  it('relevance orders documents with equal values; further keys break ties first', async () => {
    // p1 and p3 cost the same: "lamp shade" matches p3 on both words, p1 on one.
    expect(await ids({ q: 'lamp shade', sort: ['price:asc'], threshold: 0 })).toEqual(['p3']);
    expect(await ids({ q: 'lamp shade', sort: ['price:asc'], threshold: 10 })).toEqual(['p3', 'p1', 'p2', 'p5']);
    expect(await ids({ sort: ['in_stock:desc', 'price:desc'] })).toEqual(['p4', 'p1', 'p3', 'p2', 'p5']);
  });

  const refused: [string, unknown, string, string][] = [
    ['a field that is not sortable', ['brand:asc'], 'body.data[0].sort[0]', 'brand is not a sortable field'],
    ['an unknown field', ['colour:asc'], 'body.data[0].sort[0]', 'colour is not a sortable field'],
    ['no direction', ['price'], 'body.data[0].sort[0]', 'must be <field>:asc or <field>:desc'],
    ['more than 3 keys', ['price:asc', 'in_stock:asc', 'name:asc', 'brand:asc'], 'body.data[0].sort', ''],
    ['a field twice', ['price:asc', 'price:desc'], 'body.data[0].sort', 'must not sort by a field twice'],
  ];
  for (const [what, sort, field, message] of refused) {
    it(`${what}: 400 naming ${field}`, async () => {
      const response = await search({ q: 'lamp', sort });
      expectRestError(response, 400);
      expect(response.body.error.details).toEqual([
        expect.objectContaining({ field, message: expect.stringContaining(message) }),
      ]);
    });
  }

  it('sortable_fields of the index replace the default', async () => {
    const index = {
      name: 'Named',
      alias: 'named',
      fields: [
        { from: 'name', type: 'STRING' },
        { from: 'price', type: 'NUMBER' },
      ],
      sortable_fields: ['name'],
    };
    expect((await rest.post(INDEXES, { token: a.key, body: { data: index } })).status).toBe(201);
    await rest.put(`${INDEXES}/named/documents`, { token: a.key, body: { data: products } });
    expect(await ids({ q: 'lamp', sort: ['name:desc'] }, `${SEARCH}/indexes/named`)).toEqual(['p5', 'p3', 'p2', 'p1']);
    expectRestError(await search({ sort: ['price:asc'] }, `${SEARCH}/indexes/named`), 400);
  });
});

describe('search settings: a default sort and sort options per index', () => {
  const settings = {
    indexes: [
      {
        alias: 'shop',
        sort: ['price:desc'],
        sort_options: [
          { label: 'Cheapest first', sort: ['price:asc'] },
          { label: 'In stock first', sort: ['in_stock:desc', 'price:asc'] },
        ],
      },
    ],
  };
  const stored = () => sql(databaseUrl, "SELECT settings FROM search_settings WHERE proxy_key = 'shop'");

  it('are stored and returned by GET settings', async () => {
    const put = await rest.put(`${SEARCH}/shop/settings`, { token: a.key, body: { data: settings } });
    expect(put.status, put.rawBody).toBe(200);
    const [entry] = (await rest.get(`${SEARCH}/shop/settings`)).body.data.indexes;
    expect(entry).toMatchObject({ sort: settings.indexes[0]!.sort, sort_options: settings.indexes[0]!.sort_options });
  });

  it("a search through the proxy without sort takes the settings' sort; with one, its own", async () => {
    expect(await ids({ q: 'lamp' }, `${SEARCH}/shop`)).toEqual(['p2', 'p1', 'p3', 'p5']);
    expect(await ids({ q: 'lamp', sort: ['price:asc'] }, `${SEARCH}/shop`)).toEqual(['p1', 'p3', 'p2', 'p5']);
    // An empty sort asks for relevance.
    expect((await ids({ q: 'desk lamp', sort: [] }, `${SEARCH}/shop`))[0]).toBe('p1');
  });

  it('a sort over a field that is not sortable is a 400 naming it, and the settings stay', async () => {
    const before = await stored();
    for (const [entry, field] of [
      [{ alias: 'shop', sort: ['brand:asc'] }, 'body.data.indexes[0].sort[0]'],
      [
        { alias: 'shop', sort_options: [{ label: 'x', sort: ['price:asc', 'brand:asc'] }] },
        'body.data.indexes[0].sort_options[0].sort[1]',
      ],
      [
        { alias: 'shop', sort_options: [{ label: '', sort: ['price:asc'] }] },
        'body.data.indexes[0].sort_options[0].label',
      ],
    ] as const) {
      const response = await rest.put(`${SEARCH}/shop/settings`, {
        token: a.key,
        body: { data: { indexes: [entry] } },
      });
      expectRestError(response, 400);
      expect(response.body.error.details).toEqual([expect.objectContaining({ field })]);
    }
    expect(await stored()).toEqual(before);
  });

  it('settings stored before sorts existed read as having none', async () => {
    await sql(
      databaseUrl,
      `UPDATE search_settings SET settings = jsonb_set(settings, '{indexes,0}', (settings->'indexes'->0) - 'sort' - 'sort_options')
        WHERE proxy_key = 'shop'`,
    );
    const [entry] = (await rest.get(`${SEARCH}/shop/settings`)).body.data.indexes;
    expect(entry).toMatchObject({ sort: [], sort_options: [] });
    expect((await ids({ q: 'desk lamp' }, `${SEARCH}/shop`))[0]).toBe('p1');
  });
});
