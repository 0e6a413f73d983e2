import { describe, expect, it } from 'vitest';
import {
  allocateProportionally,
  divideHalfEven,
  exclusiveTax,
  inclusiveTax,
  percentOf,
} from '../../src/modules/pricing/rounding';
import { computeTax, noTax } from '../../src/modules/pricing/tax';
import type { TaxRateRecord } from '../../src/modules/pricing/pricing.types';

/**
 * The selling rounding rule against cases computed by hand (the comment of each gives the exact
 * value): tax per item, half-even to the minor unit, then summed; one tax line per rate.
 */
describe('half-even division', () => {
  it('rounds ties to the even neighbour, both ways, and everything else to the nearest', () => {
    expect(divideHalfEven(5n, 2n)).toBe(2n); // 2.5 → 2
    expect(divideHalfEven(7n, 2n)).toBe(4n); // 3.5 → 4
    expect(divideHalfEven(-5n, 2n)).toBe(-2n); // −2.5 → −2
    expect(divideHalfEven(-7n, 2n)).toBe(-4n); // −3.5 → −4
    expect(divideHalfEven(1n, 3n)).toBe(0n); // 0.33 → 0
    expect(divideHalfEven(2n, 3n)).toBe(1n); // 0.67 → 1
    expect(divideHalfEven(10n, -4n)).toBe(-2n); // −2.5 → −2
    expect(() => divideHalfEven(1n, 0n)).toThrow(RangeError);
  });
});

describe('exclusive tax: round(amount × rate)', () => {
  it('is exact when it can be and rounds half-even on ties', () => {
    expect(exclusiveTax(1000, 2000)).toBe(200); // 10.00 at 20 % = 2.00
    expect(exclusiveTax(25, 1000)).toBe(2); // 2.5 → 2 (tie, to even)
    expect(exclusiveTax(35, 1000)).toBe(4); // 3.5 → 4 (tie, to even)
    expect(exclusiveTax(1999, 1900)).toBe(380); // 379.81 → 380
    expect(exclusiveTax(1999, 700)).toBe(140); // 139.93 → 140
    expect(exclusiveTax(0, 2000)).toBe(0);
    expect(exclusiveTax(1999, 0)).toBe(0); // the zero rate
  });

  it('has no float error on large amounts', () => {
    // 5 502 136 236 935 952 × 0.2 = 1 100 427 247 387 190.4 → …190 (floats say …191).
    expect(exclusiveTax(5_502_136_236_935_952, 2000)).toBe(1_100_427_247_387_190);
    // 8 075 444 290 250 178 × 0.07 = 565 281 100 317 512.46 → …512 (floats say …513).
    expect(exclusiveTax(8_075_444_290_250_178, 700)).toBe(565_281_100_317_512);
    expect(() => exclusiveTax(Number.MAX_SAFE_INTEGER + 1, 2000)).toThrow(RangeError);
    expect(() => exclusiveTax(100, -1)).toThrow(RangeError);
    expect(() => exclusiveTax(100.5, 2000)).toThrow(RangeError);
  });
});

describe('inclusive tax: amount − round(amount / (1 + rate))', () => {
  it('takes the tax out of gross amounts, ties half-even both ways', () => {
    expect(inclusiveTax(1200, 2000)).toBe(200); // net 1000 exactly
    expect(inclusiveTax(1999, 1900)).toBe(319); // net 1679.83 → 1680
    expect(inclusiveTax(1999, 2000)).toBe(333); // net 1665.83 → 1666
    expect(inclusiveTax(500, 700)).toBe(33); // net 467.29 → 467
    expect(inclusiveTax(4, 6000)).toBe(2); // net 4 / 1.6 = 2.5 → 2 (tie, to even): tax 2
    expect(inclusiveTax(12, 6000)).toBe(4); // net 12 / 1.6 = 7.5 → 8 (tie, to even): tax 4
    expect(inclusiveTax(5, 10000)).toBe(3); // net 2.5 → 2: tax 3
    expect(inclusiveTax(7, 10000)).toBe(3); // net 3.5 → 4: tax 3
    expect(inclusiveTax(1999, 0)).toBe(0);
  });

  it('has no float error on large amounts', () => {
    // 9 007 199 254 740 991 / 1.19 = 7 569 074 163 984 026.05 → …026: tax 1 438 124 250 756 965.
    expect(inclusiveTax(Number.MAX_SAFE_INTEGER, 1900)).toBe(1_438_124_250_756_965);
  });
});

describe('percentages and the largest-remainder split', () => {
  it('takes a percentage half-even', () => {
    expect(percentOf(1999, 1000)).toBe(200); // 10 % of 19.99 = 1.999 → 2.00
    expect(percentOf(25, 1000)).toBe(2); // 2.5 → 2
  });

  it('splits a total in proportion, the units left to the largest remainders, summing exactly', () => {
    // 100 × (2, 3, 5, 7) / 17 = 11.76, 17.65, 29.41, 41.18: floors 98, remainders 13, 11, 7, 3 (/17).
    expect(allocateProportionally(100, [2, 3, 5, 7])).toEqual([12, 18, 29, 41]);
    // Equal remainders: the earlier lines first.
    expect(allocateProportionally(10, [1, 1, 1])).toEqual([4, 3, 3]);
    expect(allocateProportionally(100, [50, 30, 20])).toEqual([50, 30, 20]);
    expect(allocateProportionally(1, [0, 0])).toEqual([1, 0]);
    expect(allocateProportionally(0, [5, 5])).toEqual([0, 0]);
    expect(allocateProportionally(5, [])).toEqual([]);
    const shares = allocateProportionally(999_999, [1, 7, 13, 29, 31]);
    expect(shares.reduce((a, b) => a + b, 0)).toBe(999_999);
  });
});

const RATES: TaxRateRecord[] = [
  { taxClass: 'standard', name: 'VAT', rateBasisPoints: 2000 },
  { taxClass: 'reduced', name: 'VAT reduced', rateBasisPoints: 700 },
  { taxClass: 'zero', name: 'VAT zero', rateBasisPoints: 0 },
];

describe('the tax of several items', () => {
  const items = [
    { key: 'a', amount: 1999, taxClass: 'standard' as const },
    { key: 'b', amount: 1999, taxClass: 'standard' as const },
    { key: 'c', amount: 500, taxClass: 'reduced' as const },
    { key: 'd', amount: 300, taxClass: 'zero' as const },
  ];

  it('exclusive: per item, then summed, one line per rate (none for the zero rate)', () => {
    const result = computeTax(RATES, { taxInclusive: false, items });
    // a, b: 399.8 → 400; c: 35 exactly; d: zero class.
    expect([...result.items]).toEqual([
      ['a', 400],
      ['b', 400],
      ['c', 35],
      ['d', 0],
    ]);
    expect(result.lines).toEqual([
      { name: 'VAT', rateBasisPoints: 2000, amount: 800 },
      { name: 'VAT reduced', rateBasisPoints: 700, amount: 35 },
    ]);
    expect(result.total).toBe(835);
  });

  it('inclusive: the same items hold less tax', () => {
    const result = computeTax(RATES, { taxInclusive: true, items });
    // a, b: 1999 − 1666 = 333; c: 500 − 467 = 33.
    expect(result.items.get('a')).toBe(333);
    expect(result.items.get('c')).toBe(33);
    expect(result.items.get('d')).toBe(0);
    expect(result.lines).toEqual([
      { name: 'VAT', rateBasisPoints: 2000, amount: 666 },
      { name: 'VAT reduced', rateBasisPoints: 700, amount: 33 },
    ]);
    expect(result.total).toBe(699);
  });

  it('rounds per line, not on the sum', () => {
    // Two lines of 10.05 at 10 %: 1.005 each → 1.00 (tie to even), 2.00 in all; 20.10 at once would be 2.01.
    const ten = [{ taxClass: 'standard' as const, name: 'GST', rateBasisPoints: 1000 }];
    const result = computeTax(ten, {
      taxInclusive: false,
      items: [
        { key: 'x', amount: 1005, taxClass: 'standard' },
        { key: 'y', amount: 1005, taxClass: 'standard' },
      ],
    });
    expect(result.total).toBe(200);
    expect(result.lines).toEqual([{ name: 'GST', rateBasisPoints: 1000, amount: 200 }]);
  });

  it('taxes a class without a rate at zero, and nothing without a zone', () => {
    const onlyStandard = RATES.slice(0, 1);
    const result = computeTax(onlyStandard, { taxInclusive: false, items });
    expect(result.items.get('c')).toBe(0);
    expect(result.total).toBe(800);
    expect(noTax({ items })).toEqual({ items: new Map(items.map((i) => [i.key, 0])), lines: [], total: 0 });
  });
});
