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
  GEO_SORT_RULE,
  parseRankingRule,
  SORT_RULE,
  type IndexState,
} from './definition';
import type {
  EngineFilter,
  EngineQuery,
  FieldFilter,
  FieldType,
  FilterOperator,
  Scalar,
  SortKey,
} from './engine/engine';
import { isLatitude, isLongitude, MAX_DISTANCE_METERS, METERS_PER_UNIT } from './engine/geo';
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
const GEO_OPERATORS: FilterOperator[] = ['geo_radius', 'geo_bbox'];

const GEO_VALUES = {
  geo_radius: '[lat, lng, radius, "km" or "mi"]',
  geo_bbox: '[south, west, north, east] (the south-west corner, then the north-east one)',
} as const;

/**
 * A geo filter checked: `geo_radius` takes `[lat, lng, radius, unit]` (the radius above 0 and at
 * most half the earth's circumference), `geo_bbox` `[south, west, north, east]`, in degrees in
 * range; both on a GEOPOINT field (or one no document has shown yet). The radius travels in meters.
 */
function toGeoFilter(filter: FilterInput, type: FieldType | null, field: string): Translated {
  const operator = filter.operator as keyof typeof GEO_VALUES;
  if (type !== null && type !== 'GEOPOINT') {
    return {
      problem: { field: `${field}.operator`, message: `${operator} needs a GEOPOINT field; ${filter.key} is ${type}` },
    };
  }
  const problem = (message: string) => ({ problem: { field: `${field}.values`, message } });
  const given = filter.values ?? [];
  if (given.length !== 4) return problem(`${operator} takes ${GEO_VALUES[operator]}`);
  const numbers = given.slice(0, operator === 'geo_radius' ? 3 : 4).map((value) => coerceScalar(value, 'NUMBER'));
  if (numbers.some((value) => value === undefined)) return problem(`${operator} takes ${GEO_VALUES[operator]}`);
  const [a, b, c, d] = numbers as number[];
  if (operator === 'geo_radius') {
    const unit = given[3];
    if (unit !== 'km' && unit !== 'mi') return problem('the unit (4th value) must be "km" or "mi"');
    if (!isLatitude(a) || !isLongitude(b))
      return problem('the center must be a latitude -90..90 and a longitude -180..180');
    const meters = c! * METERS_PER_UNIT[unit];
    if (!(meters > 0) || meters > MAX_DISTANCE_METERS) {
      const most = Math.floor(MAX_DISTANCE_METERS / METERS_PER_UNIT[unit]);
      return problem(`the radius must be above 0 and at most ${most} ${unit}`);
    }
    return { filter: { field: filter.key, operator, values: [a!, b!, meters] } };
  }
  if (!isLatitude(a) || !isLatitude(c) || !isLongitude(b) || !isLongitude(d))
    return problem('latitudes must be -90..90 and longitudes -180..180');
  if (a! > c!) return problem('south (1st value) must not be above north (3rd value)');
  return { filter: { field: filter.key, operator, values: [a!, b!, c!, d!] } };
}

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
  if (GEO_OPERATORS.includes(filter.operator)) return toGeoFilter(filter, type, field);
  if (type === 'GEOPOINT') {
    return {
      problem: {
        field: `${field}.operator`,
        message: `${filter.key} is a GEOPOINT field: it takes geo_radius, geo_bbox, exists or not_exists`,
      },
    };
  }
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
    const rule = parseSortKey(key);
    if (typeof rule === 'string') {
      problems.push({ field: `${where}[${i}]`, message: rule });
    } else if (!sortable.includes(rule.field)) {
      problems.push({
        field: `${where}[${i}]`,
        message:
          `${rule.field} is not a sortable field of index ${index.alias} ` +
          `(sortable: ${sortable.length > 0 ? sortable.join(', ') : 'none'})`,
      });
    } else if ((fieldType(index, rule.field) === 'GEOPOINT') !== (rule.from !== undefined)) {
      problems.push({
        field: `${where}[${i}]`,
        message: rule.from
          ? `${rule.field} is not a GEOPOINT field: sort it by <field>:asc or <field>:desc`
          : `${rule.field} is a GEOPOINT field: sort it by distance, ${rule.field}(<lat>, <lng>):asc or :desc`,
      });
    } else sort.push(rule);
  });
  return { sort, problems };
}

/** A sort key, `<field>:asc|desc` or `<field>(<lat>, <lng>):asc|desc`, or what is wrong with it. */
function parseSortKey(key: string): SortKey | string {
  const geo = GEO_SORT_RULE.exec(key);
  if (geo) {
    const [lat, lng] = [Number(geo[2]), Number(geo[3])];
    if (!isLatitude(lat) || !isLongitude(lng)) return 'the point must be a latitude -90..90 and a longitude -180..180';
    return { field: geo[1]!, direction: geo[4] as 'asc' | 'desc', from: { lat, lng } };
  }
  const rule = SORT_RULE.test(key) ? parseRankingRule(key) : undefined;
  return typeof rule === 'object'
    ? rule
    : 'must be <field>:asc or <field>:desc (a GEOPOINT field: <field>(<lat>, <lng>):asc|desc)';
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
  // A point has no facet values: `*` leaves GEOPOINT fields out.
  const facets = requested.includes('*')
    ? facetFields.filter((name) => fieldType(index, name) !== 'GEOPOINT')
    : requested;
  for (const [i, facet] of facets.entries()) {
    if (!facetFields.includes(facet))
      problems.push({
        field: `${where}.facets[${i}]`,
        message: `${facet} is not a facet field of index ${index.alias}`,
      });
    else if (fieldType(index, facet) === 'GEOPOINT')
      problems.push({ field: `${where}.facets[${i}]`, message: `${facet} is a GEOPOINT field: points have no facets` });
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
