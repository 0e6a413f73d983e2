/**
 * Range facets through the Typesense adapter, pinned against the stand-in: one hit-less search per
 * field with `facet_by: field(r0:[from, to], ...)` in the same `multi_search`, disjunctive like the
 * other facets, and the counts named back by their labels.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Principal } from '../../src/kernel/principal';
import type { SearchServices } from '../../src/modules/search/search.module';
import type { IndexInputData } from '../../src/modules/search/search.schemas';
import { createTenant, startTestApp } from '../helpers/app';
import { searchServicesOf } from '../helpers/search-services';
import { STAND_IN_API_KEY, TypesenseStandIn } from '../helpers/typesense-stand-in';

const { rest, db, config, services: appServices } = await startTestApp();
const tenant = await createTenant(rest, 'Typesense range facet contract');
const principal: Principal = { tenantId: tenant.id, scopes: new Set(['*']), actor: { type: 'api_key', id: 'c' } };

const RANGES = [
  { label: 'Under €20', to: 20 },
  { label: 'mid', from: 20, to: 100 },
  { label: 'high', from: 100 },
];

describe('range facets on Typesense', () => {
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
      name: 'ranged',
      alias: 'ranged',
      fields: [
        { from: 'name', to: 'name', type: 'STRING' },
        { from: 'brand', to: 'brand', type: 'STRING' },
        { from: 'price', to: 'price', type: 'NUMBER' },
      ],
      search_fields: ['name'],
      facet_fields: ['brand', 'price'],
    } as IndexInputData);
  });
  afterAll(() => standIn.close());

  const searches = () =>
    (standIn.requests.findLast((r) => r.path === '/multi_search')!.body as { searches: Record<string, unknown>[] })
      .searches;

  it('sends one hit-less range search per field and names the counts back', async () => {
    standIn.answerSearch = (search) => ({
      found: 3,
      hits: [],
      facet_counts: String(search.facet_by).startsWith('price(')
        ? [
            {
              field_name: 'price',
              counts: [
                { value: 'r1', count: 2 },
                { value: 'r0', count: 1 },
              ],
            },
          ]
        : [],
      out_of: 5,
      page: 1,
      search_time_ms: 0,
      request_params: {},
    });
    const filters = [
      { key: 'price', operator: 'gte', values: [10] },
      { key: 'brand', operator: 'in', values: ['Lumo'] },
    ];
    const [entry] = await services.search.searchIndex(principal, 'ranged', [
      { q: 'lamp', filters, disjunctive_facets: true, facet_ranges: { price: RANGES } } as never,
    ]);
    const [main, ranged] = searches();
    expect(main).not.toHaveProperty('facet_by');
    expect(ranged).toMatchObject({
      q: 'lamp',
      limit: 0,
      offset: 0,
      filter_by: 'brand:=[`Lumo`]',
      facet_by: 'price(r0:[-9007199254740991, 20], r1:[20, 100], r2:[100, 9007199254740991])',
      max_facet_values: 3,
    });
    expect(entry!.results[0]!.facet_ranges).toEqual({
      price: [
        { label: 'Under €20', from: null, to: 20, count: 1 },
        { label: 'mid', from: 20, to: 100, count: 2 },
        { label: 'high', from: 100, to: null, count: 0 },
      ],
    });
  });

  it('keeps the field’s own filters when the facets are not disjunctive', async () => {
    await services.search.searchIndex(principal, 'ranged', [
      {
        q: 'lamp',
        filters: [{ key: 'price', operator: 'gte', values: [10] }],
        facet_ranges: { price: RANGES },
      } as never,
    ]);
    expect(searches()[1]).toMatchObject({ filter_by: 'price:>=10' });
  });
});
