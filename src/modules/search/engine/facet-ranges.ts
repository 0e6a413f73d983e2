/** Counting documents in named ranges of a NUMBER field, shared by the embedded engine's facets. */
import type { FacetRange, FacetRangeCount, FieldValue } from './engine';

export const inRange = (value: number, range: FacetRange) =>
  (range.from === null || value >= range.from) && (range.to === null || value < range.to);

/** Each range with the number of documents that have a value in it (a document once per range). */
export function countRanges(values: Iterable<FieldValue | undefined>, ranges: FacetRange[]): FacetRangeCount[] {
  const counts = ranges.map((range) => ({ ...range, count: 0 }));
  for (const value of values) {
    if (value === null || value === undefined) continue;
    const numbers = (Array.isArray(value) ? value : [value]).filter((item): item is number => typeof item === 'number');
    for (const counted of counts) if (numbers.some((number) => inRange(number, counted))) counted.count += 1;
  }
  return counts;
}
