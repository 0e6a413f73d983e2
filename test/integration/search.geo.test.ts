/**
 * GEOPOINT fields over REST with the embedded engine: points stored as `{lat, lng}` from either
 * form, filters by radius and bounding box, sorts by distance with each hit's distance, and bad
 * points, filters and sorts refused with a 400 naming them while nothing is stored.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { createTenant, startTestApp, type Tenant } from '../helpers/app';
import { sql } from '../helpers/db';
import { expectRestError } from '../helpers/rest';

const { rest, databaseUrl } = await startTestApp();

const INDEXES = '/api/instant/indexes';
const SEARCH = '/api/instant/search';

const PARIS = { lat: 48.8566, lng: 2.3522 };

/** Stores around Paris, one in London, one in Fiji (beside the 180th meridian) and one online. */
const stores = [
  { id: 'louvre', name: 'Louvre store', location: { lat: 48.8606, lng: 2.3376 }, rating: 4 },
  { id: 'bastille', name: 'Bastille store', location: [48.8532, 2.3691], rating: 5 },
  { id: 'versailles', name: 'Versailles store', location: { lat: 48.8049, lng: 2.1204 }, rating: 5 },
  { id: 'london', name: 'London store', location: { lat: 51.5074, lng: -0.1278 }, rating: 3 },
  { id: 'suva', name: 'Suva store', location: { lat: -18.1248, lng: 178.4501 }, rating: 4 },
  { id: 'online', name: 'Online store', rating: 5 },
];

let a: Tenant;

const storedDocuments = () =>
  sql(
    databaseUrl,
    "SELECT d.id, d.data FROM search_documents d JOIN search_indexes i ON i.id = d.index_id WHERE i.alias = 'stores' ORDER BY d.id",
  );

beforeAll(async () => {
  a = await createTenant(rest, 'Geo');
  const index = {
    name: 'Stores',
    alias: 'stores',
    fields: [
      { from: 'name', type: 'STRING' },
      { from: 'location', type: 'GEOPOINT' },
      { from: 'rating', type: 'NUMBER' },
    ],
    filters: [{ key: 'location' }, { key: 'rating' }],
  };
  expect((await rest.post(INDEXES, { token: a.key, body: { data: index } })).status).toBe(201);
  const put = await rest.put(`${INDEXES}/stores/documents`, { token: a.key, body: { data: stores } });
  expect(put.status, put.rawBody).toBe(204);
});

const search = (context: object) => rest.post(`${SEARCH}/indexes/stores`, { token: a.key, body: { data: [context] } });
const hitsOf = async (context: object) => {
  const response = await search(context);
  expect(response.status, response.rawBody).toBe(201);
  return response.body.data[0].results[0].hits as Record<string, unknown>[];
};
const ids = async (context: object) => (await hitsOf(context)).map((hit) => hit.id);

const radius = (km: number, unit = 'km') => ({
  key: 'location',
  operator: 'geo_radius',
  values: [PARIS.lat, PARIS.lng, km, unit],
});

describe('GEOPOINT fields', () => {
  it('the index lists the field as GEOPOINT and sortable; hits show the point as {lat, lng}', async () => {
    const index = (await rest.get(`${INDEXES}/stores`, { token: a.key })).body.data;
    expect(index.available_fields).toContainEqual({ key: 'location', type: 'GEOPOINT' });
    expect(index.sortable_fields).toEqual(['location', 'rating']);
    const hits = await hitsOf({ q: 'bastille' });
    expect(hits[0]).toMatchObject({ id: 'bastille', location: { lat: 48.8532, lng: 2.3691 } });
    expect(hits[0]).not.toHaveProperty('_geo_distance_meters');
    expect(Object.keys(hits[0]!._highlightResult as object)).toEqual(['name']);
  });

  it('filters by radius, in km or miles', async () => {
    expect((await ids({ filters: [radius(3)] })).sort()).toEqual(['bastille', 'louvre']);
    expect((await ids({ filters: [radius(20)] })).sort()).toEqual(['bastille', 'louvre', 'versailles']);
    expect((await ids({ filters: [radius(250, 'mi')] })).sort()).toEqual([
      'bastille',
      'london',
      'louvre',
      'versailles',
    ]);
    // A radius of half the earth's circumference holds every point, never the document without one.
    expect((await ids({ filters: [radius(20015)] })).sort()).toEqual([
      'bastille',
      'london',
      'louvre',
      'suva',
      'versailles',
    ]);
  });

  it('filters by bounding box, across the 180th meridian too, and combines with other filters', async () => {
    const box = (values: number[]) => ({ key: 'location', operator: 'geo_bbox', values });
    expect((await ids({ filters: [box([48.8, 2.3, 48.9, 2.4])] })).sort()).toEqual(['bastille', 'louvre']);
    expect(await ids({ filters: [box([-20, 170, -15, -170])] })).toEqual(['suva']);
    expect(
      await ids({
        filters: [box([48, 2, 49, 3]), { key: 'rating', operator: 'gte', values: [5] }],
        sort: ['location(48.8566, 2.3522):asc'],
      }),
    ).toEqual(['bastille', 'versailles']);
    expect((await ids({ filters: [{ any: [box([51, -1, 52, 0]), radius(1.2)] }] })).sort()).toEqual([
      'london',
      'louvre',
    ]);
    expect((await ids({ filters: [{ key: 'location', operator: 'not_exists' }] })).sort()).toEqual(['online']);
  });

  it('sorts by distance either way, returning each distance in meters; documents without a point last', async () => {
    const near = await hitsOf({ sort: ['location(48.8566, 2.3522):asc'] });
    expect(near.map((hit) => hit.id)).toEqual(['louvre', 'bastille', 'versailles', 'london', 'suva', 'online']);
    const meters = near.map((hit) => hit._geo_distance_meters);
    expect(meters[0]).toBeGreaterThan(1000);
    expect(meters[0]).toBeLessThan(1200);
    expect(
      meters
        .slice(0, 5)
        .every((m, i, all) => Number.isInteger(m) && (i === 0 || (m as number) >= (all[i - 1] as number))),
    ).toBe(true);
    expect((meters[3] as number) / 1000).toBeCloseTo(343.5, 0);
    expect(meters[5]).toBeNull();
    const far = await ids({ sort: ['location(48.8566, 2.3522):desc'], limit: 3 });
    expect(far).toEqual(['suva', 'london', 'versailles']);
  });

  it('sorts by distance after another key, and with a query', async () => {
    // Rating first, then distance from Versailles among the stores rated 5 (the online one has no point: last).
    expect(await ids({ sort: ['rating:desc', 'location(48.8049, 2.1204):asc'], limit: 3 })).toEqual([
      'versailles',
      'bastille',
      'online',
    ]);
    expect(await ids({ q: 'store', sort: ['location(51.5074, -0.1278):asc'], limit: 2 })).toEqual([
      'london',
      'versailles',
    ]);
  });

  const refusedDocuments: [string, unknown, string][] = [
    ['a latitude out of range', { lat: 91, lng: 2 }, 'must be a point'],
    ['a longitude out of range', [48, 181], 'must be a point'],
    ['coordinates as text', { lat: '48.1', lng: '2.3' }, 'must be a point'],
    ['three coordinates', [48, 2, 100], 'must be a point'],
    ['a string', '48.85,2.35', 'must be a point'],
    ['an object with more keys', { lat: 1, lng: 2, label: 'x' }, 'must be a point'],
    [
      'a point among 990 keys',
      { lat: 1, lng: 2, ...Object.fromEntries(Array.from({ length: 990 }, (_, i) => [`k${i}`, i])) },
      'must be a point',
    ],
    [
      'a list of points',
      [
        { lat: 1, lng: 2 },
        { lat: 3, lng: 4 },
      ],
      'must be a point',
    ],
  ];
  for (const [what, location, message] of refusedDocuments) {
    it(`refuses a document with ${what}: 400 naming the field, and nothing of the batch is stored`, async () => {
      const before = await storedDocuments();
      const response = await rest.put(`${INDEXES}/stores/documents`, {
        token: a.key,
        body: {
          data: [
            { id: 'fine', name: 'Fine', location: PARIS },
            { id: 'bad', location },
          ],
        },
      });
      expectRestError(response, 400);
      expect(response.body.error.details).toEqual([
        expect.objectContaining({ field: 'body.data[1].location', message: expect.stringContaining(message) }),
      ]);
      expect(await storedDocuments()).toEqual(before);
    });
  }

  it('refuses a deeply nested point with a 400, storing nothing', async () => {
    let deep: unknown = { lat: 1, lng: 2 };
    for (let i = 0; i < 200; i++) deep = { lat: deep, lng: 2 };
    const before = await storedDocuments();
    const response = await rest.put(`${INDEXES}/stores/documents`, {
      token: a.key,
      body: { data: [{ id: 'deep', location: deep }] },
    });
    expectRestError(response, 400);
    expect(await storedDocuments()).toEqual(before);
  });

  const refusedSearches: [string, object, string][] = [
    [
      'a latitude out of range',
      { filters: [{ key: 'location', operator: 'geo_radius', values: [95, 2, 5, 'km'] }] },
      'data[0].filters[0].values',
    ],
    [
      'NaN as text',
      { filters: [{ key: 'location', operator: 'geo_radius', values: ['NaN', 2, 5, 'km'] }] },
      'data[0].filters[0].values',
    ],
    ['a huge radius', { filters: [radius(1e12)] }, 'data[0].filters[0].values'],
    ['a zero radius', { filters: [radius(0)] }, 'data[0].filters[0].values'],
    [
      'a hundred values',
      { filters: [{ key: 'location', operator: 'geo_bbox', values: Array.from({ length: 100 }, () => 1) }] },
      'data[0].filters[0].values',
    ],
    ['an unknown unit', { filters: [radius(5, 'ft')] }, 'data[0].filters[0].values'],
    [
      'a box upside down',
      { filters: [{ key: 'location', operator: 'geo_bbox', values: [49, 2, 48, 3] }] },
      'data[0].filters[0].values',
    ],
    [
      'an in filter on a point',
      { filters: [{ key: 'location', operator: 'in', values: [1] }] },
      'data[0].filters[0].operator',
    ],
    [
      'a geo filter on a number',
      { filters: [{ key: 'rating', operator: 'geo_radius', values: [1, 2, 3, 'km'] }] },
      'data[0].filters[0].operator',
    ],
    ['a plain sort of a point', { sort: ['location:asc'] }, 'data[0].sort[0]'],
    ['a sort point out of range', { sort: ['location(1, 200):asc'] }, 'data[0].sort[0]'],
  ];
  for (const [what, context, field] of refusedSearches) {
    it(`refuses a search with ${what}: 400 naming ${field}`, async () => {
      const response = await search(context);
      expectRestError(response, 400);
      expect(response.body.error.details).toEqual(
        expect.arrayContaining([expect.objectContaining({ field: expect.stringContaining(field) })]),
      );
    });
  }

  it('refuses malformed sorts and values in the request schema', async () => {
    for (const context of [
      { sort: ['location(48.85):asc'] },
      { sort: ['location(48.85, 2.35, 7):asc'] },
      { sort: ['location(a, b):asc'] },
      { sort: ['location(48.85, 2.35):up'] },
      { sort: ['location(48.85, 2.35):asc', 'location:desc'] },
      { filters: [{ key: 'location', operator: 'geo_radius', values: [1, 2, { deep: [1] }, 'km'] }] },
      { filters: [{ key: 'location', operator: 'geo_radius', values: [1, 2, 3, 'km'], unit: 'km' }] },
    ]) {
      expectRestError(await search(context), 400);
    }
  });
});
