/**
 * Filters as Typesense `filter_by` expressions: the query's filters, a rule's boost and bury, and
 * the deletes of documents by id.
 */
import type { EngineFilter, EngineQuery, Scalar } from './engine';
import { PRESENT_FIELDS_FIELD } from './typesense-mapping';

const quote = (value: Scalar) => (typeof value === 'string' ? `\`${value.replaceAll('`', '')}\`` : String(value));

const RANGE_SYMBOLS = { gte: '>=', gt: '>', lt: '<', lte: '<=' } as const;

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
    default:
      return `${field}:${RANGE_SYMBOLS[operator]}${values[0]}`;
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
