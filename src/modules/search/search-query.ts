/**
 * Pure translation of one search context of the API into an engine query for one index: filters
 * checked against the index's filterable fields and coerced to their types, facets checked, and
 * the paging defaults applied.
 */
import {
  coerceScalar,
  effectiveFacetFields,
  effectiveSortableFields,
  fieldType,
  filterableFields,
  parseRankingRule,
  type IndexState,
} from './definition';
import type { EngineFilter, EngineQuery, FieldFilter, FilterOperator, Scalar, SortKey } from './engine/engine';
import {
  DEFAULT_SEARCH_LIMIT,
  DEFAULT_THRESHOLD,
  type FieldFilterData,
  type FilterData,
  type SearchContextData,
} from './search.schemas';
import type { FieldProblem } from '../../kernel/errors';

export type QueryTranslation =
  { query: EngineQuery; problems?: undefined } | { query?: undefined; problems: FieldProblem[] };

/** A field filter as the API takes it, before it is checked against an index. */
export interface FilterInput {
  key: string;
  operator: FilterOperator;
  values?: (string | number | boolean)[];
}

type Allowed = { has(name: string): boolean; what: string };
type Translated = { filter: FieldFilter; problem?: undefined } | { filter?: undefined; problem: FieldProblem };

const RANGE_OPERATORS: FilterOperator[] = ['gte', 'gt', 'lt', 'lte'];

/**
 * One field filter checked against the index: the operator must suit the field's type and the
 * values coerce to it. `field` names the filter in problems; `allowed` holds the fields that take
 * filters here.
 */
export function toEngineFilter(index: IndexState, filter: FilterInput, field: string, allowed: Allowed): Translated {
  if (!allowed.has(filter.key)) {
    return {
      problem: { field: `${field}.key`, message: `${filter.key} is not ${allowed.what} of index ${index.alias}` },
    };
  }
  const given = filter.values ?? [];
  if (filter.operator === 'exists' || filter.operator === 'not_exists') {
    if (given.length > 0)
      return { problem: { field: `${field}.values`, message: `${filter.operator} takes no values` } };
    return { filter: { field: filter.key, operator: filter.operator, values: [] } };
  }
  if (given.length === 0) return { problem: { field: `${field}.values`, message: 'is required' } };
  const type = fieldType(index, filter.key);
  const range = RANGE_OPERATORS.includes(filter.operator);
  if (range) {
    if (type !== null && type !== 'NUMBER') {
      return {
        problem: {
          field: `${field}.operator`,
          message: `${filter.operator} needs a NUMBER field; ${filter.key} is ${type}`,
        },
      };
    }
    if (given.length !== 1) {
      return { problem: { field: `${field}.values`, message: `${filter.operator} takes exactly one value` } };
    }
  }
  const valueType = range ? 'NUMBER' : (type ?? 'STRING');
  const values = given.map((value) => coerceScalar(value, valueType));
  if (values.some((value) => value === undefined)) {
    return { problem: { field: `${field}.values`, message: `must be of type ${valueType}` } };
  }
  return { filter: { field: filter.key, operator: filter.operator, values: values as Scalar[] } };
}

/** A filter of a search context (a field filter or a group) checked against the index, with its problems. */
function toEngineFilterTree(
  index: IndexState,
  filter: FilterData | FieldFilterData | { all: FieldFilterData[] },
  field: string,
  allowed: Allowed,
  problems: FieldProblem[],
): EngineFilter | undefined {
  if ('key' in filter) {
    const translated = toEngineFilter(index, filter, field, allowed);
    if (translated.problem) problems.push(translated.problem);
    return translated.filter;
  }
  const [kind, members] = 'any' in filter ? (['any', filter.any] as const) : (['all', filter.all] as const);
  const translated = (members as FilterData[]).map((member, i) =>
    toEngineFilterTree(index, member, `${field}.${kind}[${i}]`, allowed, problems),
  );
  if (translated.some((member) => member === undefined)) return undefined;
  return kind === 'any' ? { any: translated as EngineFilter[] } : { all: translated as EngineFilter[] };
}

/** What a context leaves out, from the search settings of the index. */
export interface QueryDefaults {
  limit?: number;
  /** Checked when the settings were stored; a field that is no longer sortable is left out. */
  sort?: string[];
}

/** Sort keys over the index's sortable fields; `where` names the list in problems. */
export function toSortKeys(
  index: IndexState,
  keys: string[],
  where: string,
): { sort: SortKey[]; problems: FieldProblem[] } {
  const sortable = effectiveSortableFields(index);
  const sort: SortKey[] = [];
  const problems: FieldProblem[] = [];
  keys.forEach((key, i) => {
    const rule = parseRankingRule(key);
    if (typeof rule !== 'object') {
      problems.push({ field: `${where}[${i}]`, message: 'must be <field>:asc or <field>:desc' });
    } else if (!sortable.includes(rule.field)) {
      problems.push({
        field: `${where}[${i}]`,
        message:
          `${rule.field} is not a sortable field of index ${index.alias} ` +
          `(sortable: ${sortable.length > 0 ? sortable.join(', ') : 'none'})`,
      });
    } else sort.push(rule);
  });
  return { sort, problems };
}

/** `where` prefixes problem fields, e.g. `[0]` for the first context of a request. */
export function toEngineQuery(
  index: IndexState,
  context: SearchContextData,
  where: string,
  defaults: QueryDefaults = {},
): QueryTranslation {
  const problems: FieldProblem[] = [];
  const filterable = Object.assign(new Set(filterableFields(index)), { what: 'a filterable field' });
  const filters: EngineFilter[] = [];
  (context.filters ?? []).forEach((filter, i) => {
    const translated = toEngineFilterTree(index, filter, `${where}.filters[${i}]`, filterable, problems);
    if (translated) filters.push(translated);
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
  const facetQuery = context.facet_query ?? undefined;
  if (facetQuery && !facetFields.includes(facetQuery.field)) {
    problems.push({
      field: `${where}.facet_query.field`,
      message: `${facetQuery.field} is not a facet field of index ${index.alias}`,
    });
  }
  const facetRanges = context.facet_ranges ?? undefined;
  for (const field of Object.keys(facetRanges ?? {})) {
    if (!facetFields.includes(field) || fieldType(index, field) !== 'NUMBER')
      problems.push({
        field: `${where}.facet_ranges.${field}`,
        message: `${field} is not a NUMBER facet field of index ${index.alias}`,
      });
  }
  let sort: SortKey[];
  if (context.sort) {
    const translated = toSortKeys(index, context.sort, `${where}.sort`);
    problems.push(...translated.problems);
    sort = translated.sort;
  } else {
    sort = toSortKeys(index, defaults.sort ?? [], 'sort').sort;
  }
  if (problems.length > 0) return { problems };
  return {
    query: {
      q: context.q ?? '',
      filters,
      facets: [...new Set(facets)],
      limit: context.limit ?? defaults.limit ?? DEFAULT_SEARCH_LIMIT,
      offset: context.offset ?? 0,
      threshold: context.threshold ?? DEFAULT_THRESHOLD,
      sort,
      disjunctiveFacets: context.disjunctive_facets ?? false,
      ...(facetQuery ? { facetQuery: { field: facetQuery.field, q: facetQuery.q } } : {}),
      ...(facetRanges
        ? {
            facetRanges: Object.fromEntries(
              Object.entries(facetRanges).map(([field, ranges]) => [
                field,
                ranges.map((range) => ({ label: range.label, from: range.from ?? null, to: range.to ?? null })),
              ]),
            ),
          }
        : {}),
    },
  };
}
