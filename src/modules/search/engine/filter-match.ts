/**
 * Whether a document's values pass filters: the one definition of what a filter means in this
 * service, used by the embedded engine's searches and by deleting documents by a filter.
 */
import {
  hasValue,
  isGeoPoint,
  valuesOf,
  type EngineFilter,
  type FieldFilter,
  type FieldValue,
  type Scalar,
} from './engine';
import { insideBox, withinRadius } from './geo';

function matchesValue(value: Scalar, filter: FieldFilter): boolean {
  const bound = filter.values[0] as number;
  switch (filter.operator) {
    case 'in':
      return filter.values.includes(value);
    case 'gte':
      return typeof value === 'number' && value >= bound;
    case 'gt':
      return typeof value === 'number' && value > bound;
    case 'lt':
      return typeof value === 'number' && value < bound;
    case 'lte':
      return typeof value === 'number' && value <= bound;
    default:
      return false;
  }
}

/** Whether a point passes a geo filter: a document without one does not. */
function passesGeoFilter(value: FieldValue | undefined, filter: FieldFilter): boolean {
  if (!isGeoPoint(value)) return false;
  const [a, b, c, d] = filter.values as number[];
  return filter.operator === 'geo_radius'
    ? withinRadius(value, { lat: a!, lng: b! }, c!)
    : insideBox(value, { south: a!, west: b!, north: c!, east: d! });
}

/** Whether a field's value passes a filter of that field. */
export function passesFieldFilter(value: FieldValue | undefined, filter: FieldFilter): boolean {
  const items = valuesOf(value);
  switch (filter.operator) {
    case 'exists':
      return hasValue(value);
    case 'not_exists':
      return !hasValue(value);
    case 'geo_radius':
    case 'geo_bbox':
      return passesGeoFilter(value, filter);
    case 'not_in':
      return !items.some((item) => filter.values.includes(item));
    default:
      return items.some((item) => matchesValue(item, filter));
  }
}

export const isFieldFilter = (filter: EngineFilter): filter is FieldFilter => 'field' in filter;

function passes(values: Record<string, FieldValue>, filter: EngineFilter): boolean {
  if (isFieldFilter(filter)) return passesFieldFilter(values[filter.field], filter);
  if ('any' in filter) return filter.any.some((member) => passes(values, member));
  return filter.all.every((member) => passes(values, member));
}

/** Every filter holds. A field filter holds when the field has a value (or an array element) that matches it. */
export function passesFilters(values: Record<string, FieldValue>, filters: EngineFilter[]): boolean {
  for (const filter of filters) if (!passes(values, filter)) return false;
  return true;
}

/** The fields a filter is about. */
export function filterFields(filter: EngineFilter): Set<string> {
  if (isFieldFilter(filter)) return new Set([filter.field]);
  return new Set(('any' in filter ? filter.any : filter.all).flatMap((member) => [...filterFields(member)]));
}

/**
 * The filters a facet of `field` is counted under when faceting is disjunctive: all but those about
 * that field alone, so the facet lists every value a shopper could still add to their choice.
 */
export const filtersWithout = (filters: EngineFilter[], field: string) =>
  filters.filter((filter) => {
    const fields = filterFields(filter);
    return !(fields.size === 1 && fields.has(field));
  });
