/**
 * The public Afosto instant-search client (`@afosto/instant-search-client`, what shop front ends
 * use) against the running service on 127.0.0.1: its requests must be answered as it expects,
 * unchanged. The client swallows errors into empty results, so every check asserts real hits.
 */
// @ts-expect-error The package ships JavaScript without type declarations.
import { afostoInstantSearch } from '@afosto/instant-search-client';
import type { AddressInfo } from 'node:net';
import { beforeAll, describe, expect, it } from 'vitest';
import { createTenant, startTestApp } from '../helpers/app';

const { app, rest } = await startTestApp();
await app.listen({ port: 0, host: '127.0.0.1' });
const { port } = app.server.address() as AddressInfo;

const products = [
  { id: 'p1', name: 'Desk lamp', brand: 'Lumo', price: 25 },
  { id: 'p2', name: 'Floor lamp', brand: 'Lumo', price: 80 },
  { id: 'p3', name: 'Reading lamp', brand: 'Brite', price: 60 },
  { id: 'p4', name: 'Wall lamp', brand: 'Lumo', price: 120 },
  { id: 'p5', name: 'Office chair', brand: 'Sitwell', price: 150 },
];

interface ClientResult {
  hits: { id: string; name: string }[];
  nbHits: number;
  nbPages: number;
  page: number;
  facets: Record<string, Record<string, number>>;
  facets_stats: Record<string, { min: number; max: number; avg: number; sum: number }>;
  index: string;
}

beforeAll(async () => {
  const tenant = await createTenant(rest, 'Shop');
  const index = {
    name: 'Products',
    alias: 'products',
    filters: [{ key: 'brand' }, { key: 'price' }],
    ranking_rules: ['words', 'price:asc'],
  };
  expect((await rest.post('/api/instant/indexes', { token: tenant.key, body: { data: index } })).status).toBe(201);
  expect(
    (await rest.put('/api/instant/indexes/products/documents', { token: tenant.key, body: { data: products } })).status,
  ).toBe(204);
  const proxy = { key: 'public-shop', routes: { path: '*', origin: { uri: 'https://shop.example.com' } } };
  expect((await rest.post('/api/storage/edge/proxies', { token: tenant.key, body: { data: proxy } })).status).toBe(201);
  const settings = {
    indexes: [
      {
        alias: 'products',
        template: { name: 'PRODUCTS', mapping: [] },
        filters: [{ key: 'brand', label: 'Brand', options_count: 5, max_options_count: 10 }],
        results_per_page: 10,
      },
    ],
    filters: { show_for: 'products', sorting: ['brand'], options_count: 5, max_options_count: 10 },
    is_autocomplete: true,
  };
  expect(
    (await rest.put('/api/instant/search/public-shop/settings', { token: tenant.key, body: { data: settings } }))
      .status,
  ).toBe(200);
});

const client = () =>
  afostoInstantSearch('public-shop', { baseUrl: `http://127.0.0.1:${port}/api/instant/search/{key}` });

describe('@afosto/instant-search-client against the service', () => {
  it('getSettings() returns the search settings', async () => {
    const settings = await client().getSettings();
    expect(settings).toMatchObject({
      indexes: [
        {
          alias: 'products',
          template: { name: 'PRODUCTS' },
          filters: [{ key: 'brand', label: 'Brand', type: 'STRING' }],
        },
      ],
      is_autocomplete: true,
    });
  });

  it('search() with a query: hits, nbHits and facets', async () => {
    const { results } = await client().search([
      { indexName: 'products', params: { query: 'lamp', facets: ['brand', 'price'], hitsPerPage: 10, page: 0 } },
    ]);
    const [result] = results as ClientResult[];
    expect(result!.index).toBe('products');
    expect(result!.nbHits).toBe(4);
    expect(result!.hits.map((hit) => hit.id)).toEqual(['p1', 'p3', 'p2', 'p4']);
    expect(result!.facets.brand).toEqual({ Lumo: 3, Brite: 1 });
    expect(result!.facets_stats.price).toEqual({ min: 25, max: 120, avg: 71.25, sum: 285 });
  });

  it('search() with a facet filter, a numeric filter and paging', async () => {
    const { results } = await client().search([
      {
        indexName: 'products',
        params: {
          query: 'lamp',
          facets: ['brand'],
          facetFilters: [['brand:Lumo']],
          numericFilters: ['price>=50'],
          hitsPerPage: 1,
          page: 1,
        },
      },
    ]);
    const [result] = results as ClientResult[];
    expect(result!.nbHits).toBe(2);
    expect(result!.nbPages).toBe(2);
    expect(result!.page).toBe(1);
    expect(result!.hits.map((hit) => hit.id)).toEqual(['p4']);
    expect(result!.facets.brand).toEqual({ Lumo: 2 });
  });

  it('search() of several requests at once answers each', async () => {
    const { results } = await client().search([
      { indexName: 'products', params: { query: 'chair' } },
      { indexName: 'products', params: { query: 'lamp', numericFilters: ['price<30'] } },
    ]);
    expect((results as ClientResult[]).map((result) => result.hits.map((hit) => hit.id))).toEqual([['p5'], ['p1']]);
  });
});
