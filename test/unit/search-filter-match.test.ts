import { describe, expect, it } from 'vitest';
import type { EngineFilter } from '../../src/modules/search/engine/engine';
import { filtersWithout, passesFilters } from '../../src/modules/search/engine/filter-match';

const shirt = { brand: 'Acme', size: [38, 40], price: 20, colour: null };

describe('passesFilters', () => {
  it('in, not_in, ranges, exists and not_exists on single and array values', () => {
    const cases: [EngineFilter, boolean][] = [
      [{ field: 'brand', operator: 'in', values: ['Acme', 'Globex'] }, true],
      [{ field: 'size', operator: 'in', values: [40] }, true],
      [{ field: 'brand', operator: 'not_in', values: ['Acme'] }, false],
      [{ field: 'size', operator: 'not_in', values: [39, 41] }, true],
      [{ field: 'size', operator: 'not_in', values: [40] }, false],
      // Without the field, not_in holds and every other value condition fails.
      [{ field: 'colour', operator: 'not_in', values: ['red'] }, true],
      [{ field: 'colour', operator: 'in', values: ['red'] }, false],
      [{ field: 'price', operator: 'gte', values: [20] }, true],
      [{ field: 'price', operator: 'gt', values: [20] }, false],
      [{ field: 'size', operator: 'lt', values: [39] }, true],
      [{ field: 'price', operator: 'exists', values: [] }, true],
      [{ field: 'colour', operator: 'exists', values: [] }, false],
      [{ field: 'colour', operator: 'not_exists', values: [] }, true],
      [{ field: 'unknown', operator: 'not_exists', values: [] }, true],
    ];
    for (const [filter, expected] of cases)
      expect(passesFilters(shirt, [filter]), JSON.stringify(filter)).toBe(expected);
  });

  it('any needs one member, all every member, and the list every filter', () => {
    const acme: EngineFilter = { field: 'brand', operator: 'in', values: ['Acme'] };
    const cheap: EngineFilter = { field: 'price', operator: 'lt', values: [10] };
    const red: EngineFilter = { field: 'colour', operator: 'in', values: ['red'] };
    expect(passesFilters(shirt, [{ any: [cheap, acme] }])).toBe(true);
    expect(passesFilters(shirt, [{ any: [cheap, red] }])).toBe(false);
    expect(
      passesFilters(shirt, [{ any: [red, { all: [acme, { field: 'size', operator: 'in', values: [38] }] }] }]),
    ).toBe(true);
    expect(passesFilters(shirt, [{ any: [red, { all: [acme, cheap] }] }])).toBe(false);
    expect(passesFilters(shirt, [acme, cheap])).toBe(false);
    expect(passesFilters(shirt, [])).toBe(true);
  });
});

describe('filtersWithout', () => {
  it("leaves out the filters about the facet's field alone, groups included", () => {
    const brandIn: EngineFilter = { field: 'brand', operator: 'in', values: ['Acme'] };
    const brandAny: EngineFilter = {
      any: [brandIn, { field: 'brand', operator: 'not_exists', values: [] }],
    };
    const mixed: EngineFilter = { any: [brandIn, { field: 'price', operator: 'lt', values: [10] }] };
    const price: EngineFilter = { field: 'price', operator: 'gte', values: [5] };
    expect(filtersWithout([brandIn, brandAny, mixed, price], 'brand')).toEqual([mixed, price]);
    expect(filtersWithout([brandIn, brandAny, mixed, price], 'price')).toEqual([brandIn, brandAny, mixed]);
  });
});
