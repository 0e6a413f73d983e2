/**
 * GEOPOINT fields through the Typesense adapter, pinned against the stand-in: a `geopoint` field
 * holding `[lat, lng]`, radius filters with an exact filter radius, boxes as polygons, the sort by
 * distance on the field itself, and each hit's distance read from `geo_distance_meters`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Principal } from '../../src/kernel/principal';
import type { SearchServices } from '../../src/modules/search/search.module';
import type { IndexInputData } from '../../src/modules/search/search.schemas';
import { createTenant, startTestApp } from '../helpers/app';
import { searchServicesOf } from '../helpers/search-services';
import { STAND_IN_API_KEY, TypesenseStandIn } from '../helpers/typesense-stand-in';

const { rest, db, config, services: appServices } = await startTestApp();
const tenant = await createTenant(rest, 'Typesense geo contract');
const principal: Principal = { tenantId: tenant.id, scopes: new Set(['*']), actor: { type: 'api_key', id: 'c' } };

const stores = [
  { id: 'louvre', name: 'Louvre store', location: { lat: 48.8606, lng: 2.3376 } },
  { id: 'bastille', name: 'Bastille store', location: [48.8532, 2.3691] },
  { id: 'online', name: 'Online store' },
];

describe('GEOPOINT fields on Typesense', () => {
  let standIn: TypesenseStandIn;
  let services: SearchServices;
  beforeAll(async () => {
    standIn = await TypesenseStandIn.start('30.0');
    services = searchServicesOf(
      { config, db, services: appServices },
      { typesenseUrl: standIn.url, typesenseApiKey: STAND_IN_API_KEY },
    );
    await services.start();
    await services.indexes.create(principal, {
      name: 'stores',
      alias: 'stores',
      fields: [
        { from: 'name', to: 'name', type: 'STRING' },
        { from: 'location', to: 'location', type: 'GEOPOINT' },
      ],
      search_fields: ['name'],
      filters: [{ key: 'location' }],
    } as IndexInputData);
    await services.indexes.upsertDocuments(principal, 'stores', stores);
  });
  afterAll(() => standIn.close());

  const collection = () => [...standIn.collections.values()].find((c) => c.schema.name.startsWith('idx_'))!;
  const lastSearch = () =>
    (standIn.requests.findLast((r) => r.path === '/multi_search')!.body as { searches: Record<string, unknown>[] })
      .searches[0]!;

  it('declares a geopoint field and imports each point as [lat, lng], the values as sent in {lat, lng}', () => {
    const { schema, documents } = collection();
    expect(schema.fields.find((field) => field.name === 'location')).toEqual({
      name: 'location',
      type: 'geopoint',
      optional: true,
    });
    expect(documents.get('louvre')).toMatchObject({ location: [48.8606, 2.3376], __has: ['*', 'location'] });
    expect(documents.get('bastille')).toMatchObject({ location: [48.8532, 2.3691] });
    expect(JSON.parse(String(documents.get('bastille')!.__values))).toMatchObject({
      location: { lat: 48.8532, lng: 2.3691 },
    });
    expect(documents.get('online')).not.toHaveProperty('location');
  });

  it('filters by radius (exactly, whatever its size) and by box, and sorts by distance on the field', async () => {
    standIn.answerSearch = () => ({
      found: 2,
      hits: [
        {
          document: { id: 'louvre', __values: JSON.stringify({ name: 'Louvre store', location: stores[0]!.location }) },
          geo_distance_meters: { location: 1148 },
        },
        {
          document: { id: 'online', __values: JSON.stringify({ name: 'Online store' }) },
        },
      ],
      facet_counts: [],
      out_of: 3,
      page: 1,
      search_time_ms: 0,
      request_params: {},
    });
    const [entry] = await services.search.searchIndex(principal, 'stores', [
      {
        q: '',
        filters: [
          { key: 'location', operator: 'geo_radius', values: [48.8566, 2.3522, 25, 'mi'] },
          {
            any: [
              { key: 'location', operator: 'geo_bbox', values: [48, 2, 49, 3] },
              { key: 'location', operator: 'geo_bbox', values: [-20, 177, -15, -178] },
            ],
          },
        ],
        sort: ['location(48.8566, 2.3522):asc'],
      } as never,
    ]);
    expect(lastSearch()).toMatchObject({
      filter_by:
        'location:([48.8566, 2.3522], radius: 40.2336 km, exact_filter_radius: 40.2336 km) && ' +
        '(location:([48, 2, 48, 3, 49, 3, 49, 2]) || ' +
        '(location:([-20, 177, -20, 180, -15, 180, -15, 177]) || location:([-20, -180, -20, -178, -15, -178, -15, -180])))',
      sort_by: 'location(48.8566, 2.3522):asc,_text_match:desc,__id:asc',
    });
    const hits = entry!.results[0]!.hits;
    expect(hits.map((hit) => [hit.id, hit._geo_distance_meters, hit.location])).toEqual([
      ['louvre', 1148, { lat: 48.8606, lng: 2.3376 }],
      ['online', null, null],
    ]);
  });

  it('leaves the distance out of hits when nothing sorts by distance', async () => {
    await services.search.searchIndex(principal, 'stores', [{ q: 'store' } as never]);
    const [entry] = await services.search.searchIndex(principal, 'stores', [{ q: 'store' } as never]);
    expect(entry!.results[0]!.hits[0]).not.toHaveProperty('_geo_distance_meters');
    expect(lastSearch().sort_by).toBe('_text_match:desc,__id:asc');
  });

  it('the stand-in refuses what Typesense refuses: a malformed geo filter, a point that is not [lat, lng]', async () => {
    const search = (filter_by: string) =>
      fetch(`${standIn.url}/multi_search`, {
        method: 'POST',
        headers: { 'x-typesense-api-key': STAND_IN_API_KEY, 'content-type': 'application/json' },
        body: JSON.stringify({ searches: [{ collection: collection().schema.name, q: '*', filter_by }] }),
      }).then(async (response) => ((await response.json()) as { results: unknown[] }).results[0]);
    const format =
      'Value of filter field `location`: must be in the `([-44.50, 170.29], radius: 0.75 km, exact_filter_radius: 5 km)` ' +
      'or ([56.33, -65.97, 23.82, -127.82], exact_filter_radius: 7 km) format.';
    expect(await search('location:([48.85, 2.35])')).toEqual({ code: 400, error: format });
    expect(await search('location:([48.85, NaN], radius: 5 km)')).toEqual({ code: 400, error: format });
    expect(await search('location:([48.85, 2.35], radius: 5 m)')).toEqual({
      code: 400,
      error: 'Unit must be either `km` or `mi`.',
    });
    const importOne = (location: unknown) =>
      fetch(`${standIn.url}/collections/${collection().schema.name}/documents/import?action=upsert`, {
        method: 'POST',
        headers: { 'x-typesense-api-key': STAND_IN_API_KEY },
        body: JSON.stringify({ id: 'x', __id: 'x', location }),
      }).then((response) => response.text());
    expect(JSON.parse(await importOne({ lat: 1, lng: 2 }))).toMatchObject({
      success: false,
      error: 'Field `location` must be a 2 element array: [lat, lng].',
    });
    expect(JSON.parse(await importOne([1, 2]))).toEqual({ success: true });
  });
});
