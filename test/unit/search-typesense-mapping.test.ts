import { describe, expect, it } from 'vitest';
import type { IndexDefinition } from '../../src/modules/search/engine/engine';
import {
  aliasName,
  builtByEarlierRelease,
  collectionFits,
  collectionName,
  collectionSchema,
  legacyStopwordSetName,
  schemaFields,
  schemaFingerprint,
  stopwordSetName,
  toTypesenseDocuments,
  toTypesenseSynonyms,
} from '../../src/modules/search/engine/typesense-mapping';
import { deletionsOf, MAX_DELETE_FILTER_LENGTH, toFilterBy } from '../../src/modules/search/engine/typesense-filters';
import {
  leavesOutStopWords,
  singleStopWords,
  toSearch,
  toSearches,
  toSortBy,
  withoutStopPhrases,
} from '../../src/modules/search/engine/typesense-query';
import { fromSearchResult, fromSearchResults, searchResultOf } from '../../src/modules/search/engine/typesense-results';
import { protocolFor } from '../../src/modules/search/engine/typesense-version';
import { DEFAULT_MATCHING } from '../../src/modules/search/engine/matching';
import { indexDefinition } from '../helpers/search-definitions';

const definition = (overrides: Partial<IndexDefinition> = {}): IndexDefinition =>
  indexDefinition({
    id: '0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b',
    tenantId: 't',
    version: 7,
    rebuildVersion: 5,
    fields: [
      { name: 'name', type: 'STRING' },
      { name: 'brand', type: 'STRING' },
      { name: 'price', type: 'NUMBER' },
      { name: 'new', type: 'BOOLEAN' },
      { name: 'later', type: null },
    ],
    searchFields: ['name', 'brand'],
    filterFields: ['brand', 'price', 'new'],
    facetFields: ['brand', 'price'],
    ...overrides,
  });

const v30 = protocolFor('30.0');
const v29 = protocolFor('29.0');
const query = {
  q: 'lamp',
  filters: [],
  facets: [],
  limit: 10,
  offset: 0,
  threshold: 1,
  sort: [],
  disjunctiveFacets: false,
};
const COLLECTION = 'idx_0190a1b2c3d47e5f8a9b0c1d2e3f4a5b_v7_abcdef12';

describe('names', () => {
  it('one alias per index, one collection per version and schema behind it', () => {
    expect(aliasName(definition())).toBe('idx_0190a1b2c3d47e5f8a9b0c1d2e3f4a5b');
    expect(collectionName(definition())).toMatch(/^idx_0190a1b2c3d47e5f8a9b0c1d2e3f4a5b_v7_[0-9a-f]{8}$/);
    expect(stopwordSetName(COLLECTION)).toBe(`${COLLECTION}_stopwords`);
  });

  it('collections of earlier releases had no fingerprint and shared one stopwords set per index', () => {
    expect(legacyStopwordSetName('idx_0190a1b2c3d47e5f8a9b0c1d2e3f4a5b_v3')).toBe(
      'idx_0190a1b2c3d47e5f8a9b0c1d2e3f4a5b_stopwords',
    );
    expect(legacyStopwordSetName(COLLECTION)).toBeNull();
    expect(builtByEarlierRelease('idx_0190a1b2c3d47e5f8a9b0c1d2e3f4a5b_v3')).toBe(true);
    expect(builtByEarlierRelease(COLLECTION)).toBe(false);
  });

  it('a collection fits a definition while the schema is the same, whatever the version', () => {
    const built = collectionName(definition());
    expect(collectionFits(built, definition({ version: 9 }))).toBe(true);
    expect(collectionFits(built, definition({ fields: [{ name: 'name', type: 'NUMBER' }] }))).toBe(false);
    expect(collectionFits(built, definition({ id: '0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5c' }))).toBe(false);
  });
});

describe('collection schema', () => {
  it('declares every field with its type, facet only for facet fields, sort for sort fields', () => {
    expect(schemaFields(definition({ rankingRules: [{ field: 'price', direction: 'asc' }] }))).toEqual([
      { name: 'name', type: 'string[]', optional: true },
      { name: 'brand', type: 'string[]', optional: true, facet: true },
      { name: 'price', type: 'float', optional: true, facet: true, sort: true },
      { name: '__text_price', type: 'string[]', optional: true, facet: true },
      // Filter-only: indexed, no facet.
      { name: 'new', type: 'bool[]', optional: true },
      // Untyped and only displayed.
      { name: 'later', type: 'string[]', optional: true, index: false },
      { name: '__has', type: 'string[]', optional: true },
      { name: '__id', type: 'string', sort: true },
      { name: '__values', type: 'string', optional: true, index: false },
      { name: '__metadata', type: 'string', optional: true, index: false },
    ]);
  });

  it('declares the fields settings name before any document has shown them, as strings', () => {
    const fields = schemaFields(
      definition({
        fields: [{ name: 'name', type: 'STRING' }],
        searchFields: ['name', 'title'],
        filterFields: ['color'],
        facetFields: [],
        rankingRules: [{ field: 'rank', direction: 'asc' }],
      }),
    );
    expect(fields.slice(0, 4)).toEqual([
      { name: 'name', type: 'string[]', optional: true },
      { name: 'title', type: 'string[]', optional: true },
      { name: 'color', type: 'string[]', optional: true },
      { name: 'rank', type: 'string', optional: true, sort: true },
    ]);
  });

  it('a distinct field is single-valued and a facet', () => {
    expect(schemaFields(definition({ distinctField: 'name' }))[0]).toEqual({
      name: 'name',
      type: 'string',
      optional: true,
      facet: true,
    });
  });

  it('v30 attaches the synonym set of the collection; v29 keeps synonyms in the collection', () => {
    const withSynonyms = definition({ synonyms: [{ synonyms: ['sofa', 'couch'] }] });
    expect(collectionSchema(withSynonyms, COLLECTION, v30)).toMatchObject({
      name: COLLECTION,
      synonym_sets: [`${COLLECTION}_synonyms`],
    });
    expect(collectionSchema(withSynonyms, COLLECTION, v29)).not.toHaveProperty('synonym_sets');
    expect(collectionSchema(definition(), COLLECTION, v30)).not.toHaveProperty('synonym_sets');
  });
});

describe('documents and synonyms', () => {
  it('sends arrays, the first value of single-valued fields, number facets as text, and the values as sent', () => {
    const values = { name: 'Lamp', brand: ['Lumo', 'Brite'], price: [25.5, 30], new: null, later: 'x' };
    expect(
      toTypesenseDocuments(definition({ rankingRules: [{ field: 'price', direction: 'desc' }] }), [
        { id: 'a', values, metadata: { url: 'u' } },
      ]),
    ).toEqual([
      {
        id: 'a',
        __id: 'a',
        name: ['Lamp'],
        brand: ['Lumo', 'Brite'],
        price: 25.5,
        __text_price: ['25.5', '30'],
        // The filterable fields with a value (and `*`): for exists and not_exists.
        __has: ['*', 'brand', 'price'],
        __values: JSON.stringify(values),
        __metadata: '{"url":"u"}',
      },
    ]);
    expect(toTypesenseDocuments(definition(), [{ id: 'b', values: {}, metadata: null }])).toEqual([
      { id: 'b', __id: 'b', __has: ['*'], __values: '{}' },
    ]);
  });

  it('synonyms keep their root (one-way) or have none (multi-way)', () => {
    expect(
      toTypesenseSynonyms(
        definition({ synonyms: [{ synonyms: ['sofa', 'couch'] }, { root: 'tv', synonyms: ['television'] }] }),
      ),
    ).toEqual([
      { id: 'synonym-0', synonyms: ['sofa', 'couch'] },
      { id: 'synonym-1', synonyms: ['television'], root: 'tv' },
    ]);
  });
});

describe('search parameters', () => {
  it('filters: in as a list of quoted strings or numbers, ranges with their operator, joined with &&', () => {
    expect(
      toFilterBy([
        { field: 'brand', operator: 'in', values: ['Lumo', 'Bri`te'] },
        { field: 'price', operator: 'gte', values: [50] },
        { field: 'price', operator: 'lt', values: [100] },
        { field: 'new', operator: 'in', values: [true] },
      ]),
    ).toBe('brand:=[`Lumo`,`Brite`] && price:>=50 && price:<100 && new:=[true]');
    expect(toFilterBy([])).toBeUndefined();
  });

  it('filters: not_in also lets documents without the field through, exists through __has, groups in parentheses', () => {
    expect(
      toFilterBy([
        { field: 'brand', operator: 'not_in', values: ['Lumo'] },
        { field: 'new', operator: 'exists', values: [] },
        {
          any: [
            { field: 'price', operator: 'lt', values: [10] },
            { field: 'price', operator: 'not_exists', values: [] },
            {
              all: [
                { field: 'brand', operator: 'in', values: ['Brite'] },
                { field: 'price', operator: 'lte', values: [20] },
              ],
            },
          ],
        },
      ]),
    ).toBe(
      '(brand:!=[`Lumo`] || __has:!=[`brand`]) && __has:=[`new`] && ' +
        '(price:<10 || __has:!=[`price`] || (brand:=[`Brite`] && price:<=20))',
    );
  });

  it('disjunctive facets: one hit-less search per facet whose own filters are left out', () => {
    const brand = { field: 'brand', operator: 'in' as const, values: ['Lumo'] };
    const price = { field: 'price', operator: 'lt' as const, values: [50] };
    const disjunctive = { ...query, filters: [brand, price], facets: ['brand', 'price'], disjunctiveFacets: true };
    const { searches, facetSearchFields } = toSearches(definition(), COLLECTION, disjunctive, v30);
    expect(facetSearchFields).toEqual(['brand', 'price']);
    expect(searches[0]).toMatchObject({
      filter_by: 'brand:=[`Lumo`] && price:<50',
      facet_by: 'brand,price,__text_price',
    });
    expect(searches[1]).toMatchObject({ filter_by: 'price:<50', facet_by: 'brand', limit: 0, offset: 0 });
    expect(searches[2]).toMatchObject({ filter_by: 'brand:=[`Lumo`]', facet_by: 'price,__text_price', limit: 0 });
    const only = toSearches(definition(), COLLECTION, { ...disjunctive, filters: [brand] }, v30);
    expect(only.facetSearchFields).toEqual(['brand']);
    expect(only.searches[1]).not.toHaveProperty('filter_by');
    expect(
      toSearches(definition(), COLLECTION, { ...disjunctive, disjunctiveFacets: false }, v30).searches,
    ).toHaveLength(1);

    const facetResult = (field: string, counts: Record<string, number>) => ({
      found: 0,
      facet_counts: [{ field_name: field, counts: Object.entries(counts).map(([value, count]) => ({ value, count })) }],
    });
    const merged = fromSearchResults(
      definition({ facetFields: ['brand'] }),
      disjunctive,
      ['brand'],
      [{ ...facetResult('brand', { Lumo: 1 }), found: 1, hits: [] }, facetResult('brand', { Lumo: 1, Brite: 4 })],
    );
    expect(merged.facets).toEqual({ brand: { Lumo: 1, Brite: 4 } });
  });

  it('sort: custom rules (missing values last) around _text_match, then the id; at most three', () => {
    expect(toSortBy(definition())).toBe('_text_match:desc,__id:asc');
    expect(toSortBy(definition({ rankingRules: [{ field: 'price', direction: 'asc' }, 'typo'] }))).toBe(
      'price(missing_values: last):asc,_text_match:desc,__id:asc',
    );
    expect(toSortBy(definition({ rankingRules: [{ field: 'price', direction: 'desc' }] }))).toBe(
      'price(missing_values: last):desc,__id:asc',
    );
    expect(
      toSortBy(
        definition({
          rankingRules: [{ field: 'a', direction: 'asc' }, { field: 'b', direction: 'asc' }, 'typo'],
        }),
      ),
    ).toBe('a(missing_values: last):asc,b(missing_values: last):asc,_text_match:desc');
  });

  it('stop words are left out unless the query has nothing else', () => {
    const withStopWords = definition({ stopWords: ['the', 'a'] });
    expect(leavesOutStopWords(withStopWords, 'the lamp')).toBe(true);
    expect(leavesOutStopWords(withStopWords, 'The  A ')).toBe(false);
    expect(leavesOutStopWords(definition(), 'the lamp')).toBe(false);
  });

  it('maps typo budget, prefix, threshold, paging, facets, distinct, stop words and exactness', () => {
    const search = toSearch(
      definition({ distinctField: 'brand', stopWords: ['the'], rankingRules: ['exactness', 'attribute'] }),
      COLLECTION,
      {
        ...query,
        filters: [{ field: 'price', operator: 'gt', values: [5] }],
        facets: ['brand', 'price'],
        limit: 20,
        offset: 40,
        threshold: 3,
      },
      v30,
    );
    expect(search).toEqual({
      collection: COLLECTION,
      q: 'lamp',
      query_by: 'name,brand',
      query_by_weights: '15,14',
      prefix: true,
      max_candidates: 100,
      num_typos: 2,
      min_len_1typo: 5,
      min_len_2typo: 9,
      enable_typos_for_numerical_tokens: false,
      typo_tokens_threshold: 100,
      drop_tokens_threshold: 3,
      prioritize_exact_match: true,
      prioritize_token_position: false,
      offset: 40,
      limit: 20,
      highlight_full_fields: 'name,brand',
      highlight_start_tag: '<mark>',
      highlight_end_tag: '</mark>',
      enable_highlight_v1: false,
      filter_by: 'price:>5',
      facet_by: 'brand,price,__text_price',
      max_facet_values: 100,
      sort_by: '_text_match:desc,__id:asc',
      group_by: 'brand',
      group_limit: 1,
      group_missing_values: false,
      group_max_candidates: 10_000,
      stopwords: `${COLLECTION}_stopwords`,
    });
  });

  it('maps exact fields to no typos and no prefix per field, and the typo settings to their parameters', () => {
    const matching = {
      ...DEFAULT_MATCHING,
      exactFields: ['brand'],
      typosOnDigitWords: true,
      minWordLengthOneTypo: 4,
      minWordLengthTwoTypos: 7,
    };
    expect(toSearch(definition({ matching }), COLLECTION, query, v30)).toMatchObject({
      query_by: 'name,brand',
      prefix: 'true,false',
      num_typos: '2,0',
      min_len_1typo: 4,
      min_len_2typo: 7,
      enable_typos_for_numerical_tokens: true,
    });
    expect(toSearch(definition({ matching }), COLLECTION, { ...query, q: 'lamp ' }, v30)).toMatchObject({
      prefix: 'false,false',
    });
  });

  it('declares token separators, symbols and stemming in the collection schema, in a collection of its own', () => {
    const plain = definition();
    const matching = { ...DEFAULT_MATCHING, tokenSeparators: ['-'], symbolsToIndex: ['+'], language: 'de' as const };
    const configured = definition({ matching: { ...matching, exactFields: ['brand'] } });
    const schema = collectionSchema(configured, 'c', v30);
    expect(schema).toMatchObject({ token_separators: ['-'], symbols_to_index: ['+'] });
    expect(schema.fields.find((field) => field.name === 'name')).toMatchObject({ stem: true, locale: 'de' });
    expect(schema.fields.find((field) => field.name === 'brand')).not.toHaveProperty('stem');
    expect(collectionSchema(plain, 'c', v30)).not.toHaveProperty('token_separators');
    expect(schemaFingerprint(configured)).not.toBe(schemaFingerprint(plain));
    expect(schemaFingerprint(definition({ matching: DEFAULT_MATCHING }))).toBe(schemaFingerprint(plain));
  });

  it('v29 has no group_max_candidates; without the attribute rule fields weigh the same', () => {
    const search = toSearch(definition({ distinctField: 'brand', rankingRules: ['words'] }), COLLECTION, query, v29);
    expect(search).not.toHaveProperty('group_max_candidates');
    expect(search).toMatchObject({ query_by_weights: '1,1', group_missing_values: false });
  });

  it('a query ending with a space or punctuation matches its last word whole', () => {
    expect(toSearch(definition(), COLLECTION, { ...query, q: 'desk lamp ' }, v30).prefix).toBe(false);
    expect(toSearch(definition(), COLLECTION, { ...query, q: 'desk lamp.' }, v30).prefix).toBe(false);
    expect(toSearch(definition(), COLLECTION, { ...query, q: 'desk la' }, v30).prefix).toBe(true);
  });

  it('an empty query, or an index without string search fields, matches everything', () => {
    expect(toSearch(definition(), COLLECTION, { ...query, q: ' ' }, v30).q).toBe('*');
    const numbersOnly = toSearch(definition({ searchFields: ['price'] }), COLLECTION, query, v30);
    expect(numbersOnly.q).toBe('*');
    expect(numbersOnly).not.toHaveProperty('query_by');
    expect(numbersOnly).not.toHaveProperty('highlight_full_fields');
  });
});

describe('search results', () => {
  it('maps hits from the values as sent, metadata, per-element highlights, facet counts and number stats', () => {
    const values = { name: 'Desk <lamp>', brand: ['Lumo', 'Desk & co'], price: 25.5 };
    const result = fromSearchResult(
      definition(),
      { ...query, q: 'desk lamp' },
      {
        found: 12,
        hits: [
          {
            document: { id: 'a', name: ['Desk <lamp>'], __values: JSON.stringify(values), __metadata: '{"url":"x"}' },
            highlight: {
              name: [{ matched_tokens: ['Desk', 'lamp'], snippet: '<mark>Desk</mark> <<mark>lamp</mark>>' }],
              brand: [
                { matched_tokens: [], snippet: 'Lumo' },
                { matched_tokens: ['Desk'], snippet: '<mark>Desk</mark> & co', value: '<mark>Desk</mark> & co' },
              ],
            },
          },
        ],
        facet_counts: [
          { field_name: 'brand', counts: [{ value: 'Lumo', count: 9 }], stats: { total_values: 1 } },
          { field_name: 'price', counts: [{ value: '25.5', count: 1 }], stats: { min: 5, max: 50, avg: 20, sum: 240 } },
          { field_name: '__text_price', counts: [{ value: '25.5', count: 1 }] },
        ],
      },
    );
    expect(result).toEqual({
      count: 12,
      facets: { brand: { Lumo: 9 }, price: { '25.5': 1 } },
      facetsStats: { price: { min: 5, max: 50, avg: 20, sum: 240 } },
      hits: [
        {
          document: {
            id: 'a',
            values: { name: 'Desk <lamp>', brand: ['Lumo', 'Desk & co'], price: 25.5, new: null, later: null },
            metadata: { url: 'x' },
          },
          highlight: {
            name: {
              value: '<mark>Desk</mark> &lt;<mark>lamp</mark>&gt;',
              matchLevel: 'full',
              matchedWords: ['desk', 'lamp'],
            },
            brand: [
              { value: 'Lumo', matchLevel: 'none', matchedWords: [] },
              { value: '<mark>Desk</mark> &amp; co', matchLevel: 'partial', matchedWords: ['desk'] },
            ],
          },
        },
      ],
    });
  });

  it('takes the best hit of each group when grouped by the distinct field', () => {
    const result = fromSearchResult(definition({ distinctField: 'brand' }), query, {
      found: 2,
      grouped_hits: [
        { group_key: ['Lumo'], hits: [{ document: { id: 'a', __values: '{}' } }] },
        { group_key: ['Brite'], hits: [{ document: { id: 'c', __values: '{}' } }] },
      ],
    });
    expect(result.count).toBe(2);
    expect(result.hits.map((hit) => hit.document.id)).toEqual(['a', 'c']);
  });

  it('a search refused inside multi_search is an error with its status', () => {
    expect(() => searchResultOf({ code: 404, error: 'Not found.' })).toThrow(
      expect.objectContaining({ httpStatus: 404, message: 'Typesense refused the search (404): Not found.' }),
    );
    expect(searchResultOf({ found: 0 })).toEqual({ found: 0 });
  });
});

describe('deletionsOf', () => {
  it('quotes ids into id filters short enough for a query string; a backtick id goes alone', () => {
    expect(deletionsOf(['a', 'b`c', 'd'])).toEqual({ filters: ['id:[`a`,`d`]'], oneByOne: ['b`c'] });
    const ids = Array.from({ length: 1000 }, (_, i) => `product-${String(i).padStart(4, '0')}`);
    const { filters, oneByOne } = deletionsOf(ids);
    expect(oneByOne).toEqual([]);
    expect(filters.length).toBeGreaterThan(1);
    for (const filter of filters) expect(filter.length).toBeLessThanOrEqual(MAX_DELETE_FILTER_LENGTH + 5);
    expect(filters.flatMap((filter) => [...filter.matchAll(/`([^`]*)`/g)].map((m) => m[1]))).toEqual(ids);
  });
});

describe('stop phrases', () => {
  it('the stopwords set holds single words; phrases are cut out of the query before it is sent', () => {
    const withPhrases = definition({ stopWords: ['the', 'how to'] });
    expect(singleStopWords(withPhrases)).toEqual(['the']);
    expect(withoutStopPhrases(withPhrases, 'How to clean the sofa')).toBe('clean the sofa');
    expect(withoutStopPhrases(withPhrases, 'how to clean ')).toBe('clean ');
    expect(withoutStopPhrases(withPhrases, 'how to')).toBe('how to');
    expect(withoutStopPhrases(withPhrases, 'to how')).toBe('to how');
    expect(withoutStopPhrases(definition({ stopWords: ['the'] }), 'the Lamp!')).toBe('the Lamp!');
    expect(toSearch(withPhrases, COLLECTION, { ...query, q: 'how to lamp' }, v30)).toMatchObject({
      q: 'lamp',
      stopwords: `${COLLECTION}_stopwords`,
    });
  });
});
