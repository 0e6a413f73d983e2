/**
 * The Typesense adapter's protocol, pinned against a stand-in that answers like Typesense v30 and
 * v29 (test/helpers/typesense-stand-in.ts), through the real `typesense` client and the search
 * services over a real database. Each test asserts the exact requests the adapter sends.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { buildApp } from '../../src/app';
import type { Principal } from '../../src/kernel/principal';
import { SearchDeliveryFailed } from '../../src/modules/search/delivery/delivery-queue';
import { TypesenseEngine } from '../../src/modules/search/engine/typesense-engine';
import type { SearchServices } from '../../src/modules/search/search.module';
import type { IndexInputData } from '../../src/modules/search/search.schemas';
import { createTenant, startTestApp, TEST_MASTER_KEY } from '../helpers/app';
import { searchServicesOf } from '../helpers/search-services';
import { STAND_IN_API_KEY, TypesenseStandIn, type RecordedRequest } from '../helpers/typesense-stand-in';

const { rest, db, config, services: appServices } = await startTestApp();
const tenant = await createTenant(rest, 'Typesense contract');
const principal: Principal = { tenantId: tenant.id, scopes: new Set(['*']), actor: { type: 'api_key', id: 'c' } };

function servicesFor(standIn: TypesenseStandIn, backgroundErrors: unknown[] = []): SearchServices {
  return searchServicesOf(
    { config, db, services: appServices },
    {
      typesenseUrl: standIn.url,
      typesenseApiKey: STAND_IN_API_KEY,
      config: { searchDelivery: { backoffMs: 20, maxBackoffMs: 100 } },
      onBackgroundError: (error) => backgroundErrors.push(error),
    },
  );
}

const COLLECTION = /^idx_[0-9a-f]{32}_v\d+_[0-9a-f]{8}$/;

/** Every search parameter the adapter sends for a plain query on `name`, before a feature changes some. */
const plainSearch = (collection: string, q: string) => ({
  collection,
  q,
  query_by: 'name',
  query_by_weights: '15',
  prefix: true,
  max_candidates: 100,
  num_typos: 2,
  min_len_1typo: 5,
  min_len_2typo: 9,
  enable_typos_for_numerical_tokens: false,
  typo_tokens_threshold: 100,
  drop_tokens_threshold: 1,
  prioritize_exact_match: true,
  prioritize_token_position: false,
  offset: 0,
  limit: 10,
  highlight_full_fields: 'name',
  highlight_start_tag: '<mark>',
  highlight_end_tag: '</mark>',
  enable_highlight_v1: false,
  sort_by: '_text_match:desc,__id:asc',
});

const products = [
  { id: 'p1', name: 'Desk lamp', brand: 'Lumo', price: 25.5, tags: ['desk', 'light'] },
  { id: 'p2', name: 'Office chair', brand: 'Sitwell', price: 150 },
];
const typedFields: IndexInputData['fields'] = [
  { from: 'name', to: 'name', type: 'STRING' },
  { from: 'brand', to: 'brand', type: 'STRING' },
  { from: 'price', to: 'price', type: 'NUMBER' },
  { from: 'tags', to: 'tags', type: 'STRING' },
];

let counter = 0;

for (const version of ['30.0', '29.0']) {
  const v30 = version === '30.0';
  describe(`Typesense ${version}`, () => {
    let standIn: TypesenseStandIn;
    let services: SearchServices;
    const backgroundErrors: unknown[] = [];

    beforeAll(async () => {
      standIn = await TypesenseStandIn.start(version);
      services = servicesFor(standIn, backgroundErrors);
      await services.start();
    });
    afterAll(async () => {
      await standIn.close();
      expect(backgroundErrors).toEqual([]);
    });

    /** Creates an index through the services; returns its alias in Typesense and the requests it sent. */
    async function create(settings: Partial<IndexInputData>) {
      const alias = `contract-${++counter}`;
      const from = standIn.requests.length;
      const record = await services.indexes.create(principal, { name: alias, alias, ...settings } as IndexInputData);
      const typesenseAlias = `idx_${record.id.replaceAll('-', '')}`;
      return { alias, typesenseAlias, requests: standIn.requests.slice(from) };
    }
    /** The services of another process of the deployment, with an engine of its own. */
    let processes = 1;
    const otherProcess = (failures: unknown[] = []) => {
      processes += 1;
      return servicesFor(standIn, failures);
    };
    const collectionOf = (typesenseAlias: string, server = standIn) => server.aliases.get(typesenseAlias)!;
    const since = (from: number) => standIn.requests.slice(from);
    const lastSearchRequest = () =>
      standIn.requests.findLast((r) => r.path === '/multi_search')!.body as { searches: Record<string, unknown>[] };
    const lastSearch = () => (standIn.requests.findLast((r) => r.path === '/multi_search')!.body as any).searches[0];

    it('reads the server version once, at start', () => {
      expect(standIn.requests[0]).toEqual({ method: 'GET', path: '/debug', query: {}, body: undefined });
    });

    it('creates an index: its sets first, then a collection with every field typed, then the alias', async () => {
      const { typesenseAlias, requests } = await create({
        fields: typedFields,
        filters: [{ key: 'brand' }, { key: 'price' }],
        facet_fields: ['brand'],
        search_fields: ['name'],
        synonyms: [{ synonyms: ['sofa', 'couch'] }, { root: 'tv', synonyms: ['television'] }],
        stop_words: ['the'],
        ranking_rules: ['words', 'price:asc'],
      });
      const name = collectionOf(typesenseAlias);
      expect(name).toMatch(COLLECTION);
      const items = [
        { id: 'synonym-0', synonyms: ['sofa', 'couch'] },
        { id: 'synonym-1', synonyms: ['television'], root: 'tv' },
      ];
      const schema = {
        name,
        fields: [
          { name: 'name', type: 'string[]', optional: true },
          { name: 'brand', type: 'string[]', optional: true, facet: true },
          { name: 'price', type: 'float', optional: true, sort: true },
          // NUMBER fields are sortable by default: query sorts use a single-valued copy.
          { name: '__sort_price', type: 'float', optional: true, sort: true },
          { name: 'tags', type: 'string[]', optional: true, index: false },
          { name: '__has', type: 'string[]', optional: true },
          { name: '__id', type: 'string', sort: true },
          { name: '__values', type: 'string', optional: true, index: false },
          { name: '__metadata', type: 'string', optional: true, index: false },
        ],
      };
      const expected: Omit<RecordedRequest, 'query'>[] = [
        { method: 'GET', path: `/aliases/${typesenseAlias}`, body: undefined },
        ...(v30 ? [{ method: 'PUT', path: `/synonym_sets/${name}_synonyms`, body: { items } }] : []),
        { method: 'PUT', path: `/stopwords/${name}_stopwords`, body: { stopwords: ['the'] } },
        {
          method: 'POST',
          path: '/collections',
          body: v30 ? { ...schema, synonym_sets: [`${name}_synonyms`] } : schema,
        },
        ...(v30
          ? []
          : items.map(({ id, ...synonym }) => ({
              method: 'PUT',
              path: `/collections/${name}/synonyms/${id}`,
              body: synonym,
            }))),
        { method: 'PUT', path: `/aliases/${typesenseAlias}`, body: { collection_name: name } },
      ];
      expect(requests.map(({ method, path, body }) => ({ method, path, body }))).toEqual(expected);
      expect(standIn.collections.get(name)!.schema.synonym_sets).toEqual(v30 ? [`${name}_synonyms`] : undefined);
    });

    it('upserts JSON lines: arrays for multi-valued fields, the values as sent, an id to sort by', async () => {
      const { alias, typesenseAlias } = await create({
        fields: typedFields,
        facet_fields: ['brand', 'price'],
        ranking_rules: ['price:desc'],
      });
      const from = standIn.requests.length;
      await services.indexes.upsertDocuments(principal, alias, [
        { ...products[0], metadata: { url: 'https://shop.example/p1' } },
        products[1],
      ]);
      expect(since(from)).toEqual([
        { method: 'GET', path: `/aliases/${typesenseAlias}`, query: {}, body: undefined },
        {
          method: 'POST',
          path: `/collections/${collectionOf(typesenseAlias)}/documents/import`,
          // The client sends its own `throwOnFail` option along; Typesense ignores it.
          query: { action: 'upsert', throwOnFail: 'true' },
          body: [
            {
              id: 'p1',
              __id: 'p1',
              name: ['Desk lamp'],
              brand: ['Lumo'],
              price: 25.5,
              __text_price: ['25.5'],
              __sort_price: 25.5,
              tags: ['desk', 'light'],
              __has: ['*', 'brand', 'price'],
              __values: JSON.stringify({ name: 'Desk lamp', brand: 'Lumo', price: 25.5, tags: ['desk', 'light'] }),
              __metadata: '{"url":"https://shop.example/p1"}',
            },
            {
              id: 'p2',
              __id: 'p2',
              name: ['Office chair'],
              brand: ['Sitwell'],
              price: 150,
              __text_price: ['150'],
              __sort_price: 150,
              __has: ['*', 'brand', 'price'],
              __values: JSON.stringify({ name: 'Office chair', brand: 'Sitwell', price: 150, tags: null }),
            },
          ],
        },
      ]);
      expect(standIn.collections.get(collectionOf(typesenseAlias))!.documents.size).toBe(2);
    });

    it('new field types make a new collection behind the alias, filled from PostgreSQL; the old one goes', async () => {
      const { alias, typesenseAlias } = await create({ synonyms: [{ synonyms: ['sofa', 'couch'] }] });
      const first = collectionOf(typesenseAlias);
      expect(standIn.collections.get(first)!.schema.fields.map((field) => field.name)).toEqual([
        '__has',
        '__id',
        '__values',
        '__metadata',
      ]);
      const from = standIn.requests.length;
      await services.indexes.upsertDocuments(principal, alias, [{ id: 'a', name: 'Sofa', price: 10 }]);
      const second = collectionOf(typesenseAlias);
      expect(second).not.toBe(first);
      expect(standIn.collections.get(second)!.schema.fields.slice(0, 2)).toEqual([
        { name: 'name', type: 'string[]', optional: true },
        { name: 'price', type: 'float[]', optional: true, index: false },
      ]);
      expect(standIn.collections.has(first)).toBe(false);
      expect(standIn.lines(from)).toEqual([
        `GET /aliases/${typesenseAlias}`,
        ...(v30 ? [`PUT /synonym_sets/${second}_synonyms`] : []),
        'POST /collections',
        ...(v30 ? [] : [`PUT /collections/${second}/synonyms/synonym-0`]),
        `POST /collections/${second}/documents/import`,
        `PUT /aliases/${typesenseAlias}`,
        `DELETE /collections/${first}`,
        ...(v30 ? [`DELETE /synonym_sets/${first}_synonyms`, `DELETE /synonym_sets/${first}_synonyms_index`] : []),
        `DELETE /stopwords/${first}_stopwords`,
      ]);
      if (v30) expect([...standIn.synonymSets.keys()]).not.toContain(`${first}_synonyms`);
    });

    it('a definition change fills a new collection, then moves the alias and drops the old sets', async () => {
      const { alias, typesenseAlias } = await create({ fields: typedFields, stop_words: ['the'] });
      await services.indexes.upsertDocuments(principal, alias, products);
      const first = collectionOf(typesenseAlias);
      // A server upgraded to v30 turned the collection's synonyms into a set of its own.
      if (v30) standIn.synonymSets.set(`${first}_synonyms_index`, { items: [] });
      const from = standIn.requests.length;
      await services.indexes.replace(principal, alias, {
        name: alias,
        fields: typedFields,
        stop_words: ['a'],
      } as IndexInputData);
      await vi.waitFor(() => expect(collectionOf(typesenseAlias)).not.toBe(first));
      const second = collectionOf(typesenseAlias);
      await vi.waitFor(() => expect(standIn.lines(from)).toContain(`DELETE /stopwords/${first}_stopwords`));
      expect(standIn.lines(from)).toEqual([
        `GET /aliases/${typesenseAlias}`,
        `PUT /stopwords/${second}_stopwords`,
        'POST /collections',
        `POST /collections/${second}/documents/import`,
        `PUT /aliases/${typesenseAlias}`,
        `DELETE /collections/${first}`,
        ...(v30 ? [`DELETE /synonym_sets/${first}_synonyms`, `DELETE /synonym_sets/${first}_synonyms_index`] : []),
        `DELETE /stopwords/${first}_stopwords`,
      ]);
      expect(standIn.collections.get(second)!.documents.size).toBe(2);
      expect([...standIn.stopwordSets.keys()]).not.toContain(`${first}_stopwords`);
      expect([...standIn.synonymSets.keys()]).not.toContain(`${first}_synonyms_index`);
    });

    it('clearing fills an empty collection; deleting the index removes alias, collection and sets', async () => {
      const { alias, typesenseAlias } = await create({ fields: typedFields, stop_words: ['the'] });
      await services.indexes.upsertDocuments(principal, alias, products);
      const first = collectionOf(typesenseAlias);
      await services.indexes.clearDocuments(principal, alias);
      const second = collectionOf(typesenseAlias);
      expect(second).not.toBe(first);
      expect(standIn.collections.get(second)!.documents.size).toBe(0);
      expect(standIn.collections.has(first)).toBe(false);

      const from = standIn.requests.length;
      await services.indexes.remove(principal, alias);
      expect(standIn.lines(from)).toEqual([
        `GET /aliases/${typesenseAlias}`,
        `DELETE /aliases/${typesenseAlias}`,
        `DELETE /collections/${second}`,
        ...(v30 ? [`DELETE /synonym_sets/${second}_synonyms`, `DELETE /synonym_sets/${second}_synonyms_index`] : []),
        `DELETE /stopwords/${second}_stopwords`,
      ]);
      expect(standIn.aliases.has(typesenseAlias)).toBe(false);
      expect(standIn.collections.has(second)).toBe(false);
      expect(standIn.stopwordSets.has(`${second}_stopwords`)).toBe(false);
    });

    it('deletes documents by an id filter, an id with a backtick on its own; patches as an upsert', async () => {
      const { alias, typesenseAlias } = await create({ fields: typedFields });
      await services.indexes.upsertDocuments(principal, alias, [
        ...products,
        { id: 'odd`id', name: 'Odd' },
        { id: 'p3', name: 'Floor lamp', brand: 'Lumo', price: 80 },
      ]);
      const collection = collectionOf(typesenseAlias);
      let from = standIn.requests.length;
      await services.indexes.deleteDocuments(principal, alias, { ids: ['p1', 'odd`id', 'gone'], filters: [] });
      expect(since(from)).toEqual([
        { method: 'GET', path: `/aliases/${typesenseAlias}`, query: {}, body: undefined },
        {
          method: 'DELETE',
          path: `/collections/${collection}/documents`,
          query: { filter_by: 'id:[`p1`]', batch_size: '1000' },
          body: undefined,
        },
        { method: 'DELETE', path: `/collections/${collection}/documents/odd\`id`, query: {}, body: undefined },
      ]);
      expect([...standIn.collections.get(collection)!.documents.keys()].sort()).toEqual(['p2', 'p3']);

      from = standIn.requests.length;
      await services.indexes.patchDocuments(principal, alias, [{ id: 'p3', price: 70, brand: null }]);
      expect(standIn.lines(from)).toEqual([
        `GET /aliases/${typesenseAlias}`,
        `POST /collections/${collection}/documents/import`,
      ]);
      expect(standIn.collections.get(collection)!.documents.get('p3')).toMatchObject({
        name: ['Floor lamp'],
        __values: JSON.stringify({ name: 'Floor lamp', brand: null, price: 70, tags: null }),
      });
      expect(standIn.collections.get(collection)!.documents.get('p3')).not.toHaveProperty('brand');
    });

    describe('searches go out as one multi_search POST', () => {
      let index: Awaited<ReturnType<typeof create>>;
      let collection: string;
      const search = (context: Record<string, unknown>) =>
        services.search.searchIndex(principal, index.alias, [context as never]);

      beforeAll(async () => {
        index = await create({
          fields: typedFields,
          filters: [{ key: 'brand' }, { key: 'price' }],
          search_fields: ['name'],
          stop_words: ['the', 'a'],
          ranking_rules: ['words', 'typo', 'proximity', 'attribute', 'exactness'],
        });
        await services.indexes.upsertDocuments(principal, index.alias, products);
        collection = collectionOf(index.typesenseAlias);
      });

      it('a query: prefix on the last word, typo budget, threshold, paging, highlighting, ties by id', async () => {
        const from = standIn.requests.length;
        await search({ q: 'desk la', limit: 5, offset: 5, threshold: 3 });
        const [request] = since(from);
        expect(request).toMatchObject({ method: 'POST', path: '/multi_search', query: {} });
        expect(request!.body).toEqual({
          searches: [
            {
              ...plainSearch(collection, 'desk la'),
              limit: 5,
              offset: 5,
              drop_tokens_threshold: 3,
              stopwords: `${collection}_stopwords`,
            },
          ],
        });
      });

      it('a query ending with a space: no prefix; a query of stop words only: searched as typed', async () => {
        await search({ q: 'desk ' });
        expect(lastSearch()).toMatchObject({ q: 'desk ', prefix: false, stopwords: `${collection}_stopwords` });
        await search({ q: 'the a' });
        expect(lastSearch()).toEqual(plainSearch(collection, 'the a'));
      });

      it('filters as filter_by, facets with the original text of numbers, an empty query as *', async () => {
        await search({
          filters: [
            { key: 'brand', operator: 'in', values: ['Lumo', 'Sit`well'] },
            { key: 'price', operator: 'gte', values: ['20'] },
            { key: 'price', operator: 'lt', values: [200] },
          ],
          facets: ['brand', 'price'],
        });
        expect(lastSearch()).toEqual({
          ...plainSearch(collection, '*'),
          filter_by: 'brand:=[`Lumo`,`Sitwell`] && price:>=20 && price:<200',
          facet_by: 'brand,price,__text_price',
          max_facet_values: 100,
        });
      });

      it('boolean filters in parentheses; disjunctive facets as one more search per facet in the same POST', async () => {
        const answer = standIn.answerSearch;
        standIn.answerSearch = (search) => ({
          found: 1,
          hits: [],
          facet_counts: String(search.facet_by)
            .split(',')
            .map((field) => ({
              field_name: field,
              counts:
                search.limit === 0
                  ? [
                      { value: 'Lumo', count: 1 },
                      { value: 'Sitwell', count: 3 },
                    ]
                  : [{ value: 'Lumo', count: 1 }],
            })),
        });
        try {
          const from = standIn.requests.length;
          const [entry] = await search({
            filters: [
              { key: 'brand', operator: 'in', values: ['Lumo'] },
              {
                any: [
                  { key: 'price', operator: 'not_exists' },
                  {
                    all: [
                      { key: 'price', operator: 'lt', values: [50] },
                      { key: 'brand', operator: 'not_in', values: ['x'] },
                    ],
                  },
                ],
              },
            ],
            facets: ['brand'],
            disjunctive_facets: true,
          });
          const [request] = since(from);
          const { searches } = request!.body as { searches: Record<string, unknown>[] };
          const filterBy = '(__has:!=[`price`] || (price:<50 && (brand:!=[`x`] || __has:!=[`brand`])))';
          expect(searches).toEqual([
            {
              ...plainSearch(collection, '*'),
              filter_by: `brand:=[\`Lumo\`] && ${filterBy}`,
              facet_by: 'brand',
              max_facet_values: 100,
            },
            {
              ...plainSearch(collection, '*'),
              filter_by: filterBy,
              facet_by: 'brand',
              max_facet_values: 100,
              limit: 0,
            },
          ]);
          expect(entry!.results[0]!.facets).toEqual({ brand: { Lumo: 1, Sitwell: 3 } });
        } finally {
          standIn.answerSearch = answer;
        }
      });

      it('facet_query as one more hit-less search with facet_query; a NUMBER facet by its text copy', async () => {
        const answer = standIn.answerSearch;
        standIn.answerSearch = (search) => ({
          found: 2,
          hits: [],
          facet_counts: search.facet_query
            ? [
                {
                  field_name: 'brand',
                  counts: [
                    { value: 'Lumo', count: 1 },
                    { value: 'Lux', count: 4 },
                  ],
                },
              ]
            : [],
        });
        try {
          const from = standIn.requests.length;
          const [entry] = await search({
            q: 'lamp',
            filters: [{ key: 'price', operator: 'lt', values: [100] }],
            facet_query: { field: 'brand', q: 'lu' },
          });
          const { searches } = since(from)[0]!.body as { searches: Record<string, unknown>[] };
          expect(searches).toHaveLength(2);
          expect(searches[1]).toEqual({
            ...plainSearch(collection, 'lamp'),
            filter_by: 'price:<100',
            facet_by: 'brand',
            max_facet_values: 100,
            limit: 0,
            facet_query: 'brand:lu',
            stopwords: `${collection}_stopwords`,
          });
          expect(entry!.results[0]!.facet_hits).toEqual([
            { value: 'Lux', count: 4 },
            { value: 'Lumo', count: 1 },
          ]);
          await search({ facet_query: { field: 'price', q: '2' } });
          expect(lastSearchRequest().searches[1]).toMatchObject({
            facet_by: 'price,__text_price',
            facet_query: '__text_price:2',
          });
        } finally {
          standIn.answerSearch = answer;
        }
      });

      it('a merchandising rule as pinned_hits and hidden_hits, filtered like the other hits', async () => {
        await services.indexes.replaceRules(principal, index.alias, [
          { id: 'r', query: { text: 'lamp', match: 'exact' }, pin: [{ id: 'p2', position: 1 }], hide: ['p1', 'x'] },
        ]);
        try {
          await search({ q: 'lamp' });
          expect(lastSearch()).toEqual({
            ...plainSearch(collection, 'lamp'),
            stopwords: `${collection}_stopwords`,
            pinned_hits: 'p2:1',
            hidden_hits: 'p1,x',
            filter_curated_hits: true,
          });
          await search({ q: 'desk lamp' });
          expect(lastSearch()).not.toHaveProperty('pinned_hits');
        } finally {
          await services.indexes.replaceRules(principal, index.alias, []);
        }
      });

      it('filter values long past the 4 000 characters of a query string travel in the body', async () => {
        const values = Array.from({ length: 100 }, (_, i) => `brand-${i}-${'x'.repeat(40)}`);
        await search({ filters: [{ key: 'brand', operator: 'in', values }] });
        const request = standIn.requests.at(-1)!;
        expect(request).toMatchObject({ method: 'POST', path: '/multi_search', query: {} });
        expect(String(lastSearch().filter_by).length).toBeGreaterThan(4_000);
      });

      it('maps hits, highlights of single and array values, facets and stats from the response', async () => {
        standIn.answerSearch = () => ({
          found: 1,
          out_of: 2,
          page: 1,
          search_time_ms: 1,
          request_params: {},
          hits: [
            {
              document: {
                id: 'p1',
                __id: 'p1',
                name: ['Desk <lamp>'],
                __values: JSON.stringify({ name: 'Desk <lamp>', brand: 'Lumo', price: 25.5 }),
              },
              highlight: {
                name: [
                  { matched_tokens: ['lamp'], snippet: 'Desk <<mark>lamp</mark>>', value: 'Desk <<mark>lamp</mark>>' },
                ],
              },
              text_match: 100,
            },
          ],
          facet_counts: [
            {
              field_name: 'brand',
              counts: [{ value: 'Lumo', count: 1, highlighted: 'Lumo' }],
              sampled: false,
              stats: { total_values: 1 },
            },
            {
              field_name: 'price',
              counts: [{ value: '25.5', count: 1, highlighted: '25.5' }],
              sampled: false,
              stats: { min: 25.5, max: 25.5, avg: 25.5, sum: 25.5, total_values: 1 },
            },
            {
              field_name: '__text_price',
              counts: [{ value: '25.5', count: 1, highlighted: '25.5' }],
              sampled: false,
              stats: { total_values: 1 },
            },
          ],
        });
        try {
          const [entry] = await search({ q: 'lamp', facets: ['brand', 'price'] });
          const result = entry!.results[0]!;
          expect(result.count).toBe(1);
          expect(result.facets).toEqual({ brand: { Lumo: 1 }, price: { '25.5': 1 } });
          expect(result.facets_stats).toEqual({ price: { min: 25.5, max: 25.5, avg: 25.5, sum: 25.5 } });
          expect(result.hits[0]).toMatchObject({
            id: 'p1',
            name: 'Desk <lamp>',
            price: 25.5,
            _highlightResult: {
              name: { value: 'Desk &lt;<mark>lamp</mark>&gt;', matchLevel: 'full', matchedWords: ['lamp'] },
            },
          });
        } finally {
          standIn.answerSearch = () => ({ found: 0, hits: [], facet_counts: [] });
        }
      });

      it('a search refused inside a multi_search is an error', async () => {
        standIn.answerSearch = () => ({ code: 400, error: 'Could not find a field named `nope` in the schema.' });
        try {
          await expect(search({ q: 'lamp' })).rejects.toThrow(/Typesense refused the search \(400\).*nope/);
        } finally {
          standIn.answerSearch = () => ({ found: 0, hits: [], facet_counts: [] });
        }
      });
    });

    it('distinct: group_by one per group, documents without the field not grouped together', async () => {
      const { alias, typesenseAlias } = await create({ fields: typedFields, distinct_field: 'brand' });
      await services.search.searchIndex(principal, alias, [{ q: '' } as never]);
      expect(lastSearch()).toEqual({
        ...plainSearch(collectionOf(typesenseAlias), '*'),
        prioritize_exact_match: true,
        query_by: 'name,brand,tags',
        query_by_weights: '15,14,13',
        highlight_full_fields: 'name,brand,tags',
        group_by: 'brand',
        group_limit: 1,
        group_missing_values: false,
        ...(v30 ? { group_max_candidates: 10_000 } : {}),
      });
      expect(standIn.collections.get(collectionOf(typesenseAlias))!.schema.fields[1]).toEqual({
        name: 'brand',
        type: 'string',
        optional: true,
        facet: true,
      });
    });

    it('ranking: sort rules with missing values last, equal field weights without the attribute rule', async () => {
      const { alias, typesenseAlias } = await create({
        fields: typedFields,
        search_fields: ['name', 'brand'],
        ranking_rules: ['price:asc', 'words', 'typo'],
      });
      await services.search.searchIndex(principal, alias, [{ q: 'lamp' } as never]);
      expect(lastSearch()).toEqual({
        ...plainSearch(collectionOf(typesenseAlias), 'lamp'),
        query_by: 'name,brand',
        query_by_weights: '1,1',
        highlight_full_fields: 'name,brand',
        prioritize_exact_match: false,
        sort_by: 'price(missing_values: last):asc,_text_match:desc,__id:asc',
      });
    });

    it('query sorts go first in sort_by, on single-valued copies of the sortable fields', async () => {
      const { alias, typesenseAlias } = await create({
        fields: [...typedFields!, { from: 'in_stock', to: 'in_stock', type: 'BOOLEAN' }],
        sortable_fields: ['price', 'in_stock', 'brand'],
      });
      await services.indexes.upsertDocuments(principal, alias, [
        { id: 'p1', name: 'Desk lamp', brand: ['Lumo', 'Other'], price: [25, 10], in_stock: true },
        { id: 'p2', name: 'Office chair' },
      ]);
      const collection = standIn.collections.get(collectionOf(typesenseAlias))!;
      expect(collection.schema.fields.filter((field) => field.name.startsWith('__sort_'))).toEqual([
        { name: '__sort_brand', type: 'string', optional: true, sort: true },
        { name: '__sort_price', type: 'float', optional: true, sort: true },
        { name: '__sort_in_stock', type: 'int32', optional: true, sort: true },
      ]);
      expect(collection.documents.get('p1')).toMatchObject({
        __sort_price: 25,
        __sort_brand: 'Lumo',
        __sort_in_stock: 1,
      });
      expect(collection.documents.get('p2')).not.toHaveProperty('__sort_price');
      await services.search.searchIndex(principal, alias, [{ q: 'lamp', sort: ['in_stock:desc'] } as never]);
      expect(lastSearch().sort_by).toBe('__sort_in_stock(missing_values: last):desc,_text_match:desc,__id:asc');
      await services.search.searchIndex(principal, alias, [{ q: 'lamp', sort: ['price:asc', 'brand:desc'] } as never]);
      expect(lastSearch().sort_by).toBe(
        '__sort_price(missing_values: last):asc,__sort_brand(missing_values: last):desc,_text_match:desc',
      );
    });

    it('fields settings name before any document shows them are declared: searches are accepted', async () => {
      const { alias, typesenseAlias } = await create({
        search_fields: ['name', 'title'],
        filters: [{ key: 'color' }],
        ranking_rules: ['rank:asc', 'words'],
      });
      await services.indexes.upsertDocuments(principal, alias, [{ id: 'a', name: 'Desk lamp' }]);
      const [entry] = await services.search.searchIndex(principal, alias, [
        { q: 'lamp', filters: [{ key: 'color', operator: 'in', values: ['red'] }], facets: ['color'] } as never,
      ]);
      expect(entry!.results[0]!.count).toBe(0);
      expect(standIn.collections.get(collectionOf(typesenseAlias))!.schema.fields.slice(0, 4)).toEqual([
        { name: 'name', type: 'string[]', optional: true },
        { name: 'title', type: 'string[]', optional: true },
        { name: 'color', type: 'string[]', optional: true, facet: true },
        { name: 'rank', type: 'string', optional: true, sort: true },
      ]);
      expect(lastSearch()).toMatchObject({
        query_by: 'name,title',
        filter_by: 'color:=[`red`]',
        facet_by: 'color',
        sort_by: 'rank(missing_values: last):asc,_text_match:desc,__id:asc',
      });
    });

    it('a search of an index without a collection builds it, then searches again', async () => {
      const { alias, typesenseAlias } = await create({ fields: typedFields });
      const first = collectionOf(typesenseAlias);
      standIn.aliases.delete(typesenseAlias);
      standIn.collections.delete(first);
      const from = standIn.requests.length;
      await services.search.searchIndex(principal, alias, [{ q: 'lamp' } as never]);
      expect(standIn.lines(from)).toEqual([
        'POST /multi_search',
        `GET /aliases/${typesenseAlias}`,
        'POST /collections',
        `PUT /aliases/${typesenseAlias}`,
        'POST /multi_search',
      ]);
    });

    it('a search after another process moved the alias looks it up again, once', async () => {
      const { alias, typesenseAlias } = await create({ fields: typedFields });
      await services.search.searchIndex(principal, alias, [{ q: 'lamp' } as never]);
      const first = collectionOf(typesenseAlias);
      await otherProcess().indexes.clearDocuments(principal, alias);
      const second = collectionOf(typesenseAlias);
      const from = standIn.requests.length;
      await services.search.searchIndex(principal, alias, [{ q: 'lamp' } as never]);
      expect(standIn.lines(from)).toEqual([
        'POST /multi_search',
        `GET /aliases/${typesenseAlias}`,
        'POST /multi_search',
      ]);
      expect(standIn.requests.slice(from).map((request) => (request.body as any)?.searches?.[0]?.collection)).toEqual([
        first,
        undefined,
        second,
      ]);
    });

    it('a search that needs a change whose delivery failed is refused, not rebuilt on the way', async () => {
      const { alias, typesenseAlias } = await create({ fields: typedFields, search_fields: ['name'] });
      const failures: unknown[] = [];
      standIn.fail('POST', /^\/collections$/, 500, { message: 'Internal error' }, 3);
      await otherProcess(failures).indexes.replace(principal, alias, {
        name: alias,
        fields: [...typedFields!, { from: 'color', to: 'color', type: 'STRING' }],
        search_fields: ['name', 'color'],
      } as IndexInputData);
      await vi.waitFor(() => expect(failures).toHaveLength(1));
      const from = standIn.requests.length;
      await expect(services.search.searchIndex(principal, alias, [{ q: 'lamp' } as never])).rejects.toThrow(
        'Typesense refused the search (404): Could not find a field named `color` in the schema.',
      );
      expect(standIn.lines(from)).toEqual(['POST /multi_search', `GET /aliases/${typesenseAlias}`]);
      expect((await services.indexes.get(principal, alias)).has_pending_updates).toBe(true);
    });

    it('a collection left by an earlier release is rebuilt by the first search that fails on it', async () => {
      const earlier = await TypesenseStandIn.start(version);
      try {
        const alias = `contract-${++counter}`;
        const record = await servicesFor(earlier).indexes.create(principal, {
          name: alias,
          alias,
          fields: typedFields,
          stop_words: ['the'],
        } as IndexInputData);
        await servicesFor(earlier).indexes.upsertDocuments(principal, alias, products);
        // What it left: `<alias>_v<version>` with an auto-typed field, and one stopwords set per index.
        const typesenseAlias = `idx_${record.id.replaceAll('-', '')}`;
        const old = `${typesenseAlias}_v2`;
        earlier.collections.clear();
        earlier.stopwordSets.clear();
        earlier.collections.set(old, {
          schema: {
            name: old,
            fields: [
              { name: '__metadata', type: 'string', optional: true, index: false },
              { name: '.*', type: 'auto', optional: true },
            ],
          },
          documents: new Map(),
          synonyms: new Map(),
          createdAt: 0,
        });
        earlier.aliases.set(typesenseAlias, old);
        earlier.stopwordSets.set(`${typesenseAlias}_stopwords`, { stopwords: ['the'] });

        const from = earlier.requests.length;
        const [entry] = await servicesFor(earlier).search.searchIndex(principal, alias, [{ q: 'lamp' } as never]);
        expect(entry!.results[0]!.count).toBe(0);
        const rebuilt = collectionOf(typesenseAlias, earlier);
        expect(rebuilt).toMatch(COLLECTION);
        expect(earlier.lines(from)).toEqual([
          `GET /aliases/${typesenseAlias}`,
          'GET /debug',
          'POST /multi_search',
          `GET /aliases/${typesenseAlias}`,
          `PUT /stopwords/${rebuilt}_stopwords`,
          'POST /collections',
          `POST /collections/${rebuilt}/documents/import`,
          `PUT /aliases/${typesenseAlias}`,
          `DELETE /collections/${old}`,
          ...(v30 ? [`DELETE /synonym_sets/${old}_synonyms`, `DELETE /synonym_sets/${old}_synonyms_index`] : []),
          `DELETE /stopwords/${old}_stopwords`,
          `DELETE /stopwords/${typesenseAlias}_stopwords`,
          'POST /multi_search',
        ]);
        expect([...earlier.stopwordSets.keys()]).toEqual([`${rebuilt}_stopwords`]);
      } finally {
        await earlier.close();
      }
    });

    describe('failures', () => {
      /** Delivers the index's pending changes once they are due again. */
      const deliverWhenDue = async (alias: string) => {
        const { id } = await services.indexes.get(principal, alias);
        await vi.waitFor(async () => expect(await services.deliveries!.deliver(id)).toBe('delivered'));
      };
      /** The failures reported since the last call: what each delivery failed with. */
      const reportedFailures = () =>
        backgroundErrors.splice(0).map((error) => {
          expect(error).toBeInstanceOf(SearchDeliveryFailed);
          return ((error as SearchDeliveryFailed).cause as Error).message;
        });

      it('an import with failed lines fails the delivery, not the write: it is kept and tried again', async () => {
        const { alias } = await create({ fields: typedFields });
        standIn.fail(
          'POST',
          /\/documents\/import$/,
          200,
          [
            { success: true },
            { code: 400, document: '{"id":"p2"}', error: 'Field `price` must be a float.', success: false },
          ]
            .map((line) => JSON.stringify(line))
            .join('\n'),
        );
        await services.indexes.upsertDocuments(principal, alias, products);
        const refused = 'Typesense refused 1 of 2 documents; the first: Field `price` must be a float.';
        expect(reportedFailures()).toEqual([refused]);
        const { id, has_pending_updates } = await services.indexes.get(principal, alias);
        expect(has_pending_updates).toBe(true);
        expect(
          await db.$queryRaw`SELECT attempts, last_error FROM search_deliveries WHERE index_id = ${id}::uuid`,
        ).toEqual([{ attempts: 1, last_error: refused }]);
        await deliverWhenDue(alias);
        expect((await services.indexes.get(principal, alias)).has_pending_updates).toBe(false);
        expect(await db.$queryRaw`SELECT 1 FROM search_deliveries WHERE index_id = ${id}::uuid`).toEqual([]);
      });

      it('a 503 while rebuilding is retried; one that lasts fails the delivery and leaves the alias', async () => {
        // Without declared fields, the first documents bring field types: the collection is rebuilt with them.
        const { alias, typesenseAlias } = await create({});
        const notReady = { message: 'Not Ready or Lagging' };
        standIn.fail('POST', /\/documents\/import$/, 503, notReady, 1);
        let from = standIn.requests.length;
        await services.indexes.upsertDocuments(principal, alias, products);
        const rebuilt = collectionOf(typesenseAlias);
        expect(standIn.lines(from).filter((line) => line.endsWith('/import'))).toEqual([
          `POST /collections/${rebuilt}/documents/import`,
          `POST /collections/${rebuilt}/documents/import`,
        ]);
        expect(standIn.collections.get(rebuilt)!.documents.size).toBe(2);

        standIn.fail('POST', /\/documents\/import$/, 503, notReady, 3);
        from = standIn.requests.length;
        const withColor = { id: 'p3', name: 'Red sofa', color: 'red' };
        await services.indexes.upsertDocuments(principal, alias, [withColor]);
        expect(reportedFailures()).toEqual(['Request failed with HTTP code 503 | Server said: Not Ready or Lagging']);
        const imports = standIn.requests.slice(from).filter((request) => request.path.endsWith('/import'));
        expect(imports).toHaveLength(3);
        const halfBuilt = imports[0]!.path.split('/')[2]!;
        expect(halfBuilt).not.toBe(rebuilt);
        expect(collectionOf(typesenseAlias)).toBe(rebuilt);
        expect([...standIn.collections.keys()]).not.toContain(halfBuilt);
        // The failed delivery is tried again, with no further change: a rebuild with every stored document.
        await deliverWhenDue(alias);
        expect(standIn.collections.get(collectionOf(typesenseAlias))!.documents.size).toBe(3);
      });

      it('a set that is already gone (404) is not an error when a collection is dropped', async () => {
        const { alias, typesenseAlias } = await create({ fields: typedFields });
        const current = collectionOf(typesenseAlias);
        const from = standIn.requests.length;
        await services.indexes.remove(principal, alias);
        const answers = standIn.requests.slice(from).filter((request) => request.path.includes(current));
        expect(answers.map((request) => `${request.method} ${request.path}`)).toEqual([
          `DELETE /collections/${current}`,
          ...(v30
            ? [`DELETE /synonym_sets/${current}_synonyms`, `DELETE /synonym_sets/${current}_synonyms_index`]
            : []),
          `DELETE /stopwords/${current}_stopwords`,
        ]);
      });
    });

    it('each process read the server version once', () => {
      expect(standIn.lines().filter((line) => line === 'GET /debug')).toHaveLength(processes);
    });
  });
}

describe('servers outside the supported range', () => {
  it('stop the service from starting, with the reason', async () => {
    const standIn = await TypesenseStandIn.start('28.0');
    const { app } = await buildApp({
      config: { ...config, typesenseUrl: standIn.url, typesenseApiKey: STAND_IN_API_KEY },
      db,
      masterKey: TEST_MASTER_KEY,
      backgroundWorkers: false,
    });
    try {
      await expect(app.ready()).rejects.toThrow('Typesense server version 28.0 is not supported');
    } finally {
      await app.close();
      await standIn.close();
    }
  });

  for (const version of ['28.0', '0.25.2', '31.0']) {
    it(`refuses Typesense ${version} at start, saying which versions are supported`, async () => {
      const standIn = await TypesenseStandIn.start(version);
      try {
        const engine = new TypesenseEngine(db, { url: standIn.url, apiKey: STAND_IN_API_KEY });
        await expect(engine.start()).rejects.toThrow(
          `Typesense server version ${version} is not supported: this service speaks Typesense 29.x to 30.x.`,
        );
        expect(standIn.lines()).toEqual(['GET /debug']);
      } finally {
        await standIn.close();
      }
    });
  }
});
