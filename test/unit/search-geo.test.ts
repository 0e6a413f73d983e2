/**
 * GEOPOINT fields: the geo math (haversine distances, radius and box membership), points in
 * documents, geo filters and sorts as the API takes them, the embedded engine's filtering, sorting
 * and distances, and their translation for Typesense.
 */
import { describe, expect, it } from 'vitest';
import { mapDocument, type IndexSettings, type IndexState } from '../../src/modules/search/definition';
import type { EngineQuery, FieldType, IndexDefinition, IndexedDocument } from '../../src/modules/search/engine/engine';
import { passesFilters } from '../../src/modules/search/engine/filter-match';
import {
  distanceMeters,
  EARTH_RADIUS_METERS,
  geoPointOf,
  insideBox,
  MAX_DISTANCE_METERS,
  withinRadius,
} from '../../src/modules/search/engine/geo';
import { MemoryIndex } from '../../src/modules/search/engine/memory-index';
import { toFilterBy } from '../../src/modules/search/engine/typesense-filters';
import { schemaFields, toTypesenseDocuments } from '../../src/modules/search/engine/typesense-mapping';
import { toSearch, toSortBy } from '../../src/modules/search/engine/typesense-query';
import { protocolFor } from '../../src/modules/search/engine/typesense-version';
import { fromSearchResult } from '../../src/modules/search/engine/typesense-results';
import { toEngineQuery } from '../../src/modules/search/search-query';
import type { SearchContextData } from '../../src/modules/search/search.schemas';
import { geoFilterRefusal } from '../helpers/typesense-stand-in';
import { indexDefinition, indexSettings, indexState } from '../helpers/search-definitions';

const PARIS = { lat: 48.8566, lng: 2.3522 };
const LONDON = { lat: 51.5074, lng: -0.1278 };
const VERSAILLES = { lat: 48.8049, lng: 2.1204 };
const LYON = { lat: 45.764, lng: 4.8357 };

describe('geo math', () => {
  it('measures great-circle distances in meters', () => {
    expect(distanceMeters(PARIS, PARIS)).toBe(0);
    // Paris–London is about 343.5 km; Paris–Versailles about 17.9 km.
    expect(distanceMeters(PARIS, LONDON) / 1000).toBeCloseTo(343.5, 0);
    expect(distanceMeters(PARIS, VERSAILLES) / 1000).toBeCloseTo(17.9, 0);
    expect(distanceMeters(PARIS, LONDON)).toBeCloseTo(distanceMeters(LONDON, PARIS), 6);
    // A degree of latitude is 1/360 of a meridian circle.
    expect(distanceMeters({ lat: 0, lng: 0 }, { lat: 1, lng: 0 })).toBeCloseTo(
      (2 * Math.PI * EARTH_RADIUS_METERS) / 360,
      3,
    );
    // Antipodes are half a circumference apart, never more (h is clamped to 1).
    expect(distanceMeters({ lat: 0, lng: 0 }, { lat: 0, lng: 180 })).toBeCloseTo(MAX_DISTANCE_METERS, 3);
    expect(distanceMeters({ lat: 90, lng: 0 }, { lat: -90, lng: 0 })).toBeLessThanOrEqual(MAX_DISTANCE_METERS);
    // Across the 180th meridian the short way round.
    expect(distanceMeters({ lat: 0, lng: 179.5 }, { lat: 0, lng: -179.5 }) / 1000).toBeCloseTo(111.2, 0);
  });

  it('a radius holds its edge; a box its edges, and west above east wraps the 180th meridian', () => {
    const d = distanceMeters(PARIS, VERSAILLES);
    expect(withinRadius(VERSAILLES, PARIS, d)).toBe(true);
    expect(withinRadius(VERSAILLES, PARIS, d - 1)).toBe(false);
    const box = { south: 48, west: 2, north: 49, east: 3 };
    expect(insideBox(PARIS, box)).toBe(true);
    expect(insideBox({ lat: 49, lng: 3 }, box)).toBe(true);
    expect(insideBox(LONDON, box)).toBe(false);
    expect(insideBox(LYON, box)).toBe(false);
    const fiji = { south: -20, west: 177, north: -15, east: -178 };
    expect(insideBox({ lat: -18, lng: 178.4 }, fiji)).toBe(true);
    expect(insideBox({ lat: -18, lng: -179 }, fiji)).toBe(true);
    expect(insideBox({ lat: -18, lng: 0 }, fiji)).toBe(false);
  });

  it('takes a point as {lat, lng} or [lat, lng] in range, and nothing else', () => {
    expect(geoPointOf({ lat: 48.85, lng: 2.35 })).toEqual({ lat: 48.85, lng: 2.35 });
    expect(geoPointOf([48.85, 2.35])).toEqual({ lat: 48.85, lng: 2.35 });
    expect(geoPointOf({ lng: -180, lat: 90 })).toEqual({ lat: 90, lng: -180 });
    for (const bad of [
      { lat: 91, lng: 0 },
      { lat: 0, lng: 180.5 },
      { lat: Number.NaN, lng: 0 },
      { lat: Infinity, lng: 0 },
      { lat: '48.85', lng: '2.35' },
      { lat: 1, lng: 2, alt: 3 },
      { lat: { lat: 1 }, lng: 2 },
      { lat: [1], lng: 2 },
      { latitude: 1, longitude: 2 },
      [1, 2, 3],
      [[1, 2]],
      [1],
      '48.85,2.35',
      48.85,
      null,
      true,
    ])
      expect(geoPointOf(bad), JSON.stringify(bad)).toBeUndefined();
  });
});

const settings = (fields: { from: string; type: FieldType | null }[]): IndexSettings =>
  indexSettings({
    fields: fields.map((field) => ({ from: field.from, to: field.from, type: field.type, label: null })),
  });

describe('points in documents', () => {
  const declared = settings([
    { from: 'name', type: 'STRING' },
    { from: 'location', type: 'GEOPOINT' },
  ]);

  it('stores {lat, lng} and [lat, lng] as {lat, lng}', () => {
    for (const location of [{ lat: 48.85, lng: 2.35 }, [48.85, 2.35]]) {
      expect(mapDocument({ id: 'a', name: 'Shop', location }, declared, {}).document?.values.location).toEqual({
        lat: 48.85,
        lng: 2.35,
      });
    }
  });

  it('infers GEOPOINT from an object with lat and lng when no field is declared', () => {
    const seen: Record<string, FieldType> = {};
    const mapped = mapDocument({ id: 'a', location: { lat: 1, lng: 2 } }, settings([]), seen);
    expect(mapped.document?.values.location).toEqual({ lat: 1, lng: 2 });
    expect(seen).toEqual({ location: 'GEOPOINT' });
    // Once seen, the array form is a point too.
    expect(mapDocument({ id: 'b', location: [3, 4] }, settings([]), seen).document?.values.location).toEqual({
      lat: 3,
      lng: 4,
    });
  });

  it('names the field of a bad point, whatever is wrong with it', () => {
    const nested = { lat: 1, lng: 2 } as Record<string, unknown>;
    let deep: unknown = nested;
    for (let i = 0; i < 500; i++) deep = { lat: deep, lng: 2 };
    for (const location of [
      { lat: 200, lng: 0 },
      { lat: 0, lng: -999 },
      [91, 0],
      [1, 2, 3],
      'here',
      7,
      [{ lat: 1, lng: 2 }],
      { lat: '1', lng: '2' },
      deep,
    ]) {
      const mapped = mapDocument({ id: 'a', location }, declared, {});
      expect(mapped.problems, JSON.stringify(location).slice(0, 80)).toEqual([
        { field: 'location', message: expect.stringContaining('must be a point') },
      ]);
    }
    const seen: Record<string, FieldType> = {};
    expect(mapDocument({ id: 'a', location: { lat: 95, lng: 0 } }, settings([]), seen).problems).toEqual([
      { field: 'location', message: expect.stringContaining('must be a point') },
    ]);
    // A rejected document teaches no type.
    expect(seen).toEqual({});
  });
});

const state = (overrides: Partial<IndexState> = {}): IndexState =>
  indexState({
    id: 'i',
    tenantId: 't',
    alias: 'stores',
    seenFieldTypes: { name: 'STRING', location: 'GEOPOINT', rating: 'NUMBER' },
    filters: [{ key: 'location' }, { key: 'rating' }, { key: 'name' }],
    ...overrides,
  });

const translate = (context: Partial<SearchContextData>) => toEngineQuery(state(), context as SearchContextData, '[0]');

describe('geo filters and sorts of a search context', () => {
  it('turns a radius into meters, in km or mi, and keeps a box as given', () => {
    expect(
      translate({ filters: [{ key: 'location', operator: 'geo_radius', values: [48.85, 2.35, 5, 'km'] }] }).query
        ?.filters,
    ).toEqual([{ field: 'location', operator: 'geo_radius', values: [48.85, 2.35, 5000] }]);
    expect(
      translate({ filters: [{ key: 'location', operator: 'geo_radius', values: ['48.85', '2.35', 2, 'mi'] }] }).query
        ?.filters,
    ).toEqual([{ field: 'location', operator: 'geo_radius', values: [48.85, 2.35, 3218.688] }]);
    expect(
      translate({ filters: [{ key: 'location', operator: 'geo_bbox', values: [48, 177, 49, -178] }] }).query?.filters,
    ).toEqual([{ field: 'location', operator: 'geo_bbox', values: [48, 177, 49, -178] }]);
  });

  const refused: [string, object, string, RegExp][] = [
    ['a latitude out of range', { operator: 'geo_radius', values: [91, 2, 5, 'km'] }, 'values', /latitude/],
    ['a longitude out of range', { operator: 'geo_radius', values: [48, -181, 5, 'km'] }, 'values', /longitude/],
    ['a string for a number', { operator: 'geo_radius', values: ['north', 2, 5, 'km'] }, 'values', /takes/],
    ['NaN spelled out', { operator: 'geo_radius', values: ['NaN', 2, 5, 'km'] }, 'values', /takes/],
    ['Infinity spelled out', { operator: 'geo_radius', values: [1, 2, 'Infinity', 'km'] }, 'values', /takes/],
    ['a radius of 0', { operator: 'geo_radius', values: [48, 2, 0, 'km'] }, 'values', /radius/],
    ['a negative radius', { operator: 'geo_radius', values: [48, 2, -5, 'km'] }, 'values', /radius/],
    ['a radius past the antipodes', { operator: 'geo_radius', values: [48, 2, 1e9, 'km'] }, 'values', /20015 km/],
    ['a huge radius in miles', { operator: 'geo_radius', values: [48, 2, 12500, 'mi'] }, 'values', /12436 mi/],
    ['an unknown unit', { operator: 'geo_radius', values: [48, 2, 5, 'm'] }, 'values', /"km" or "mi"/],
    ['no unit', { operator: 'geo_radius', values: [48, 2, 5] }, 'values', /takes/],
    ['too many values', { operator: 'geo_bbox', values: [1, 2, 3, 4, 5] }, 'values', /takes/],
    ['south above north', { operator: 'geo_bbox', values: [49, 2, 48, 3] }, 'values', /south/],
    ['a box corner out of range', { operator: 'geo_bbox', values: [48, 2, 95, 3] }, 'values', /latitudes/],
    [
      'a geo filter on a NUMBER field',
      { key: 'rating', operator: 'geo_radius', values: [1, 2, 3, 'km'] },
      'operator',
      /GEOPOINT/,
    ],
    ['in on a GEOPOINT field', { operator: 'in', values: [1] }, 'operator', /GEOPOINT field/],
    ['a range on a GEOPOINT field', { operator: 'gte', values: [1] }, 'operator', /GEOPOINT field/],
  ];
  for (const [what, filter, member, message] of refused) {
    it(`refuses ${what}, naming the filter`, () => {
      const translated = translate({ filters: [{ key: 'location', ...filter } as never] });
      expect(translated.problems).toEqual([
        { field: `[0].filters[0].${member}`, message: expect.stringMatching(message) },
      ]);
    });
  }

  it('checks geo filters inside any groups too', () => {
    const translated = translate({
      filters: [
        {
          any: [
            { key: 'location', operator: 'geo_radius', values: [48, 2, 5, 'km'] },
            { key: 'location', operator: 'geo_bbox', values: [1, 2, 'x', 4] },
          ],
        },
      ],
    });
    expect(translated.problems).toEqual([{ field: '[0].filters[0].any[1].values', message: expect.any(String) }]);
  });

  it('sorts a GEOPOINT field by distance only, and a point must be in range', () => {
    expect(translate({ sort: ['location(48.85, 2.35):asc', 'rating:desc'] }).query?.sort).toEqual([
      { field: 'location', direction: 'asc', from: { lat: 48.85, lng: 2.35 } },
      { field: 'rating', direction: 'desc' },
    ]);
    expect(translate({ sort: ['location:asc'] }).problems).toEqual([
      { field: '[0].sort[0]', message: expect.stringContaining('sort it by distance') },
    ]);
    expect(translate({ sort: ['rating(1, 2):asc'] }).problems).toEqual([
      { field: '[0].sort[0]', message: expect.stringContaining('not a GEOPOINT field') },
    ]);
    for (const key of ['location(91, 2):asc', 'location(1, 1e400):asc', 'location(1.2.3, 4):asc'])
      expect(translate({ sort: [key] }).problems, key).toEqual([{ field: '[0].sort[0]', message: expect.any(String) }]);
  });

  it('counts no facets of a GEOPOINT field: * leaves it out, naming it is refused', () => {
    const withFacets = (context: Partial<SearchContextData>) =>
      toEngineQuery(state({ facetFields: ['location', 'name'] }), context as SearchContextData, '[0]');
    expect(withFacets({ facets: ['*'] }).query?.facets).toEqual(['name']);
    expect(withFacets({ facets: ['location'] }).problems).toEqual([
      { field: '[0].facets[0]', message: expect.stringContaining('GEOPOINT') },
    ]);
  });
});

const definition = indexDefinition({
  id: '0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b',
  tenantId: 't',
  alias: 'stores',
  fields: [
    { name: 'name', type: 'STRING' },
    { name: 'location', type: 'GEOPOINT' },
    { name: 'rating', type: 'NUMBER' },
  ],
  searchFields: ['name'],
  filterFields: ['location', 'rating'],
  sortableFields: ['location', 'rating'],
});

const stores: IndexedDocument[] = [
  { id: 'paris', values: { name: 'Paris store', location: PARIS, rating: 4 }, metadata: null },
  { id: 'versailles', values: { name: 'Versailles store', location: VERSAILLES, rating: 5 }, metadata: null },
  { id: 'london', values: { name: 'London store', location: LONDON, rating: 4 }, metadata: null },
  { id: 'lyon', values: { name: 'Lyon store', location: LYON, rating: 3 }, metadata: null },
  { id: 'online', values: { name: 'Online store', location: null, rating: 5 }, metadata: null },
];

const query = (overrides: Partial<EngineQuery>): EngineQuery => ({
  q: '',
  filters: [],
  facets: [],
  limit: 10,
  offset: 0,
  threshold: 1,
  sort: [],
  disjunctiveFacets: false,
  ...overrides,
});

describe('the embedded engine', () => {
  const index = new MemoryIndex(definition);
  index.upsert(stores);
  const ids = (overrides: Partial<EngineQuery>) => index.search(query(overrides)).hits.map((hit) => hit.document.id);

  it('filters by radius and by box; a document without a point passes neither', () => {
    const radius = (km: number) => ({
      field: 'location',
      operator: 'geo_radius' as const,
      values: [PARIS.lat, PARIS.lng, km * 1000],
    });
    expect(ids({ filters: [radius(1)] })).toEqual(['paris']);
    expect(ids({ filters: [radius(20)] }).sort()).toEqual(['paris', 'versailles']);
    expect(ids({ filters: [radius(400)] }).sort()).toEqual(['london', 'lyon', 'paris', 'versailles']);
    const box = { field: 'location', operator: 'geo_bbox' as const, values: [45, 2, 49, 5] };
    expect(ids({ filters: [box] }).sort()).toEqual(['lyon', 'paris', 'versailles']);
    expect(passesFilters({ location: null }, [box])).toBe(false);
    expect(passesFilters({ location: PARIS }, [{ field: 'location', operator: 'exists', values: [] }])).toBe(true);
    expect(passesFilters({ location: null }, [{ field: 'location', operator: 'not_exists', values: [] }])).toBe(true);
  });

  it('sorts by distance either way, documents without a point last, and returns each distance', () => {
    const from = { lat: PARIS.lat, lng: PARIS.lng };
    const near = index.search(query({ sort: [{ field: 'location', direction: 'asc', from }] }));
    expect(near.hits.map((hit) => hit.document.id)).toEqual(['paris', 'versailles', 'london', 'lyon', 'online']);
    expect(near.hits.map((hit) => hit.geoDistanceMeters)).toEqual([
      0,
      Math.round(distanceMeters(PARIS, VERSAILLES)),
      Math.round(distanceMeters(PARIS, LONDON)),
      Math.round(distanceMeters(PARIS, LYON)),
      null,
    ]);
    expect(ids({ sort: [{ field: 'location', direction: 'desc', from }] })).toEqual([
      'lyon',
      'london',
      'versailles',
      'paris',
      'online',
    ]);
    // Without a sort by distance hits carry no distance.
    expect(index.search(query({})).hits[0]).not.toHaveProperty('geoDistanceMeters');
  });

  it('breaks distance ties by the next sort key, then relevance', () => {
    const twins = new MemoryIndex(definition);
    twins.upsert([
      { id: 'a', values: { name: 'Store', location: PARIS, rating: 3 }, metadata: null },
      { id: 'b', values: { name: 'Store', location: PARIS, rating: 5 }, metadata: null },
      { id: 'c', values: { name: 'Store', location: LYON, rating: 9 }, metadata: null },
    ]);
    const sort = [
      { field: 'location', direction: 'asc' as const, from: PARIS },
      { field: 'rating', direction: 'desc' as const },
    ];
    expect(twins.search(query({ sort })).hits.map((hit) => hit.document.id)).toEqual(['b', 'a', 'c']);
  });

  it('does not highlight or facet a point', () => {
    const all = index.search(query({ q: 'store' }));
    expect(Object.keys(all.hits[0]!.highlight)).toEqual(['name']);
  });
});

describe('the Typesense mapping', () => {
  it('declares a geopoint field, sent as [lat, lng], with no sort copy', () => {
    const fields = schemaFields(definition);
    expect(fields.find((field) => field.name === 'location')).toEqual({
      name: 'location',
      type: 'geopoint',
      optional: true,
    });
    expect(fields.some((field) => field.name === '__sort_location')).toBe(false);
    const [paris, , , , online] = toTypesenseDocuments(definition, stores);
    expect(paris).toMatchObject({ location: [PARIS.lat, PARIS.lng], __has: ['*', 'location', 'rating'] });
    expect(JSON.parse(String(paris!.__values))).toMatchObject({ location: PARIS });
    expect(online).not.toHaveProperty('location');
    expect(online!.__has).toEqual(['*', 'rating']);
  });

  it('writes a radius with an exact filter radius, a box as a polygon, split at the 180th meridian', () => {
    expect(toFilterBy([{ field: 'location', operator: 'geo_radius', values: [48.85, 2.35, 5000] }])).toBe(
      'location:([48.85, 2.35], radius: 5 km, exact_filter_radius: 5 km)',
    );
    expect(toFilterBy([{ field: 'location', operator: 'geo_bbox', values: [48, 2, 49, 3] }])).toBe(
      'location:([48, 2, 48, 3, 49, 3, 49, 2])',
    );
    expect(toFilterBy([{ field: 'location', operator: 'geo_bbox', values: [-20, 177, -15, -178] }])).toBe(
      '(location:([-20, 177, -20, 180, -15, 180, -15, 177]) || location:([-20, -180, -20, -178, -15, -178, -15, -180]))',
    );
    for (const filter of [
      'location:([48.85, 2.35], radius: 5 km, exact_filter_radius: 5 km)',
      'location:([48, 2, 48, 3, 49, 3, 49, 2])',
    ])
      expect(geoFilterRefusal('location', filter.slice('location:'.length))).toBeNull();
  });

  it('neither groups nor sorts by a point as a value, as the embedded engine does not', () => {
    const pointAsValue: IndexDefinition = {
      ...definition,
      distinctField: 'location',
      rankingRules: [{ field: 'location', direction: 'asc' }, 'words', { field: 'rating', direction: 'desc' }],
    };
    expect(toSortBy(pointAsValue, [])).toBe('_text_match:desc,rating(missing_values: last):desc,__id:asc');
    const search = toSearch(pointAsValue, 'c', query({ q: 'store' }), protocolFor('30.0'));
    expect(search).not.toHaveProperty('group_by');
    // The embedded engine: every document its own group, in relevance order then by id.
    const index = new MemoryIndex(pointAsValue);
    index.upsert(stores);
    const result = index.search(query({ q: 'store' }));
    expect(result.count).toBe(stores.length);
    expect(result.hits.map((hit) => hit.document.id)).toEqual(['online', 'versailles', 'london', 'paris', 'lyon']);
  });

  it('sorts by distance on the field itself and reads the distance back', () => {
    const sort = [{ field: 'location', direction: 'asc' as const, from: { lat: 48.85, lng: 2.35 } }];
    expect(toSortBy(definition, sort)).toBe('location(48.85, 2.35):asc,_text_match:desc,__id:asc');
    const result = fromSearchResult(definition, query({ sort }), {
      found: 2,
      hits: [
        {
          document: { id: 'paris', __values: JSON.stringify(stores[0]!.values) },
          geo_distance_meters: { location: 812.4 },
        },
        { document: { id: 'online', __values: JSON.stringify(stores[4]!.values) } },
      ],
    });
    expect(result.hits.map((hit) => [hit.document.id, hit.geoDistanceMeters, hit.document.values.location])).toEqual([
      ['paris', 812, PARIS],
      ['online', null, null],
    ]);
  });
});
