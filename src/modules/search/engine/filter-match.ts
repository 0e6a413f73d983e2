/**
 * Whether a document's values pass filters: the one definition of what a filter means in this
 * service, used by the embedded engine's searches and by deleting documents by a filter.
 */
import type { EngineFilter, FieldValue, Scalar } from './engine';

function matchesFilter(value: Scalar, filter: EngineFilter): boolean {
  if (filter.operator === 'in') return filter.values.includes(value);
  if (typeof value !== 'number') return false;
  const bound = filter.values[0] as number;
  switch (filter.operator) {
    case 'gte':
      return value >= bound;
    case 'gt':
      return value > bound;
    case 'lt':
      return value < bound;
    case 'lte':
      return value <= bound;
  }
}

/** Every filter holds: the field has a value (or, for an array, an element) that matches it. */
export function passesFilters(values: Record<string, FieldValue>, filters: EngineFilter[]): boolean {
  for (const filter of filters) {
    const value = values[filter.field];
    if (value === null || value === undefined) return false;
    if (Array.isArray(value) ? !value.some((item) => matchesFilter(item, filter)) : !matchesFilter(value, filter))
      return false;
  }
  return true;
}
