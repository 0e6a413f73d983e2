/**
 * The pure parts of boosting and burying: the embedded engine's ranking key, the rule's filters as
 * engine filters, the `_eval` sort part sent to Typesense, and the stand-in's parse of `sort_by`.
 */
import { describe, expect, it } from 'vitest';
import type { IndexState } from '../../src/modules/search/definition';
import { BOOSTED, BURIED, NEUTRAL, boostKeys, boostRank } from '../../src/modules/search/engine/boost';
import type { FieldFilter, FieldValue, IndexDefinition } from '../../src/modules/search/engine/engine';
import { toEvalSort } from '../../src/modules/search/engine/typesense-filters';
import { toSortBy } from '../../src/modules/search/engine/typesense-query';
import { boostProblems, boostsOf } from '../../src/modules/search/rule-boosts';
import { parseSortBy } from '../helpers/typesense-stand-in';
import { indexDefinition, indexState } from '../helpers/search-definitions';

const sitwell: FieldFilter = { field: 'brand', operator: 'in', values: ['Sitwell'] };
const cheap: FieldFilter = { field: 'price', operator: 'lt', values: [45] };
const outOfStock: FieldFilter = { field: 'in_stock', operator: 'in', values: [false] };

describe('boostRank', () => {
  it('boosted when any boost filter holds, buried when any bury filter holds, bury winning', () => {
    const query = { boost: [sitwell, cheap], bury: [outOfStock] };
    expect(boostRank({ brand: 'Sitwell', price: 50, in_stock: true }, query)).toBe(BOOSTED);
    expect(boostRank({ brand: 'Basic', price: 40, in_stock: true }, query)).toBe(BOOSTED);
    expect(boostRank({ brand: 'Basic', price: 50, in_stock: true }, query)).toBe(NEUTRAL);
    expect(boostRank({ brand: 'Basic', price: 50, in_stock: false }, query)).toBe(BURIED);
    expect(boostRank({ brand: 'Sitwell', price: 40, in_stock: false }, query)).toBe(BURIED);
    // An array value holds when an element does; a missing field holds no `in`.
    expect(boostRank({ brand: ['Basic', 'Sitwell'] }, query)).toBe(BOOSTED);
    expect(boostRank({}, query)).toBe(NEUTRAL);
    expect(BOOSTED < NEUTRAL && NEUTRAL < BURIED).toBe(true);
  });
});

describe('boostKeys', () => {
  const documents: Record<string, FieldValue>[] = [
    { brand: 'Basic' },
    { brand: 'Sitwell' },
    { brand: 'Lumo', in_stock: false },
  ];

  it('one key per slot, reading each document once', () => {
    const read: number[] = [];
    const keys = boostKeys([2, 0, 1], (slot) => (read.push(slot), documents[slot]!), {
      boost: [sitwell],
      bury: [outOfStock],
    });
    expect(Array.from(keys!)).toEqual([BURIED, NEUTRAL, BOOSTED]);
    expect(read).toEqual([2, 0, 1]);
  });

  it('nothing at all (no key, no document read) without boost or bury', () => {
    const read: number[] = [];
    const valuesOf = (slot: number) => (read.push(slot), documents[slot]!);
    expect(boostKeys([0, 1, 2], valuesOf, {})).toBeUndefined();
    expect(boostKeys([0, 1, 2], valuesOf, { boost: [], bury: [] })).toBeUndefined();
    expect(read).toEqual([]);
  });
});

const state = (overrides: Partial<IndexState> = {}): IndexState =>
  indexState({
    id: 'i',
    tenantId: 't',
    alias: 'shop',
    seenFieldTypes: { brand: 'STRING', price: 'NUMBER', in_stock: 'BOOLEAN', name: 'STRING' },
    filters: [{ key: 'brand' }, { key: 'price' }, { key: 'in_stock' }],
    ...overrides,
  });

describe('boostProblems and boostsOf', () => {
  it('checks each filter like a search filter, naming its place', () => {
    expect(
      boostProblems(
        state(),
        {
          boost: [
            { key: 'brand', operator: 'in', values: ['a'] },
            { key: 'name', operator: 'in', values: ['a'] },
          ],
          bury: [{ key: 'price', operator: 'in', values: ['cheap'] }],
        },
        '[3]',
      ),
    ).toEqual([
      { field: '[3].boost[1].key', message: 'name is not a filterable field of index shop' },
      { field: '[3].bury[0].values', message: 'must be of type NUMBER' },
    ]);
    expect(boostProblems(state(), {}, '[0]')).toEqual([]);
  });

  it("coerces the values to the fields' types and adds nothing for a rule without boost or bury", () => {
    expect(
      boostsOf(state(), {
        boost: [{ key: 'price', operator: 'lt', values: ['45'] }],
        bury: [{ key: 'in_stock', operator: 'in', values: ['false'] }],
      }),
    ).toEqual({ boost: [cheap], bury: [outOfStock] });
    expect(boostsOf(state(), {})).toEqual({});
    expect(boostsOf(state(), { boost: [], bury: [] })).toEqual({});
  });

  it('leaves out a filter whose field is no longer filterable, and the list when none is left', () => {
    const rule = {
      boost: [
        { key: 'brand', operator: 'in' as const, values: ['Sitwell'] },
        { key: 'price', operator: 'lt' as const, values: [45] },
      ],
      bury: [{ key: 'brand', operator: 'in' as const, values: ['Basic'] }],
    };
    expect(boostsOf(state({ filters: [{ key: 'price' }] }), rule)).toEqual({ boost: [cheap] });
  });
});

const definition = (overrides: Partial<IndexDefinition> = {}): IndexDefinition =>
  indexDefinition({
    id: 'i',
    tenantId: 't',
    alias: 'shop',
    fields: [
      { name: 'brand', type: 'STRING' },
      { name: 'price', type: 'NUMBER' },
    ],
    searchFields: ['brand'],
    filterFields: ['brand', 'price'],
    sortableFields: ['price'],
    ...overrides,
  });

describe('toEvalSort and toSortBy', () => {
  it('lists the buried first at -1, then the boosted at 1, each list joined by ||', () => {
    expect(toEvalSort({})).toBeUndefined();
    expect(toEvalSort({ boost: [], bury: [] })).toBeUndefined();
    expect(toEvalSort({ boost: [sitwell, cheap], bury: [outOfStock] })).toBe(
      '_eval([(in_stock:=[false]):-1,(brand:=[`Sitwell`] || price:<45):1]):desc',
    );
    // A backtick cannot be quoted in a Typesense filter; it is left out, as in filter_by.
    expect(toEvalSort({ bury: [{ field: 'brand', operator: 'in', values: ['a`b'] }] })).toBe(
      '_eval([(brand:=[`ab`]):-1]):desc',
    );
  });

  it('places _eval after the ranking rules (custom ones too), before the id, within three fields', () => {
    const promoted = { boost: [sitwell] };
    const part = '_eval([(brand:=[`Sitwell`]):1]):desc';
    expect(toSortBy(definition(), [], promoted)).toBe(`_text_match:desc,${part},__id:asc`);
    expect(toSortBy(definition(), [], { ...promoted, wildcard: true })).toBe(`${part},__id:asc`);
    const custom = definition({ rankingRules: [{ field: 'price', direction: 'desc' }, 'words'] });
    expect(toSortBy(custom, [], promoted)).toBe(`price(missing_values: last):desc,_text_match:desc,${part}`);
    // Without boost or bury, a wildcard search keeps its sort as before.
    expect(toSortBy(definition(), [], { wildcard: true })).toBe('_text_match:desc,__id:asc');
  });

  it('what the adapter sends, the stand-in parses back into the same expressions', () => {
    const sent = toSortBy(definition(), [], { boost: [sitwell, cheap], bury: [outOfStock] })!;
    expect(parseSortBy(sent)).toEqual([
      { field: '_text_match', order: 'desc' },
      {
        eval: [
          { expression: 'in_stock:=[false]', score: -1 },
          { expression: 'brand:=[`Sitwell`] || price:<45', score: 1 },
        ],
        order: 'DESC',
      },
      { field: '__id', order: 'asc' },
    ]);
  });
});

describe('parseSortBy (stand-in)', () => {
  it('reads fields with their options and both forms of _eval', () => {
    expect(parseSortBy('__sort_price(missing_values: last):asc')).toEqual([{ field: '__sort_price', order: 'asc' }]);
    expect(parseSortBy('_eval(brand:=[`a`]):desc')).toEqual([
      { eval: [{ expression: 'brand:=[`a`]', score: 1 }], order: 'DESC' },
    ]);
    expect(parseSortBy('')).toEqual([]);
  });

  it('refuses what Typesense refuses', () => {
    const malformed = { code: 400, error: 'Parameter `sort_by` is malformed.' };
    expect(parseSortBy('_eval([(brand:=[`a`]):1.5]):desc')).toEqual(malformed);
    expect(parseSortBy('_eval([(brand:=[`a`]):1]:desc')).toEqual(malformed);
    expect(parseSortBy('_eval([brand:=[`a`]:1]):desc')).toEqual(malformed);
    expect(parseSortBy('price')).toEqual(malformed);
    expect(parseSortBy('price:up')).toEqual({
      code: 400,
      error: 'Order for field` price` should be either ASC or DESC.',
    });
  });
});
