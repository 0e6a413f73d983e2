/**
 * Boolean filters over REST: the new operators and `any` groups in a search context, and the 400
 * naming the filter for each way a filter can be wrong.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { createTenant, startTestApp, type Tenant } from '../helpers/app';
import type { RestResponse } from '../helpers/rest';

const { rest } = await startTestApp();

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
    ],
    filters: [{ key: 'brand' }, { key: 'price' }],
  };
  expect((await rest.post('/api/instant/indexes', { token: a.key, body: { data: index } })).status).toBe(201);
  const documents = [
    { id: 'p1', name: 'Desk lamp', brand: 'Lumo', price: 25 },
    { id: 'p2', name: 'Floor lamp', brand: 'Brite', price: 80 },
    { id: 'p3', name: 'Wall lamp', price: 40 },
  ];
  expect(
    (await rest.put('/api/instant/indexes/shop/documents', { token: a.key, body: { data: documents } })).status,
  ).toBe(204);
});

const search = (context: object) =>
  rest.post('/api/instant/search/indexes/shop', { token: a.key, body: { data: [context] } });

function expectProblem(response: RestResponse, field: string, message?: string) {
  expect(response.status, response.rawBody).toBe(400);
  expect(response.body.error.details).toEqual(
    expect.arrayContaining([expect.objectContaining({ field, ...(message ? { message } : {}) })]),
  );
}

describe('boolean filters in a search context', () => {
  it('not_in, not_exists and any groups answer over REST, with disjunctive facets on request', async () => {
    const response = await search({
      filters: [
        { key: 'brand', operator: 'not_in', values: ['Brite'] },
        {
          any: [
            { key: 'brand', operator: 'not_exists' },
            { key: 'price', operator: 'lt', values: ['30'] },
          ],
        },
      ],
      facets: ['brand'],
      disjunctive_facets: true,
    });
    expect(response.status, response.rawBody).toBe(201);
    const [result] = response.body.data[0].results;
    expect(result.hits.map((hit: { id: string }) => hit.id)).toEqual(['p1', 'p3']);
    // The brand filters are left out of the brand facet; the price filter is not about brand alone.
    expect(result.facets.brand).toEqual({ Lumo: 1 });
  });

  it('names the filter in every refusal', async () => {
    expectProblem(
      await search({ filters: [{ key: 'brand', operator: 'exists', values: ['x'] }] }),
      'body.data[0].filters[0].values',
      'exists takes no values',
    );
    expectProblem(
      await search({ filters: [{ key: 'brand', operator: 'in' }] }),
      'body.data[0].filters[0].values',
      'is required',
    );
    expectProblem(
      await search({
        filters: [
          {
            any: [
              { key: 'brand', operator: 'in', values: ['x'] },
              { key: 'name', operator: 'exists' },
            ],
          },
        ],
      }),
      'body.data[0].filters[0].any[1].key',
    );
    expectProblem(
      await search({
        filters: [{ any: [{ all: [{ key: 'price', operator: 'gt', values: ['cheap'] }] }] }],
      }),
      'body.data[0].filters[0].any[0].all[0].values',
      'must be of type NUMBER',
    );
    expectProblem(await search({ filters: [{ any: [] }] }), 'body.data[0].filters[0].any', 'must have at least 1 item');
    expectProblem(
      await search({ filters: [{ key: 'brand', operator: 'like', values: ['x'] }] }),
      'body.data[0].filters[0].operator',
    );
  });

  it('groups nest at most two levels deep', async () => {
    const leaf = { key: 'brand', operator: 'in', values: ['Lumo'] };
    expect((await search({ filters: [{ any: [{ any: [leaf] }] }] })).status).toBe(201);
    expectProblem(
      await search({ filters: [{ any: [{ any: [{ any: [leaf] }] }] }] }),
      'body.data[0].filters[0].any[0].any[0].key',
    );
    // The top level is already all of its filters.
    expectProblem(await search({ filters: [{ all: [leaf] }] }), 'body.data[0].filters[0].all', 'is not a known field');
  });
});

describe('facet value search', () => {
  it('answers facet_hits with the matching values and their counts; a field that is no facet is a 400', async () => {
    const response = await search({ q: 'lamp', facet_query: { field: 'brand', q: 'lu' } });
    expect(response.status, response.rawBody).toBe(201);
    expect(response.body.data[0].results[0].facet_hits).toEqual([{ value: 'Lumo', count: 1 }]);
    expectProblem(
      await search({ facet_query: { field: 'name', q: 'x' } }),
      'body.data[0].facet_query.field',
      'name is not a facet field of index shop',
    );
    expectProblem(await search({ facet_query: { field: 'brand' } }), 'body.data[0].facet_query.q');
  });
});
