/**
 * The engine conformance suite: the same cases against every search engine, through the search
 * services (indexes, documents, search) over a real database. The embedded engine always runs;
 * Typesense runs when TYPESENSE_URL (and TYPESENSE_API_KEY) point at a server.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { AppError } from '../../src/kernel/errors';
import type { Principal } from '../../src/kernel/principal';
import type { SearchServices } from '../../src/modules/search/search.module';
import type { IndexInputData, SearchContextData } from '../../src/modules/search/search.schemas';
import { createTenant, startTestApp } from '../helpers/app';
import { searchServicesOf } from '../helpers/search-services';

const { rest, db, config, services: appServices } = await startTestApp();
const tenant = await createTenant(rest, 'Conformance');
const principal: Principal = {
  tenantId: tenant.id,
  scopes: new Set(['*']),
  actor: { type: 'api_key', id: 'conformance' },
};

const typesenseUrl = process.env.TYPESENSE_URL;
/** Failures of the Typesense services' background work: none is expected. */
const backgroundErrors: unknown[] = [];
afterAll(() => expect(backgroundErrors).toEqual([]));
const engines: { name: string; services: () => SearchServices; skip?: string }[] = [
  { name: 'embedded', services: () => appServices.search },
  {
    name: 'typesense',
    skip: typesenseUrl ? undefined : 'TYPESENSE_URL is not set, so there is no Typesense server to run against',
    services: () =>
      searchServicesOf(
        { config, db, services: appServices },
        {
          typesenseUrl,
          typesenseApiKey: process.env.TYPESENSE_API_KEY,
          onBackgroundError: (error) => backgroundErrors.push(error),
        },
      ),
  },
];

let counter = 0;
const TEXT_MATCH_ALWAYS = "Typesense's text match always weighs typos, word distance and exact matches";

for (const engine of engines) {
  const title = engine.skip ? `${engine.name} engine (skipped: ${engine.skip})` : `${engine.name} engine`;
  describe.skipIf(engine.skip !== undefined)(title, () => {
    const services = () => engine.services();
    /** A case Typesense cannot match (see "What differs with Typesense" in docs/guides/search.md): skipped there, saying why. */
    const embeddedOnly = (title: string, reason: string, test: () => Promise<void>) =>
      it.skipIf(engine.name !== 'embedded')(`${title} (embedded engine only: ${reason})`, test);

    /** A fresh index with these settings and documents; returns a search function over it. */
    async function indexWith(settings: Partial<IndexInputData>, documents: Record<string, unknown>[]) {
      const alias = `${engine.name}-${++counter}`;
      await services().indexes.create(principal, { name: alias, alias, ...settings } as IndexInputData);
      if (documents.length > 0) await services().indexes.upsertDocuments(principal, alias, documents);
      const search = async (context: SearchContextData) =>
        (await services().search.searchIndex(principal, alias, [context]))[0]!.results[0]!;
      const ids = async (context: SearchContextData) => (await search(context)).hits.map((hit) => hit.id);
      return { alias, search, ids };
    }

    const products = [
      { id: 'p1', name: 'Desk lamp', brand: 'Lumo', price: 25, color: 'red', in_stock: true },
      { id: 'p2', name: 'Office chair', brand: 'Sitwell', price: 150, color: 'black', in_stock: true },
      { id: 'p3', name: 'Mechanical keyboard', brand: 'Clack', price: 90, color: 'black', in_stock: false },
      { id: 'p4', name: 'Wireless headphone', brand: 'Clack', price: 60, color: 'white', in_stock: true },
      { id: 'p5', name: 'Floor lamp', brand: 'Lumo', price: 80, color: 'black', in_stock: true },
    ];
    const catalog = () =>
      indexWith({ filters: [{ key: 'brand' }, { key: 'price' }, { key: 'color' }, { key: 'in_stock' }] }, products);

    describe('typo tolerance by word length', () => {
      it('allows no typo in words of up to 4 letters', async () => {
        const { ids } = await indexWith({}, [{ id: 'a', name: 'lamp' }]);
        expect(await ids({ q: 'lamp' })).toEqual(['a']);
        expect(await ids({ q: 'lamb' })).toEqual([]);
      });

      it('allows one typo in words of 5 letters, not two', async () => {
        const { ids } = await indexWith({}, [{ id: 'a', name: 'chair' }]);
        expect(await ids({ q: 'chiar' })).toEqual(['a']);
        expect(await ids({ q: 'cxiar' })).toEqual([]);
      });

      it('allows one typo in words of 8 letters, not two', async () => {
        const { ids } = await indexWith({}, [{ id: 'a', name: 'keyboard' }]);
        expect(await ids({ q: 'keybaord' })).toEqual(['a']);
        expect(await ids({ q: 'kexbaord' })).toEqual([]);
      });

      it('allows two typos in words of 9 letters, not three', async () => {
        const { ids } = await indexWith({}, [{ id: 'a', name: 'headphone' }]);
        expect(await ids({ q: 'haedphnoe' })).toEqual(['a']);
        expect(await ids({ q: 'hxxdphnoe' })).toEqual([]);
      });
    });

    it('matches the last word as a prefix, for search as you type', async () => {
      const { ids } = await catalog();
      expect(await ids({ q: 'mechanical keyb' })).toEqual(['p3']);
      expect(await ids({ q: 'keyb mechanical' })).toEqual([]);
    });

    describe('filters', () => {
      it('in: any of the values, coerced from strings by the field type', async () => {
        const { ids } = await catalog();
        expect(await ids({ filters: [{ key: 'brand', operator: 'in', values: ['Lumo', 'Clack'] }] })).toEqual([
          'p1',
          'p3',
          'p4',
          'p5',
        ]);
        expect(await ids({ filters: [{ key: 'price', operator: 'in', values: ['90'] }] })).toEqual(['p3']);
        expect(await ids({ filters: [{ key: 'in_stock', operator: 'in', values: ['false'] }] })).toEqual(['p3']);
      });

      it('gte, gt, lt and lte on numbers, from string values', async () => {
        const { ids } = await catalog();
        expect(await ids({ filters: [{ key: 'price', operator: 'gte', values: ['80'] }] })).toEqual(['p2', 'p3', 'p5']);
        expect(await ids({ filters: [{ key: 'price', operator: 'gt', values: ['80'] }] })).toEqual(['p2', 'p3']);
        expect(await ids({ filters: [{ key: 'price', operator: 'lt', values: ['80'] }] })).toEqual(['p1', 'p4']);
        expect(await ids({ filters: [{ key: 'price', operator: 'lte', values: [80] }] })).toEqual(['p1', 'p4', 'p5']);
      });

      it('combine with each other and with the query', async () => {
        const { ids } = await catalog();
        expect(
          await ids({
            q: 'lamp',
            filters: [
              { key: 'price', operator: 'gt', values: ['30'] },
              { key: 'brand', operator: 'in', values: ['Lumo'] },
            ],
          }),
        ).toEqual(['p5']);
      });

      it('not_in: none of the values, documents without the field included; exists and not_exists', async () => {
        const { ids } = await indexWith({ filters: [{ key: 'brand' }, { key: 'tags' }] }, [
          { id: 'a', name: 'x', brand: 'Lumo', tags: ['sale', 'new'] },
          { id: 'b', name: 'x', brand: 'Clack', tags: ['new'] },
          { id: 'c', name: 'x', tags: ['old'] },
          { id: 'd', name: 'x', brand: 'Sitwell' },
        ]);
        expect(await ids({ filters: [{ key: 'brand', operator: 'not_in', values: ['Lumo', 'Clack'] }] })).toEqual([
          'c',
          'd',
        ]);
        expect(await ids({ filters: [{ key: 'tags', operator: 'not_in', values: ['sale'] }] })).toEqual([
          'b',
          'c',
          'd',
        ]);
        expect(await ids({ filters: [{ key: 'brand', operator: 'exists' }] })).toEqual(['a', 'b', 'd']);
        expect(await ids({ filters: [{ key: 'brand', operator: 'not_exists' }] })).toEqual(['c']);
        expect(
          await ids({
            filters: [
              { key: 'tags', operator: 'exists' },
              { key: 'tags', operator: 'not_in', values: ['old'] },
            ],
          }),
        ).toEqual(['a', 'b']);
      });

      it('any groups: one member must hold; an inner all group needs every member', async () => {
        const { ids } = await catalog();
        expect(
          await ids({
            filters: [
              {
                any: [
                  { key: 'price', operator: 'lt', values: [30] },
                  { key: 'brand', operator: 'in', values: ['Sitwell'] },
                ],
              },
            ],
          }),
        ).toEqual(['p1', 'p2']);
        expect(
          await ids({
            filters: [
              { key: 'color', operator: 'in', values: ['black'] },
              {
                any: [
                  { key: 'in_stock', operator: 'in', values: [false] },
                  {
                    all: [
                      { key: 'brand', operator: 'in', values: ['Lumo'] },
                      { key: 'price', operator: 'gte', values: [50] },
                    ],
                  },
                  { any: [{ key: 'price', operator: 'gt', values: [140] }] },
                ],
              },
            ],
          }),
        ).toEqual(['p2', 'p3', 'p5']);
      });

      it('disjunctive facets count each facet without its own filters; off by default', async () => {
        const { search } = await catalog();
        const context = {
          facets: ['brand', 'color'],
          filters: [
            { key: 'brand', operator: 'in' as const, values: ['Lumo'] },
            { key: 'color', operator: 'in' as const, values: ['black'] },
          ],
        };
        const conjunctive = await search(context);
        expect(conjunctive.hits.map((hit) => hit.id)).toEqual(['p5']);
        expect(conjunctive.facets).toEqual({ brand: { Lumo: 1 }, color: { black: 1 } });
        const disjunctive = await search({ ...context, disjunctive_facets: true });
        expect(disjunctive.hits.map((hit) => hit.id)).toEqual(['p5']);
        expect(disjunctive.count).toBe(1);
        // brand counted over the black products, color over Lumo's.
        expect(disjunctive.facets).toEqual({ brand: { Clack: 1, Lumo: 1, Sitwell: 1 }, color: { black: 1, red: 1 } });
      });

      it('facet_query lists the matching values of a facet, by prefix, counted under the query and filters', async () => {
        const { search } = await catalog();
        expect((await search({ facet_query: { field: 'brand', q: 'cl' } })).facet_hits).toEqual([
          { value: 'Clack', count: 2 },
        ]);
        const underFilters = await search({
          q: 'lamp',
          facet_query: { field: 'brand', q: 'lu' },
          filters: [{ key: 'price', operator: 'gte', values: [50] }],
        });
        expect(underFilters.facet_hits).toEqual([{ value: 'Lumo', count: 1 }]);
        expect((await search({ facet_query: { field: 'color', q: 'bl' } })).facet_hits).toEqual([
          { value: 'black', count: 3 },
        ]);
        expect((await search({ facet_query: { field: 'brand', q: 'zz' } })).facet_hits).toEqual([]);
        expect(await search({})).not.toHaveProperty('facet_hits');
        await expect(search({ facet_query: { field: 'name', q: 'x' } })).rejects.toMatchObject({ status: 400 });
      });

      embeddedOnly(
        'facet_query is typo tolerant',
        "Typesense's facet_query matches value prefixes without typos",
        async () => {
          const { search } = await catalog();
          expect((await search({ facet_query: { field: 'brand', q: 'sotwell' } })).facet_hits).toEqual([
            { value: 'Sitwell', count: 1 },
          ]);
          expect((await search({ facet_query: { field: 'brand', q: 'sitwlel' } })).facet_hits).toEqual([
            { value: 'Sitwell', count: 1 },
          ]);
        },
      );

      it('on a field that is not filterable: 400', async () => {
        const { search } = await catalog();
        await expect(search({ filters: [{ key: 'name', operator: 'in', values: ['x'] }] })).rejects.toMatchObject({
          status: 400,
        });
        await expect(
          search({ filters: [{ key: 'price', operator: 'gte', values: ['cheap'] }] }),
        ).rejects.toBeInstanceOf(AppError);
      });
    });

    it('counts facet values and computes facets_stats of numeric facets over the matches', async () => {
      const { search } = await catalog();
      const result = await search({ q: 'lamp', facets: ['brand', 'color', 'price'] });
      expect(result.count).toBe(2);
      expect(result.facets.brand).toEqual({ Lumo: 2 });
      expect(result.facets.color).toEqual({ black: 1, red: 1 });
      expect(result.facets_stats.price).toEqual({ min: 25, max: 80, avg: 52.5, sum: 105 });
      expect(result.facets_stats.brand).toBeUndefined();
    });

    it('returns one document per value of the distinct field, counting groups', async () => {
      const { search } = await indexWith({ distinct_field: 'brand', ranking_rules: ['price:asc'] }, products);
      const result = await search({});
      expect(result.hits.map((hit) => hit.id)).toEqual(['p1', 'p4', 'p2']);
      expect(result.count).toBe(3);
    });

    it('documents without the distinct field are not grouped together', async () => {
      const { search } = await indexWith({ distinct_field: 'brand', ranking_rules: ['price:asc'] }, [
        ...products,
        { id: 'p6', name: 'Unbranded lamp', price: 5 },
        { id: 'p7', name: 'Unbranded chair', price: 6 },
      ]);
      const result = await search({});
      expect(result.hits.map((hit) => hit.id)).toEqual(['p6', 'p7', 'p1', 'p4', 'p2']);
      expect(result.count).toBe(5);
    });

    it('a filter of many long values (a query string of over 4 000 characters) is searched', async () => {
      const { ids } = await catalog();
      const values = [...Array.from({ length: 99 }, (_, i) => `brand-${i}-${'x'.repeat(40)}`), 'Sitwell'];
      expect(await ids({ filters: [{ key: 'brand', operator: 'in', values }] })).toEqual(['p2']);
    });

    it('projects hits onto display_fields and keeps metadata out of matching', async () => {
      const { search } = await indexWith({ display_fields: ['name'] }, [
        { id: 'a', name: 'Desk lamp', brand: 'Lumo', metadata: { note: 'zebra', url: 'https://shop.example.com/a' } },
      ]);
      const [hit] = (await search({ q: 'lamp' })).hits;
      expect(hit).toMatchObject({
        id: 'a',
        objectID: 'a',
        name: 'Desk lamp',
        metadata: { note: 'zebra', url: 'https://shop.example.com/a' },
        __position: 1,
      });
      expect(hit).not.toHaveProperty('brand');
      expect((await search({ q: 'zebra' })).count).toBe(0);
    });

    it('highlights the matched words, HTML-escaped', async () => {
      const { search } = await indexWith({}, [{ id: 'a', name: 'Lamp <b>& shade' }]);
      const [hit] = (await search({ q: 'lamp' })).hits;
      expect(hit!._highlightResult.name).toMatchObject({
        value: '<mark>Lamp</mark> &lt;b&gt;&amp; shade',
        matchLevel: 'full',
      });
    });

    it('highlights each value of an array field', async () => {
      const { search } = await indexWith({ search_fields: ['name', 'tags'] }, [
        { id: 'a', name: 'Desk lamp', tags: ['office', 'reading light'] },
      ]);
      const [hit] = (await search({ q: 'reading' })).hits;
      expect(hit!._highlightResult.tags).toEqual([
        { value: 'office', matchLevel: 'none', matchedWords: [] },
        { value: '<mark>reading</mark> light', matchLevel: 'full', matchedWords: ['reading'] },
      ]);
    });

    it('pages with limit and offset; count covers every match', async () => {
      const { search } = await indexWith({ ranking_rules: ['price:asc'] }, products);
      const page = await search({ limit: 2, offset: 2 });
      expect(page.count).toBe(5);
      expect(page.hits.map((hit) => [hit.id, hit.__position])).toEqual([
        ['p5', 3],
        ['p3', 4],
      ]);
    });

    it('threshold: with fewer matches for every word, the last words are dropped', async () => {
      const { search } = await catalog();
      expect((await search({ q: 'lamp purple', threshold: 0 })).count).toBe(0);
      expect((await search({ q: 'lamp purple', threshold: 1 })).hits.map((hit) => hit.id).sort()).toEqual(['p1', 'p5']);
      // Two documents have both words: a threshold of 2 keeps them, 3 drops "desk".
      expect((await search({ q: 'lamp desk', threshold: 1 })).count).toBe(1);
      expect((await search({ q: 'lamp desk', threshold: 2 })).count).toBe(2);
    });

    describe('synonyms', () => {
      it('multi-way: each word finds the others', async () => {
        const { ids } = await indexWith({ synonyms: [{ synonyms: ['sofa', 'couch'] }] }, [
          { id: 'a', name: 'Leather sofa' },
          { id: 'b', name: 'Corner couch' },
        ]);
        expect((await ids({ q: 'sofa' })).sort()).toEqual(['a', 'b']);
        expect((await ids({ q: 'couch' })).sort()).toEqual(['a', 'b']);
      });

      it('one-way: the root finds the synonyms, not the other way round', async () => {
        const { ids } = await indexWith({ synonyms: [{ root: 'tv', synonyms: ['television'] }] }, [
          { id: 'a', name: 'Smart television' },
          { id: 'b', name: 'Tv stand' },
        ]);
        expect((await ids({ q: 'tv' })).sort()).toEqual(['a', 'b']);
        expect(await ids({ q: 'television' })).toEqual(['a']);
      });

      it('multi-way phrases: the words in a row find the other phrases and words', async () => {
        const { ids } = await indexWith({ synonyms: [{ synonyms: ['t shirt', 'tee'] }] }, [
          { id: 'a', name: 'Red t shirt' },
          { id: 'b', name: 'Blue tee' },
          { id: 'c', name: 'Shirt with a t print' },
          { id: 'd', name: 'Green sweater' },
        ]);
        expect((await ids({ q: 'tee', threshold: 0 })).sort()).toEqual(['a', 'b']);
        expect((await ids({ q: 't shirt ', threshold: 0 })).sort()).toEqual(['a', 'b']);
        expect(await ids({ q: 'blue t shirt ', threshold: 0 })).toEqual(['b']);
      });

      it('one-way phrases: the root phrase finds the synonyms, not the other way round', async () => {
        const { ids } = await indexWith({ synonyms: [{ root: 'flat screen', synonyms: ['television'] }] }, [
          { id: 'a', name: 'Smart television' },
          { id: 'b', name: 'Flat screen stand' },
        ]);
        expect((await ids({ q: 'flat screen ', threshold: 0 })).sort()).toEqual(['a', 'b']);
        expect(await ids({ q: 'television', threshold: 0 })).toEqual(['a']);
      });
    });

    it('stop words are left out of the query', async () => {
      const withStopWords = await indexWith({ stop_words: ['the'] }, [{ id: 'a', name: 'Desk lamp' }]);
      const without = await indexWith({}, [{ id: 'a', name: 'Desk lamp' }]);
      expect(await withStopWords.ids({ q: 'the lamp', threshold: 0 })).toEqual(['a']);
      expect(await without.ids({ q: 'the lamp', threshold: 0 })).toEqual([]);
    });

    it('stop phrases are left out of the query where their words stand in a row', async () => {
      const { ids } = await indexWith({ stop_words: ['how to'] }, [
        { id: 'a', name: 'Clean a sofa' },
        { id: 'b', name: 'How to clean' },
      ]);
      expect(await ids({ q: 'how to sofa', threshold: 0 })).toEqual(['a']);
      expect(await ids({ q: 'to how sofa', threshold: 0 })).toEqual([]);
    });

    it('a query of stop words only is searched as typed', async () => {
      const { ids } = await indexWith({ stop_words: ['the'] }, [
        { id: 'a', name: 'The lamp' },
        { id: 'b', name: 'Desk' },
      ]);
      expect(await ids({ q: 'the', threshold: 0 })).toEqual(['a']);
    });

    describe('ranking rules', () => {
      it('words: documents with more of the query words first', async () => {
        const documents = [
          { id: 'a', name: 'chair' },
          { id: 'b', name: 'chair red' },
        ];
        expect(
          await (await indexWith({ ranking_rules: ['words'] }, documents)).ids({ q: 'chair red', threshold: 5 }),
        ).toEqual(['b', 'a']);
        expect(
          await (await indexWith({ ranking_rules: ['price:asc'] }, documents)).ids({ q: 'chair red', threshold: 5 }),
        ).toEqual(['a', 'b']);
      });

      const typoDocuments = [
        { id: 'a', name: 'lamps' },
        { id: 'b', name: 'lampe' },
      ];
      it('typo: fewer typos first', async () => {
        expect(await (await indexWith({ ranking_rules: ['typo'] }, typoDocuments)).ids({ q: 'lampe ' })).toEqual([
          'b',
          'a',
        ]);
      });
      embeddedOnly('typo: without the rule, typos do not rank', TEXT_MATCH_ALWAYS, async () => {
        expect(await (await indexWith({ ranking_rules: ['words'] }, typoDocuments)).ids({ q: 'lampe ' })).toEqual([
          'a',
          'b',
        ]);
      });

      const proximityDocuments = [
        { id: 'a', name: 'red big old wooden chair' },
        { id: 'b', name: 'red chair' },
      ];
      it('proximity: query words close together first', async () => {
        expect(
          await (await indexWith({ ranking_rules: ['proximity'] }, proximityDocuments)).ids({ q: 'red chair' }),
        ).toEqual(['b', 'a']);
      });
      embeddedOnly('proximity: without the rule, distance does not rank', TEXT_MATCH_ALWAYS, async () => {
        expect(
          await (await indexWith({ ranking_rules: ['words'] }, proximityDocuments)).ids({ q: 'red chair' }),
        ).toEqual(['a', 'b']);
      });

      it('attribute: matches in earlier search fields first', async () => {
        const settings = { search_fields: ['title', 'description'] };
        const documents = [
          { id: 'a', title: 'desk', description: 'lamp' },
          { id: 'b', title: 'lamp', description: 'desk' },
        ];
        expect(
          await (await indexWith({ ...settings, ranking_rules: ['attribute'] }, documents)).ids({ q: 'lamp' }),
        ).toEqual(['b', 'a']);
        expect(
          await (await indexWith({ ...settings, ranking_rules: ['words'] }, documents)).ids({ q: 'lamp' }),
        ).toEqual(['a', 'b']);
      });

      const exactnessDocuments = [
        { id: 'a', name: 'lamps' },
        { id: 'b', name: 'lamp' },
      ];
      it('exactness: the word itself before completions of it', async () => {
        expect(
          await (await indexWith({ ranking_rules: ['exactness'] }, exactnessDocuments)).ids({ q: 'lamp' }),
        ).toEqual(['b', 'a']);
      });
      embeddedOnly('exactness: without the rule, completions tie with the word', TEXT_MATCH_ALWAYS, async () => {
        expect(await (await indexWith({ ranking_rules: ['words'] }, exactnessDocuments)).ids({ q: 'lamp' })).toEqual([
          'a',
          'b',
        ]);
      });

      it('<field>:asc and <field>:desc sort by the field, documents without it last', async () => {
        const documents = [...products, { id: 'p6', name: 'Lamp without price' }];
        expect(await (await indexWith({ ranking_rules: ['price:asc'] }, documents)).ids({})).toEqual([
          'p1',
          'p4',
          'p5',
          'p3',
          'p2',
          'p6',
        ]);
        expect(await (await indexWith({ ranking_rules: ['price:desc'] }, documents)).ids({})).toEqual([
          'p2',
          'p3',
          'p5',
          'p4',
          'p1',
          'p6',
        ]);
      });

      it('later rules only break the ties of earlier ones', async () => {
        const documents = [
          { id: 'a', name: 'lamp', price: 10 },
          { id: 'b', name: 'lamps', price: 5 },
          { id: 'c', name: 'lamp', price: 20 },
        ];
        expect(
          await (await indexWith({ ranking_rules: ['exactness', 'price:desc'] }, documents)).ids({ q: 'lamp' }),
        ).toEqual(['c', 'a', 'b']);
        expect(
          await (await indexWith({ ranking_rules: ['price:desc', 'exactness'] }, documents)).ids({ q: 'lamp' }),
        ).toEqual(['c', 'a', 'b']);
        expect(
          await (await indexWith({ ranking_rules: ['price:asc', 'exactness'] }, documents)).ids({ q: 'lamp' }),
        ).toEqual(['b', 'a', 'c']);
      });
    });

    it('settings may name fields no document has shown yet', async () => {
      const { ids } = await indexWith(
        { search_fields: ['name', 'title'], filters: [{ key: 'color' }], ranking_rules: ['rank:asc', 'words'] },
        [{ id: 'a', name: 'Desk lamp' }],
      );
      expect(await ids({ q: 'lamp' })).toEqual(['a']);
      expect(await ids({ filters: [{ key: 'color', operator: 'in', values: ['red'] }] })).toEqual([]);
    });

    it('search_fields limits what the query matches', async () => {
      const { ids } = await indexWith({ search_fields: ['name'] }, [{ id: 'a', name: 'Desk lamp', brand: 'Lumo' }]);
      expect(await ids({ q: 'lamp' })).toEqual(['a']);
      expect(await ids({ q: 'lumo' })).toEqual([]);
    });

    it('fields map source fields onto index fields with their declared types', async () => {
      const { search } = await indexWith(
        {
          fields: [
            { from: 'title', to: 'name', type: 'STRING' },
            { from: 'pricing.amount', to: 'price', type: 'NUMBER' },
          ],
          filters: [{ key: 'price' }],
        },
        [{ id: 'a', title: 'Desk lamp', pricing: { amount: '25.5' }, ignored: 'zebra' }],
      );
      const result = await search({ q: 'lamp', filters: [{ key: 'price', operator: 'gt', values: ['25'] }] });
      expect(result.hits).toEqual([expect.objectContaining({ id: 'a', name: 'Desk lamp', price: 25.5 })]);
      expect(result.hits[0]).not.toHaveProperty('ignored');
      expect((await search({ q: 'zebra' })).count).toBe(0);
    });

    it('an upsert replaces a document by id; clearing empties the index', async () => {
      const { alias, ids } = await indexWith({}, [{ id: 'a', name: 'Desk lamp' }]);
      await services().indexes.upsertDocuments(principal, alias, [{ id: 'a', name: 'Office chair' }]);
      expect(await ids({ q: 'lamp' })).toEqual([]);
      expect(await ids({ q: 'chair' })).toEqual(['a']);
      await services().indexes.clearDocuments(principal, alias);
      expect(await ids({})).toEqual([]);
    });

    it('sort in the context orders by sortable fields before relevance, documents without the field last', async () => {
      const { ids } = await indexWith(
        {
          fields: [
            { from: 'name', type: 'STRING' },
            { from: 'price', type: 'NUMBER' },
          ],
        },
        [
          { id: 'a', name: 'Desk lamp', price: 30 },
          { id: 'b', name: 'Floor lamp', price: 10 },
          { id: 'c', name: 'Lamp', price: 30 },
          { id: 'd', name: 'Wall lamp' },
          { id: 'e', name: 'Office chair', price: 5 },
        ],
      );
      // a and c cost the same: a matches both words, c only the first (the last word is dropped for c).
      expect(await ids({ q: 'lamp desk', sort: ['price:asc'], threshold: 10 })).toEqual(['b', 'a', 'c', 'd']);
      expect(await ids({ q: 'lamp desk', sort: ['price:desc'], threshold: 10 })).toEqual(['a', 'c', 'b', 'd']);
      expect(await ids({ sort: ['price:asc'] })).toEqual(['e', 'b', 'a', 'c', 'd']);
    });

    it('a merchandising rule pins documents that pass the filters and hides others', async () => {
      const { alias, search } = await catalog();
      await services().indexes.replaceRules(principal, alias, [
        {
          id: 'lamps',
          query: { text: 'lamp', match: 'contains' },
          pin: [
            { id: 'p2', position: 1 },
            { id: 'p3', position: 3 },
          ],
          hide: ['p5'],
        },
      ]);
      const lamps = await search({ q: 'lamp' });
      expect(lamps.hits.map((hit) => [hit.id, hit._rule])).toEqual([
        ['p2', 'lamps'],
        ['p1', 'lamps'],
        ['p3', 'lamps'],
      ]);
      expect(lamps.count).toBe(3);
      const inStock = await search({ q: 'lamp', filters: [{ key: 'in_stock', operator: 'in', values: [true] }] });
      expect(inStock.hits.map((hit) => hit.id)).toEqual(['p2', 'p1']);
      expect((await search({ q: 'chair' })).hits.map((hit) => [hit.id, hit._rule])).toEqual([['p2', null]]);
    });

    it('documents deleted by id or by a filter, and patched ones, are searched as changed', async () => {
      const { alias, ids, search } = await catalog();
      await services().indexes.deleteDocument(principal, alias, 'p1');
      const deleted = await services().indexes.deleteDocuments(principal, alias, {
        filters: [{ key: 'brand', operator: 'in', values: ['Clack'], parameter: 'filter[brand][eq]' }],
      });
      expect(deleted).toBe(2);
      await services().indexes.patchDocuments(principal, alias, [{ id: 'p5', price: 10, color: null }]);
      expect(await ids({ q: '' })).toEqual(['p2', 'p5']);
      const cheap = await search({ filters: [{ key: 'price', operator: 'lt', values: ['20'] }] });
      expect(cheap.hits).toEqual([expect.objectContaining({ id: 'p5', price: 10, color: null })]);
      expect(await ids({ filters: [{ key: 'color', operator: 'in', values: ['black'] }] })).toEqual(['p2']);
    });
  });
}
