import { describe, expect, it } from 'vitest';
import type { IndexDefinition } from '../../src/modules/search/engine/engine';
import {
  aliasName,
  collectionName,
  collectionSchema,
  fromSearchResponse,
  stopwordSetName,
  toFilterBy,
  toSearchParams,
  toSortBy,
  toTypesenseDocument,
  toTypesenseSynonyms,
} from '../../src/modules/search/engine/typesense-mapping';

const definition = (overrides: Partial<IndexDefinition> = {}): IndexDefinition => ({
  id: '0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b',
  tenantId: 't',
  alias: 'products',
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
  filterFields: ['brand', 'price'],
  facetFields: ['brand', 'price'],
  distinctField: null,
  synonyms: [],
  stopWords: [],
  rankingRules: ['words', 'typo', 'proximity', 'attribute', 'exactness'],
  ...overrides,
});

const query = { q: 'lamp', filters: [], facets: [], limit: 10, offset: 0, threshold: 1 };

describe('names', () => {
  it('one alias per index, one collection per version behind it', () => {
    expect(aliasName(definition())).toBe('idx_0190a1b2c3d47e5f8a9b0c1d2e3f4a5b');
    expect(collectionName(definition())).toBe('idx_0190a1b2c3d47e5f8a9b0c1d2e3f4a5b_v7');
    expect(stopwordSetName(definition())).toBe('idx_0190a1b2c3d47e5f8a9b0c1d2e3f4a5b_stopwords');
  });
});

describe('collectionSchema', () => {
  it('maps types, marks facets and filters, stores metadata unindexed and auto-detects untyped fields', () => {
    expect(collectionSchema(definition({ rankingRules: [{ field: 'price', direction: 'asc' }] }))).toEqual({
      name: 'idx_0190a1b2c3d47e5f8a9b0c1d2e3f4a5b_v7',
      fields: [
        { name: 'name', type: 'string*', optional: true, facet: false },
        { name: 'brand', type: 'string*', optional: true, facet: true },
        { name: 'price', type: 'float', optional: true, facet: true, sort: true },
        { name: 'new', type: 'bool', optional: true, facet: false },
        { name: '__metadata', type: 'string', optional: true, index: false },
        { name: '.*', type: 'auto', optional: true },
      ],
    });
  });
});

describe('documents and synonyms', () => {
  it('a document drops null values and carries metadata as JSON text', () => {
    expect(toTypesenseDocument({ id: 'a', values: { name: 'Lamp', price: null }, metadata: { url: 'u' } })).toEqual({
      id: 'a',
      name: 'Lamp',
      __metadata: '{"url":"u"}',
    });
    expect(toTypesenseDocument({ id: 'b', values: {}, metadata: null })).toEqual({ id: 'b' });
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

  it('sort: custom rules around _text_match, which stands where the first built-in rule is; at most three', () => {
    expect(toSortBy(definition())).toBeUndefined();
    expect(toSortBy(definition({ rankingRules: [{ field: 'price', direction: 'asc' }, 'typo'] }))).toBe(
      'price:asc,_text_match:desc',
    );
    expect(toSortBy(definition({ rankingRules: ['words', 'typo', { field: 'price', direction: 'desc' }] }))).toBe(
      '_text_match:desc,price:desc',
    );
    expect(
      toSortBy(
        definition({
          rankingRules: [
            { field: 'a', direction: 'asc' },
            { field: 'b', direction: 'asc' },
            { field: 'c', direction: 'asc' },
            'typo',
          ],
        }),
      ),
    ).toBe('a:asc,b:asc,c:asc');
  });

  it('maps typo budget, prefix, threshold, paging, facets, distinct, stop words and exactness', () => {
    const params = toSearchParams(
      definition({ distinctField: 'brand', stopWords: ['the'], rankingRules: ['exactness', 'attribute'] }),
      {
        ...query,
        filters: [{ field: 'price', operator: 'gt', values: [5] }],
        facets: ['brand'],
        limit: 20,
        offset: 40,
        threshold: 3,
      },
    );
    expect(params).toEqual({
      q: 'lamp',
      query_by: 'name,brand',
      query_by_weights: '15,14',
      prefix: true,
      max_candidates: 100,
      num_typos: 2,
      min_len_1typo: 5,
      min_len_2typo: 9,
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
      facet_by: 'brand',
      max_facet_values: 100,
      group_by: 'brand',
      group_limit: 1,
      stopwords: 'idx_0190a1b2c3d47e5f8a9b0c1d2e3f4a5b_stopwords',
    });
  });

  it('an empty query, or an index without search fields, matches everything', () => {
    expect(toSearchParams(definition(), { ...query, q: ' ' }).q).toBe('*');
    expect(toSearchParams(definition({ searchFields: [] }), query)).toMatchObject({ q: '*' });
    expect(toSearchParams(definition({ searchFields: [] }), query)).not.toHaveProperty('query_by');
  });
});

describe('fromSearchResponse', () => {
  it('maps hits, metadata, highlights, facet counts and numeric facet stats', () => {
    const result = fromSearchResponse(
      definition(),
      { ...query, q: 'desk lamp' },
      {
        found: 12,
        hits: [
          {
            document: { id: 'a', name: 'Desk <lamp>', brand: 'Lumo', price: 25, __metadata: '{"url":"https://x"}' },
            highlight: { name: { value: 'Desk <mark>lamp</mark> & co', matched_tokens: ['lamp'] } },
          },
        ],
        facet_counts: [
          {
            field_name: 'brand',
            counts: [
              { value: 'Lumo', count: 9 },
              { value: 'Brite', count: 3 },
            ],
          },
          { field_name: 'price', counts: [{ value: '25', count: 1 }], stats: { min: 5, max: 50, avg: 20, sum: 240 } },
        ],
      },
    );
    expect(result).toEqual({
      count: 12,
      facets: { brand: { Lumo: 9, Brite: 3 }, price: { 25: 1 } },
      facetsStats: { price: { min: 5, max: 50, avg: 20, sum: 240 } },
      hits: [
        {
          document: {
            id: 'a',
            values: { name: 'Desk <lamp>', brand: 'Lumo', price: 25, new: null, later: null },
            metadata: { url: 'https://x' },
          },
          highlight: {
            name: { value: 'Desk <mark>lamp</mark> &amp; co', matchLevel: 'partial', matchedWords: ['lamp'] },
            brand: { value: 'Lumo', matchLevel: 'none', matchedWords: [] },
          },
        },
      ],
    });
  });

  it('takes the best hit of each group when grouped by the distinct field', () => {
    const result = fromSearchResponse(definition({ distinctField: 'brand' }), query, {
      found: 2,
      grouped_hits: [
        { group_key: ['Lumo'], hits: [{ document: { id: 'a' } }] },
        { group_key: ['Brite'], hits: [{ document: { id: 'c' } }] },
      ],
    });
    expect(result.count).toBe(2);
    expect(result.hits.map((hit) => hit.document.id)).toEqual(['a', 'c']);
  });
});
