/**
 * Rules that boost and bury through the Typesense adapter, pinned against the stand-in: one `_eval`
 * sort part (buried expressions first at -1, so bury wins; boosted at 1), after the query's sort and
 * `_text_match`, within Typesense's three sort fields; the id tie-break gives way first, then `_eval`.
 * The stand-in parses the part as Typesense does and refuses malformed ones.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Principal } from '../../src/kernel/principal';
import type { SearchServices } from '../../src/modules/search/search.module';
import type { IndexInputData, RuleInputData } from '../../src/modules/search/search.schemas';
import { createTenant, startTestApp } from '../helpers/app';
import { searchServicesOf } from '../helpers/search-services';
import { STAND_IN_API_KEY, TypesenseStandIn } from '../helpers/typesense-stand-in';

const { rest, db, config, services: appServices } = await startTestApp();

const brand = (...values: string[]) => ({ key: 'brand', operator: 'in' as const, values });
const chairs = { text: 'chair', match: 'contains' as const };
const SITWELL = '(brand:=[`Sitwell`])';

for (const version of ['30.0', '29.0']) {
  describe(`boost and bury on Typesense ${version}`, () => {
    let standIn: TypesenseStandIn;
    let services: SearchServices;
    let principal: Principal;
    beforeAll(async () => {
      const tenant = await createTenant(rest, `Typesense boost contract ${version}`);
      principal = { tenantId: tenant.id, scopes: new Set(['*']), actor: { type: 'api_key', id: 'c' } };
      standIn = await TypesenseStandIn.start(version);
      services = searchServicesOf(
        { config, db, services: appServices },
        { typesenseUrl: standIn.url, typesenseApiKey: STAND_IN_API_KEY },
      );
      await services.start();
      await services.indexes.create(principal, {
        name: 'boosted',
        alias: 'boosted',
        fields: [
          { from: 'name', to: 'name', type: 'STRING' },
          { from: 'brand', to: 'brand', type: 'STRING' },
          { from: 'price', to: 'price', type: 'NUMBER' },
          { from: 'rating', to: 'rating', type: 'NUMBER' },
          { from: 'in_stock', to: 'in_stock', type: 'BOOLEAN' },
        ],
        search_fields: ['name'],
        filters: [{ key: 'brand' }, { key: 'price' }, { key: 'in_stock' }],
        sortable_fields: ['price', 'rating'],
      } as IndexInputData);
    });
    afterAll(() => standIn.close());

    const rules = (list: RuleInputData[]) => services.indexes.replaceRules(principal, 'boosted', list);
    const sortBy = async (context: object) => {
      await services.search.searchIndex(principal, 'boosted', [context as never]);
      const body = standIn.requests.findLast((r) => r.path === '/multi_search')!.body;
      return (body as { searches: Record<string, unknown>[] }).searches[0]!;
    };

    it('without a rule the sort is as before: no _eval', async () => {
      await rules([]);
      expect((await sortBy({ q: 'chair' })).sort_by).toBe('_text_match:desc,__id:asc');
    });

    it('a boost goes after _text_match and before the id', async () => {
      await rules([{ id: 'sit', query: chairs, boost: [brand('Sitwell')] }]);
      const evalsBefore = standIn.evalSorts.length;
      expect((await sortBy({ q: 'chair' })).sort_by).toBe(`_text_match:desc,_eval([${SITWELL}:1]):desc,__id:asc`);
      expect(standIn.evalSorts.slice(evalsBefore)).toEqual([
        { eval: [{ expression: 'brand:=[`Sitwell`]', score: 1 }], order: 'DESC' },
      ]);
    });

    it('bury comes first in the _eval list at -1 (the first matching expression scores: bury wins)', async () => {
      await rules([
        {
          id: 'both',
          query: chairs,
          boost: [brand('Sitwell'), { key: 'price', operator: 'lt', values: [45] }],
          bury: [
            { key: 'in_stock', operator: 'in', values: [false] },
            { key: 'brand', operator: 'not_in', values: ['Lumo', 'Basic'] },
          ],
        },
      ]);
      const evalsBefore = standIn.evalSorts.length;
      const bury = 'in_stock:=[false] || (brand:!=[`Lumo`,`Basic`] || __has:!=[`brand`])';
      const boost = 'brand:=[`Sitwell`] || price:<45';
      expect((await sortBy({ q: 'chair' })).sort_by).toBe(
        `_text_match:desc,_eval([(${bury}):-1,(${boost}):1]):desc,__id:asc`,
      );
      expect(standIn.evalSorts.slice(evalsBefore)).toEqual([
        {
          eval: [
            { expression: bury, score: -1 },
            { expression: boost, score: 1 },
          ],
          order: 'DESC',
        },
      ]);
    });

    it('a bury alone', async () => {
      await rules([{ id: 'basic', query: chairs, bury: [brand('Basic')] }]);
      expect((await sortBy({ q: 'chair' })).sort_by).toBe(
        '_text_match:desc,_eval([(brand:=[`Basic`]):-1]):desc,__id:asc',
      );
    });

    it('with an empty query (q=*) _text_match is left out: boost orders right after the sort', async () => {
      await rules([{ id: 'page', boost: [brand('Sitwell')] }]);
      const search = await sortBy({ q: '' });
      expect(search.q).toBe('*');
      expect(search.sort_by).toBe(`_eval([${SITWELL}:1]):desc,__id:asc`);
      expect((await sortBy({ q: '', sort: ['price:asc'] })).sort_by).toBe(
        `__sort_price(missing_values: last):asc,_eval([${SITWELL}:1]):desc,__id:asc`,
      );
      expect((await sortBy({ q: '', sort: ['price:asc', 'rating:desc'] })).sort_by).toBe(
        '__sort_price(missing_values: last):asc,__sort_rating(missing_values: last):desc,' +
          `_eval([${SITWELL}:1]):desc`,
      );
    });

    it('with a sort and a query the id gives way; with two sort keys _eval gives way too', async () => {
      await rules([{ id: 'sit', query: chairs, boost: [brand('Sitwell')] }]);
      expect((await sortBy({ q: 'chair', sort: ['price:asc'] })).sort_by).toBe(
        `__sort_price(missing_values: last):asc,_text_match:desc,_eval([${SITWELL}:1]):desc`,
      );
      expect((await sortBy({ q: 'chair', sort: ['price:asc', 'rating:desc'] })).sort_by).toBe(
        '__sort_price(missing_values: last):asc,__sort_rating(missing_values: last):desc,_text_match:desc',
      );
    });

    it('pins and hides still go as pinned_hits and hidden_hits beside the _eval', async () => {
      await rules([
        { id: 'p', query: chairs, boost: [brand('Sitwell')], pin: [{ id: 'a4', position: 1 }], hide: ['a1'] },
      ]);
      expect(await sortBy({ q: 'chair' })).toMatchObject({
        sort_by: `_text_match:desc,_eval([${SITWELL}:1]):desc,__id:asc`,
        pinned_hits: 'a4:1',
        hidden_hits: 'a1',
        filter_curated_hits: true,
      });
    });

    it('an inactive rule sends no _eval', async () => {
      await rules([
        {
          id: 'later',
          query: chairs,
          boost: [brand('Sitwell')],
          active_from: new Date(Date.now() + 3600_000).toISOString(),
        },
      ]);
      expect((await sortBy({ q: 'chair' })).sort_by).toBe('_text_match:desc,__id:asc');
    });
  });
}

describe('the stand-in refuses malformed _eval sort parts as Typesense does', () => {
  let standIn: TypesenseStandIn;
  beforeAll(async () => {
    standIn = await TypesenseStandIn.start('30.0');
    const response = await fetch(`${standIn.url}/collections`, {
      method: 'POST',
      headers: { 'x-typesense-api-key': STAND_IN_API_KEY, 'content-type': 'application/json' },
      body: JSON.stringify({
        name: 'c',
        fields: [
          { name: 'brand', type: 'string', facet: true },
          { name: 'price', type: 'float' },
        ],
      }),
    });
    expect(response.status).toBe(201);
  });
  afterAll(() => standIn.close());

  const search = async (sortBy: string) => {
    const response = await fetch(`${standIn.url}/multi_search`, {
      method: 'POST',
      headers: { 'x-typesense-api-key': STAND_IN_API_KEY, 'content-type': 'application/json' },
      body: JSON.stringify({ searches: [{ collection: 'c', q: '*', sort_by: sortBy }] }),
    });
    return ((await response.json()) as { results: Record<string, unknown>[] }).results[0]!;
  };

  const cases: [string, string, { code: number; error: string }][] = [
    [
      'a score that is not an integer',
      '_eval([(brand:=[`a`]):high]):desc',
      { code: 400, error: 'Parameter `sort_by` is malformed.' },
    ],
    [
      'an unclosed expression',
      '_eval([(brand:=[`a`]:1]):desc',
      { code: 400, error: 'Parameter `sort_by` is malformed.' },
    ],
    ['no order', '_eval([(brand:=[`a`]):1])', { code: 400, error: 'Parameter `sort_by` is malformed.' }],
    ['an empty expression', '_eval([():1]):desc', { code: 400, error: 'The eval expression in sort_by is empty.' }],
    [
      'an unknown field',
      '_eval([(colour:=[`red`]):1]):desc',
      { code: 404, error: 'Error parsing eval expression in sort_by clause.' },
    ],
    [
      'two _eval parts',
      '_eval([(brand:=[`a`]):1]):desc,_eval(price:<3):desc',
      { code: 422, error: 'Only one sorting eval expression is allowed.' },
    ],
    [
      'four sort fields',
      '_text_match:desc,_eval([(brand:=[`a`]):1]):desc,price:asc,id:asc',
      { code: 422, error: 'Only upto 3 sort_by fields can be specified.' },
    ],
  ];
  for (const [what, sortBy, refusal] of cases) {
    it(`${what}: ${refusal.code}`, async () => {
      const before = standIn.evalSorts.length;
      expect(await search(sortBy)).toEqual(refusal);
      expect(standIn.evalSorts.length).toBe(before);
    });
  }

  it('accepts and records the forms Typesense accepts, a comma in a quoted value included', async () => {
    const before = standIn.evalSorts.length;
    expect(
      await search('_eval([ (brand:=[`a,b`]):-1, (price:<3 || brand:=[`(c)`]): 2 ]):desc,price:asc'),
    ).toHaveProperty('found');
    expect(await search('_eval(brand:=[`a`]):asc')).toHaveProperty('found');
    expect(standIn.evalSorts.slice(before)).toEqual([
      {
        eval: [
          { expression: 'brand:=[`a,b`]', score: -1 },
          { expression: 'price:<3 || brand:=[`(c)`]', score: 2 },
        ],
        order: 'DESC',
      },
      { eval: [{ expression: 'brand:=[`a`]', score: 1 }], order: 'ASC' },
    ]);
  });
});
