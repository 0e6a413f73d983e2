/**
 * Filters as Typesense `filter_by` expressions: the query's filters, a rule's boost and bury, and
 * the deletes of documents by id.
 */
import type { EngineFilter, EngineQuery, Scalar } from './engine';
import { PRESENT_FIELDS_FIELD } from './typesense-mapping';

const quote = (value: Scalar) => (typeof value === 'string' ? `\`${value.replaceAll('`', '')}\`` : String(value));

const RANGE_SYMBOLS = { gte: '>=', gt: '>', lt: '<', lte: '<=' } as const;

/** A polygon of a box's corners, counter-clockwise from the south-west one. */
const boxPolygon = (field: string, south: number, west: number, north: number, east: number) =>
  `${field}:([${south}, ${west}, ${south}, ${east}, ${north}, ${east}, ${north}, ${west}])`;

/**
 * A bounding box as Typesense's polygon filter; a box across the 180th meridian (west above east)
 * as the two boxes either side of it.
 */
function toBoxExpression(field: string, [south, west, north, east]: number[]): string {
  if (west! <= east!) return boxPolygon(field, south!, west!, north!, east!);
  return `(${boxPolygon(field, south!, west!, north!, 180)} || ${boxPolygon(field, south!, -180, north!, east!)})`;
}

function toFilterExpression(filter: EngineFilter): string {
  if ('any' in filter) return `(${filter.any.map(toFilterExpression).join(' || ')})`;
  if ('all' in filter) return `(${filter.all.map(toFilterExpression).join(' && ')})`;
  const { field, operator, values } = filter;
  const has = `${PRESENT_FIELDS_FIELD}:=[${quote(field)}]`;
  switch (operator) {
    case 'in':
      return `${field}:=[${values.map(quote).join(',')}]`;
    // A document without the field passes; that `!=` lets it through is not something to rely on.
    case 'not_in':
      return `(${field}:!=[${values.map(quote).join(',')}] || ${PRESENT_FIELDS_FIELD}:!=[${quote(field)}])`;
    case 'exists':
      return has;
    case 'not_exists':
      return `${PRESENT_FIELDS_FIELD}:!=[${quote(field)}]`;
    case 'geo_radius': {
      // Typesense filters a radius above `exact_filter_radius` (10 km by default) approximately: not here.
      const [lat, lng, meters] = values as number[];
      // To the millimeter: a mile is not a round number of kilometers in binary.
      const km = `${Number((meters! / 1000).toFixed(6))} km`;
      return `${field}:([${lat}, ${lng}], radius: ${km}, exact_filter_radius: ${km})`;
    }
    case 'geo_bbox':
      return toBoxExpression(field, values as number[]);
    default:
      return `${field}:${RANGE_SYMBOLS[operator as keyof typeof RANGE_SYMBOLS]}${values[0]}`;
  }
}

export function toFilterBy(filters: EngineFilter[]): string | undefined {
  if (filters.length === 0) return undefined;
  return filters.map(toFilterExpression).join(' && ');
}

/** Longest `filter_by` of one delete request: it travels in the query string. */
export const MAX_DELETE_FILTER_LENGTH = 3_000;

/**
 * Deletes of documents by id: `filter_by` values of `id:[...]` lists, each short enough for a query
 * string, and the ids to delete one by one because a backtick cannot be quoted in a filter.
 */
export function deletionsOf(ids: string[]): { filters: string[]; oneByOne: string[] } {
  const filters: string[] = [];
  const oneByOne: string[] = [];
  let batch: string[] = [];
  let length = 0;
  const flush = () => {
    if (batch.length > 0) filters.push(`id:[${batch.join(',')}]`);
    batch = [];
    length = 0;
  };
  for (const id of ids) {
    if (id.includes('`')) {
      oneByOne.push(id);
      continue;
    }
    const quoted = `\`${id}\``;
    if (length + quoted.length + 1 > MAX_DELETE_FILTER_LENGTH) flush();
    batch.push(quoted);
    length += quoted.length + 1;
  }
  flush();
  return { filters, oneByOne };
}

/**
 * A rule's boost and bury as one `_eval` sort part: Typesense scores a document by the first listed
 * expression it matches (0 for none), so the buried come first at -1 (bury wins), the boosted at 1.
 */
export function toEvalSort(query: Pick<EngineQuery, 'boost' | 'bury'>): string | undefined {
  const entries: string[] = [];
  if (query.bury?.length) entries.push(`(${query.bury.map((filter) => toFilterBy([filter])).join(' || ')}):-1`);
  if (query.boost?.length) entries.push(`(${query.boost.map((filter) => toFilterBy([filter])).join(' || ')}):1`);
  return entries.length > 0 ? `_eval([${entries.join(',')}]):desc` : undefined;
}
