import { describe, expect, it } from 'vitest';
import {
  coerceScalar,
  documentIdOf,
  mapDocument,
  mapStoredDocument,
  mergeDocument,
  resolveDefinition,
  storedDocumentMapper,
  type IndexState,
} from '../../src/modules/search/definition';
import { aliasFromName } from '../../src/modules/search/indexes.service';
import { toEngineQuery } from '../../src/modules/search/search-query';
import { indexSettings, indexState } from '../helpers/search-definitions';

const settings = indexSettings;

const state = (overrides: Partial<IndexState> = {}): IndexState => indexState({ id: 'i', tenantId: 't', ...overrides });

describe('coerceScalar', () => {
  it('takes strings for numbers and booleans, as CSV and the public client send them', () => {
    expect(coerceScalar('12.5', 'NUMBER')).toBe(12.5);
    expect(coerceScalar('', 'NUMBER')).toBeUndefined();
    expect(coerceScalar('abc', 'NUMBER')).toBeUndefined();
    expect(coerceScalar('true', 'BOOLEAN')).toBe(true);
    expect(coerceScalar('0', 'BOOLEAN')).toBe(false);
    expect(coerceScalar('yes', 'BOOLEAN')).toBeUndefined();
    expect(coerceScalar(5, 'STRING')).toBe('5');
    expect(coerceScalar(true, 'STRING')).toBeUndefined();
  });
});

describe('mapDocument', () => {
  it('without declared fields: every top-level field but id and metadata, typed by the first value seen', () => {
    const seen = {};
    const mapped = mapDocument(
      { id: 3, name: 'Lamp', price: 10, tags: ['a', 'b'], metadata: { x: 1 } },
      settings(),
      seen,
    );
    expect(mapped.document).toEqual({
      id: '3',
      values: { name: 'Lamp', price: 10, tags: ['a', 'b'] },
      metadata: { x: 1 },
    });
    expect(seen).toEqual({ name: 'STRING', price: 'NUMBER', tags: 'STRING' });
    expect(mapDocument({ id: 4, price: 'ten' }, settings(), seen).problems).toEqual([
      { field: 'price', message: 'must be of type NUMBER' },
    ]);
  });

  it('with declared fields: values from (nested) sources, coerced to the declared type; other fields ignored', () => {
    const declared = settings({
      fields: [
        { from: 'a.b', to: 'price', type: 'NUMBER', label: null },
        { from: 'title', to: 'name', type: null, label: null },
      ],
    });
    expect(mapDocument({ id: 'x', a: { b: '7' }, title: 'T', other: 1 }, declared, {}).document).toEqual({
      id: 'x',
      values: { price: 7, name: 'T' },
      metadata: null,
    });
    expect(mapDocument({ id: 'x', a: { b: 'seven' } }, declared, {}).problems).toEqual([
      { field: 'price', message: 'must be of type NUMBER' },
    ]);
  });

  it('refuses a missing or malformed id, objects as values and reserved names', () => {
    expect(mapDocument({ name: 'x' }, settings(), {}).problems?.[0]?.field).toBe('id');
    expect(mapDocument({ id: '' }, settings(), {}).problems?.[0]?.field).toBe('id');
    expect(mapDocument({ id: 'x'.repeat(513) }, settings(), {}).problems?.[0]?.field).toBe('id');
    expect(mapDocument({ id: 1, size: { w: 1 } }, settings(), {}).problems?.[0]?.field).toBe('size');
    expect(mapDocument({ id: 1, objectID: 'y' }, settings(), {}).problems?.[0]?.field).toBe('objectID');
    expect(mapDocument([1], settings(), {}).problems).toEqual([{ field: '', message: 'must be an object' }]);
  });
});

describe('storedDocumentMapper', () => {
  const declared = settings({
    fields: [
      { from: 'a.b.c', to: 'deep', type: 'NUMBER', label: null },
      { from: 'title', to: 'name', type: null, label: null },
      { from: 'tags', to: 'tags', type: 'STRING', label: null },
    ],
  });

  it('maps many documents with one mapping as each alone, and learns no types from them', () => {
    const seen = {};
    const map = storedDocumentMapper(settings(), seen);
    const documents = [
      { id: 1, price: 10, name: 'Lamp', tags: ['a', null, 'b'] },
      { id: 2, price: 'ten', name: 3, metadata: { m: 1 } },
      { id: 3, price: '', size: { w: 1 } },
    ];
    const one = documents.map((document) => mapStoredDocument(document, settings(), {}));
    expect(documents.map(map)).toEqual(one);
    expect(one).toEqual([
      { id: '1', values: { price: 10, name: 'Lamp', tags: ['a', 'b'] }, metadata: null },
      // Each document is typed by its own values: the first one's NUMBER price is not learnt.
      { id: '2', values: { price: 'ten', name: 3 }, metadata: { m: 1 } },
      { id: '3', values: { price: null, size: null }, metadata: null },
    ]);
    expect(seen).toEqual({});
  });

  it('takes values from nested paths, and null where the path runs into a scalar, an array or nothing', () => {
    const map = storedDocumentMapper(declared, {});
    expect(map({ id: 'x', a: { b: { c: '7' } }, title: 'T', tags: ['x', 2] })).toEqual({
      id: 'x',
      values: { deep: 7, name: 'T', tags: ['x', '2'] },
      metadata: null,
    });
    for (const a of [5, [{ b: { c: 1 } }], null, { b: 'c' }, { b: { d: 1 } }])
      expect(map({ id: 'x', a, title: 'T' })?.values).toEqual({ deep: null, name: 'T', tags: null });
  });

  it('keeps the values that fit of a document that does not fit whole, and drops what cannot be a document', () => {
    const map = storedDocumentMapper(declared, { name: 'NUMBER' });
    expect(map({ id: 7, a: { b: { c: 'seven' } }, title: '12', tags: ['a', true] })).toEqual({
      id: '7',
      values: { deep: null, name: 12, tags: null },
      metadata: null,
    });
    for (const raw of [null, 'text', 5, [{ id: 'x' }], { title: 'no id' }, { id: '' }, { id: true }])
      expect(map(raw)).toBeNull();
  });

  it('maps hostile documents: many keys, deep nesting, huge values, holes in arrays', () => {
    const map = storedDocumentMapper(settings(), {});
    const many: Record<string, unknown> = { id: 'many' };
    for (let i = 0; i < 10_000; i++) many[`k${i}`] = i % 2 ? i : `v${i}`;
    const mapped = map(many)!;
    expect(Object.keys(mapped.values)).toHaveLength(10_000);
    expect(mapped.values.k9999).toBe(9999);
    expect(mapped.values.k10).toBe('v10');

    let deep: Record<string, unknown> = { c: 1 };
    for (let i = 0; i < 10_000; i++) deep = { a: deep };
    expect(map({ id: 'deep', nested: deep, name: 'kept' })!.values).toEqual({ nested: null, name: 'kept' });
    const deepPath = settings({ fields: [{ from: 'a.'.repeat(2_000) + 'a', to: 'far', type: 'STRING', label: null }] });
    expect(storedDocumentMapper(deepPath, {})({ id: 'deep', ...deep })!.values).toEqual({ far: null });

    const huge = 'word '.repeat(200_000);
    const long = Array.from({ length: 100_000 }, (_, i) => i);
    expect(map({ id: 'huge', text: huge, numbers: long })!.values).toEqual({ text: huge, numbers: long });
    // eslint-disable-next-line no-sparse-arrays
    expect(map({ id: 'holes', tags: ['a', , null, 'b'] })!.values).toEqual({ tags: ['a', 'b'] });
  });
});

describe('resolveDefinition', () => {
  it('fills the defaults: STRING fields are searched, filter keys are facets, the built-in ranking rules', () => {
    const definition = resolveDefinition(
      state({
        seenFieldTypes: { price: 'NUMBER', name: 'STRING', brand: 'STRING' },
        filters: [{ key: 'brand' }],
        rankingRules: [],
      }),
    );
    expect(definition.searchFields).toEqual(['brand', 'name']);
    expect(definition.facetFields).toEqual(['brand']);
    expect(definition.filterFields).toEqual(['brand']);
    expect(definition.rankingRules).toEqual(['words', 'typo', 'proximity', 'attribute', 'exactness']);
  });
  it('parses sort rules', () => {
    expect(resolveDefinition(state({ rankingRules: ['typo', 'price:desc'] })).rankingRules).toEqual([
      'typo',
      { field: 'price', direction: 'desc' },
    ]);
  });
});

describe('toEngineQuery', () => {
  const index = state({
    seenFieldTypes: { brand: 'STRING', price: 'NUMBER', new: 'BOOLEAN' },
    filters: [{ key: 'brand' }, { key: 'price' }, { key: 'new' }],
    facetFields: ['brand', 'price'],
  });

  it('coerces filter values by the field type and applies the paging defaults', () => {
    expect(
      toEngineQuery(
        index,
        {
          q: 'lamp',
          filters: [
            { key: 'price', operator: 'gte', values: ['50'] },
            { key: 'new', operator: 'in', values: ['true'] },
          ],
        },
        'body.data[0]',
      ),
    ).toEqual({
      query: {
        q: 'lamp',
        filters: [
          { field: 'price', operator: 'gte', values: [50] },
          { field: 'new', operator: 'in', values: [true] },
        ],
        facets: [],
        limit: 10,
        offset: 0,
        threshold: 1,
        sort: [],
        disjunctiveFacets: false,
      },
    });
  });

  it('sorts by sortable fields (default NUMBER and BOOLEAN); the settings sort applies when the context has none', () => {
    expect(toEngineQuery(index, { sort: ['price:desc', 'new:asc'] }, 'x').query?.sort).toEqual([
      { field: 'price', direction: 'desc' },
      { field: 'new', direction: 'asc' },
    ]);
    expect(toEngineQuery(index, {}, 'x', { sort: ['price:asc'], limit: 12 }).query).toMatchObject({
      sort: [{ field: 'price', direction: 'asc' }],
      limit: 12,
    });
    expect(toEngineQuery(index, { sort: [] }, 'x', { sort: ['price:asc'] }).query?.sort).toEqual([]);
    expect(toEngineQuery(index, { sort: ['brand:asc'] }, 'x').problems).toEqual([
      { field: 'x.sort[0]', message: 'brand is not a sortable field of index products (sortable: new, price)' },
    ]);
    const declared = state({ ...index, sortableFields: ['brand'] });
    expect(toEngineQuery(declared, { sort: ['brand:asc'] }, 'x').query?.sort).toEqual([
      { field: 'brand', direction: 'asc' },
    ]);
    expect(toEngineQuery(declared, { sort: ['price:asc'] }, 'x').problems).toHaveLength(1);
  });

  it('`*` asks for every facet field; null paging values take the defaults', () => {
    expect(toEngineQuery(index, { facets: ['*'], limit: null, offset: null }, 'x').query).toMatchObject({
      facets: ['brand', 'price'],
      limit: 10,
      offset: 0,
    });
  });

  it('names every problem: unknown filter field, range on text, several range values, uncoercible values, unknown facet', () => {
    const result = toEngineQuery(
      index,
      {
        filters: [
          { key: 'colour', operator: 'in', values: ['red'] },
          { key: 'brand', operator: 'lt', values: ['5'] },
          { key: 'price', operator: 'lt', values: ['5', '6'] },
          { key: 'price', operator: 'in', values: ['cheap'] },
        ],
        facets: ['name'],
      },
      'body.data[0]',
    );
    expect(result.problems?.map((problem) => problem.field)).toEqual([
      'body.data[0].filters[0].key',
      'body.data[0].filters[1].operator',
      'body.data[0].filters[2].values',
      'body.data[0].filters[3].values',
      'body.data[0].facets[0]',
    ]);
  });
});

describe('aliasFromName', () => {
  it('makes a lowercase alias of letters, digits and hyphens', () => {
    expect(aliasFromName('Products (NL) — Été 2026')).toBe('products-nl-ete-2026');
    expect(aliasFromName('!!!')).toBe('index');
    expect(aliasFromName('x'.repeat(100))).toHaveLength(56);
  });
});

describe('mergeDocument and documentIdOf', () => {
  it('replaces the given top-level keys, removes those given as null, keeps the id as stored', () => {
    expect(
      mergeDocument(
        { id: 7, name: 'Lamp', price: 10, size: { w: 1 }, metadata: { url: 'u' } },
        { id: '7', price: 12, size: { h: 2 }, metadata: null, colour: 'red' },
      ),
    ).toEqual({ id: 7, name: 'Lamp', price: 12, size: { h: 2 }, colour: 'red' });
  });

  it('takes ids as strings of 1-512 characters or safe integers', () => {
    expect(documentIdOf('a')).toBe('a');
    expect(documentIdOf(42)).toBe('42');
    for (const bad of ['', 'x'.repeat(513), 1.5, null, undefined, true]) expect(documentIdOf(bad)).toBeUndefined();
  });
});
