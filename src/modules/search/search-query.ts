/**
 * Pure translation of one search context of the API into an engine query for one index: filters
 * checked against the index's filterable fields and coerced to their types, facets checked, and
 * the paging defaults applied.
 */
import { coerceScalar, effectiveFacetFields, fieldType, filterableFields, type IndexState } from './definition';
import type { EngineFilter, EngineQuery, Scalar } from './engine/engine';
import { DEFAULT_SEARCH_LIMIT, DEFAULT_THRESHOLD, type SearchContextData } from './search.schemas';
import type { FieldProblem } from '../../kernel/errors';

export type QueryTranslation =
  { query: EngineQuery; problems?: undefined } | { query?: undefined; problems: FieldProblem[] };

/** `where` prefixes problem fields, e.g. `[0]` for the first context of a request. */
export function toEngineQuery(
  index: IndexState,
  context: SearchContextData,
  where: string,
  defaultLimit = DEFAULT_SEARCH_LIMIT,
): QueryTranslation {
  const problems: FieldProblem[] = [];
  const filterable = new Set(filterableFields(index));
  const filters: EngineFilter[] = [];
  (context.filters ?? []).forEach((filter, i) => {
    const field = `${where}.filters[${i}]`;
    if (!filterable.has(filter.key)) {
      problems.push({
        field: `${field}.key`,
        message: `${filter.key} is not a filterable field of index ${index.alias}`,
      });
      return;
    }
    const type = fieldType(index, filter.key);
    if (filter.operator !== 'in') {
      if (type !== null && type !== 'NUMBER') {
        problems.push({
          field: `${field}.operator`,
          message: `${filter.operator} needs a NUMBER field; ${filter.key} is ${type}`,
        });
        return;
      }
      if (filter.values.length !== 1) {
        problems.push({ field: `${field}.values`, message: `${filter.operator} takes exactly one value` });
        return;
      }
    }
    const valueType = filter.operator === 'in' ? (type ?? 'STRING') : 'NUMBER';
    const values = filter.values.map((value) => coerceScalar(value, valueType));
    if (values.some((value) => value === undefined)) {
      problems.push({ field: `${field}.values`, message: `must be of type ${valueType}` });
      return;
    }
    filters.push({ field: filter.key, operator: filter.operator, values: values as Scalar[] });
  });

  const facetFields = effectiveFacetFields(index);
  const requested = context.facets ?? [];
  const facets = requested.includes('*') ? facetFields : requested;
  for (const [i, facet] of facets.entries()) {
    if (!facetFields.includes(facet))
      problems.push({
        field: `${where}.facets[${i}]`,
        message: `${facet} is not a facet field of index ${index.alias}`,
      });
  }
  if (problems.length > 0) return { problems };
  return {
    query: {
      q: context.q ?? '',
      filters,
      facets: [...new Set(facets)],
      limit: context.limit ?? defaultLimit,
      offset: context.offset ?? 0,
      threshold: context.threshold ?? DEFAULT_THRESHOLD,
    },
  };
}
