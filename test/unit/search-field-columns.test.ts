import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { slotFilter } from '../../src/modules/search/engine/column-filters';
import type { EngineFilter, FieldValue, IndexedDocument, Scalar } from '../../src/modules/search/engine/engine';
import { FieldColumns, MISSING, MIXED } from '../../src/modules/search/engine/field-columns';
import { passesFilters } from '../../src/modules/search/engine/filter-match';
import { MemoryIndex } from '../../src/modules/search/engine/memory-index';
import { indexDefinition } from '../helpers/search-definitions';

const doc = (id: string, values: Record<string, FieldValue>): IndexedDocument => ({ id, values, metadata: null });

/** Values a field may hold, the awkward ones included: -0, NaN, a number and its text, arrays, points. */
const scalar = fc.constantFrom<Scalar>(0, -0, 1, 2.5, NaN, Infinity, '1', 'a', 'b', '', true, false);
const value: fc.Arbitrary<FieldValue | undefined> = fc.oneof(
  scalar,
  fc.array(scalar, { maxLength: 4 }),
  fc.constant(null),
  fc.constant(undefined),
  fc.constant({ lat: 10, lng: 20 }),
);
const documents = fc.array(fc.record({ x: value, y: value }), { minLength: 1, maxLength: 30 });
const fieldFilter: fc.Arbitrary<EngineFilter> = fc
  .record({
    field: fc.constantFrom('x', 'y', 'z'),
    operator: fc.constantFrom('in', 'not_in', 'gte', 'gt', 'lt', 'lte', 'exists', 'not_exists', 'geo_radius'),
    values: fc.array(scalar, { minLength: 1, maxLength: 3 }),
  })
  .map((filter) => (filter.operator === 'geo_radius' ? { ...filter, values: [10, 20, 1000] } : filter));
const filter: fc.Arbitrary<EngineFilter> = fc.oneof(
  fieldFilter,
  fc.array(fieldFilter, { minLength: 1, maxLength: 3 }).map((any) => ({ any })),
  fc.array(fieldFilter, { minLength: 1, maxLength: 3 }).map((all) => ({ all })),
);

const toDocuments = (rows: { x: FieldValue | undefined; y: FieldValue | undefined }[], from = 0) =>
  rows.map(({ x, y }, i) => {
    const values: Record<string, FieldValue> = {};
    if (x !== undefined) values.x = x;
    if (y !== undefined) values.y = y;
    return doc(String(from + i), values);
  });

describe('FieldColumns', () => {
  it('codes one value by its id, nothing as MISSING and a point or several values as MIXED', () => {
    const columns = new FieldColumns();
    const slots: (IndexedDocument | undefined)[] = [
      doc('a', { x: 'red' }),
      doc('b', { x: ['red'] }),
      doc('c', { x: null }),
      doc('d', { x: [] }),
      doc('e', {}),
      doc('f', { x: ['red', 'blue'] }),
      doc('g', { x: { lat: 1, lng: 2 } }),
      doc('h', { x: -0 }),
      doc('i', { x: 0 }),
    ];
    const column = columns.of(slots, 'x');
    expect([...column.codes.subarray(0, slots.length)]).toEqual([
      0,
      0,
      MISSING,
      MISSING,
      MISSING,
      MIXED,
      MIXED,
      MIXED,
      2,
    ]);
    // The elements of a MIXED array, and -0 as 0, have ids too, for facets.
    expect(column.values).toEqual(['red', 'blue', 0]);
    expect(Object.is(column.values[2], 0)).toBe(true);
  });

  it('extends a column by the slots appended since, and starts again for another array', () => {
    const columns = new FieldColumns();
    const slots: (IndexedDocument | undefined)[] = [doc('a', { x: 'red' })];
    expect(columns.of(slots, 'x').codes[0]).toBe(0);
    // A removed document empties its slot; a replaced one is appended under a new slot.
    slots[0] = undefined;
    for (let i = 0; i < 2000; i++) slots.push(doc(`n${i}`, { x: i % 2 === 0 ? 'blue' : 'red' }));
    const column = columns.of(slots, 'x');
    expect(column.codes.length).toBeGreaterThanOrEqual(slots.length);
    expect(column.codes[1]).toBe(1);
    expect(column.codes[2]).toBe(0);
    expect(column.codes[2000]).toBe(0);
    expect(column.values).toEqual(['red', 'blue']);
    // A cleared index holds a new array.
    const fresh = columns.of([doc('a', { x: 'green' })], 'x');
    expect(fresh.values).toEqual(['green']);
    expect(fresh.codes[0]).toBe(0);
  });
});

describe('slotFilter', () => {
  it('passes exactly the slots passesFilters passes, as documents are appended between searches', () => {
    fc.assert(
      fc.property(documents, documents, fc.array(filter, { maxLength: 3 }), (first, more, filters) => {
        const columns = new FieldColumns();
        const slots: (IndexedDocument | undefined)[] = toDocuments(first);
        const check = () => {
          const test = slotFilter(filters, slots, columns);
          slots.forEach((document, slot) => {
            if (document)
              expect(test(slot), JSON.stringify({ document, filters })).toBe(passesFilters(document.values, filters));
          });
        };
        check();
        slots[0] = undefined;
        slots.push(...toDocuments(more, first.length));
        check();
      }),
    );
  });
});

/** The facets as counted from each document's values, most frequent first, then by text. */
function expectedFacets(values: (FieldValue | undefined)[]) {
  const counts = new Map<Scalar, number>();
  const numbers: number[] = [];
  for (const one of values) {
    if (one === null || one === undefined || (typeof one === 'object' && !Array.isArray(one))) continue;
    // A Set holds -0 as 0: a single -0 is counted as it is.
    for (const item of Array.isArray(one) ? new Set(one) : [one]) {
      counts.set(item, (counts.get(item) ?? 0) + 1);
      if (typeof item === 'number') numbers.push(item);
    }
  }
  const facet = Object.fromEntries(
    [...counts]
      .map(([item, count]) => [String(item), count] as [string, number])
      .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0)),
  );
  return { facet, numbers };
}

describe('facets from columns', () => {
  const definition = indexDefinition({
    alias: 'items',
    fields: [
      { name: 'name', type: 'STRING' },
      { name: 'x', type: 'NUMBER' },
    ],
    searchFields: ['name'],
    filterFields: ['x'],
    facetFields: ['x'],
    rankingRules: ['words'],
  });

  it('counts every value of the matches, arrays once per document, after upserts, removals and clear', () => {
    fc.assert(
      fc.property(documents, fc.array(fc.integer({ min: 0, max: 29 }), { maxLength: 10 }), (rows, removed) => {
        const index = new MemoryIndex(definition);
        const all: IndexedDocument[] = toDocuments(rows).map((one) => ({
          ...one,
          values: { ...one.values, name: 'item' },
        }));
        index.upsert(all);
        index.search({
          q: '',
          filters: [],
          facets: ['x'],
          limit: 1,
          offset: 0,
          threshold: 1,
          sort: [],
          disjunctiveFacets: false,
        });
        index.remove(removed.map(String));
        const live = all.filter((one) => !removed.includes(Number(one.id)));
        const result = index.search({
          q: 'item',
          filters: [],
          facets: ['x'],
          limit: 1,
          offset: 0,
          threshold: 1,
          sort: [],
          disjunctiveFacets: false,
        });
        const { facet, numbers } = expectedFacets(live.map((one) => one.values.x));
        expect(result.facets.x).toEqual(Object.fromEntries(Object.entries(facet).slice(0, 100)));
        if (numbers.length > 0) {
          let [min, max, sum] = [Infinity, -Infinity, 0];
          for (const n of numbers) {
            if (n < min) min = n;
            if (n > max) max = n;
            sum += n;
          }
          expect(result.facetsStats.x).toEqual({ min, max, sum, avg: sum / numbers.length });
        } else expect(result.facetsStats.x).toBeUndefined();
        index.clear();
        index.upsert([doc('new', { name: 'item', x: 7 })]);
        expect(
          index.search({
            q: 'item',
            filters: [],
            facets: ['x'],
            limit: 1,
            offset: 0,
            threshold: 1,
            sort: [],
            disjunctiveFacets: false,
          }).facets.x,
        ).toEqual({ 7: 1 });
      }),
    );
  });
});
