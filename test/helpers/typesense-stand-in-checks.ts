/**
 * What the Typesense stand-in (typesense-stand-in.ts) checks as Typesense does, with Typesense's
 * statuses and messages (its server source, collection.cpp, filter.cpp, validator.cpp): document
 * values against the field types, `facet_by`, `sort_by` and `filter_by` of a search against the
 * collection's schema, range facets and geo filters.
 */

export interface Field {
  name: string;
  type: string;
  optional?: boolean;
  index?: boolean;
  facet?: boolean;
  sort?: boolean;
}

export type SearchAnswer = Record<string, unknown> | { code: number; error: string };

/** The error Typesense gives for a document value that does not fit the field's type. */
export function typeError(field: Field, value: unknown): string | null {
  // validator.cpp: a point is `[lat, lng]` (Typesense would coerce numeric strings; the adapter sends numbers).
  if (field.type === 'geopoint') {
    const point = Array.isArray(value) && value.length === 2 && value.every((item) => typeof item === 'number');
    return point ? null : `Field \`${field.name}\` must be a 2 element array: [lat, lng].`;
  }
  const array = field.type.endsWith('[]');
  const base = field.type.replace('[]', '');
  if (array && !Array.isArray(value)) return `Field \`${field.name}\` must be an array.`;
  if (!array && Array.isArray(value)) return `Field \`${field.name}\` must be a ${base}.`;
  const fits = (item: unknown) =>
    base === 'string'
      ? typeof item === 'string'
      : base === 'bool'
        ? typeof item === 'boolean'
        : typeof item === 'number';
  const items = array ? (value as unknown[]) : [value];
  if (!items.every(fits)) return `Field \`${field.name}\` must be ${array ? 'an array of ' : 'a '}${base}.`;
  return null;
}

const names = (list: unknown) => (typeof list === 'string' && list !== '' ? list.split(',') : []);

/** The entries of `facet_by`: split at commas outside a range facet's parentheses. */
function facetEntries(list: unknown): string[] {
  if (typeof list !== 'string' || list === '') return [];
  const entries: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < list.length; i++) {
    if (list[i] === '(') depth += 1;
    else if (list[i] === ')') depth -= 1;
    else if (list[i] === ',' && depth === 0) {
      entries.push(list.slice(start, i).trim());
      start = i + 1;
    }
  }
  entries.push(list.slice(start).trim());
  return entries;
}

/**
 * A range facet `field(Label:[from, to], ...)` checked as Typesense checks it (collection.cpp,
 * test/collection_faceting_test.cpp): alphanumeric labels, numeric bounds, contiguous ranges, and
 * an integer or float facet field. Returns the error message, or null.
 */
function rangeFacetRefusal(entry: string, field: Field | undefined): string | null {
  const inner = /^[\w.]+\((.*)\)$/.exec(entry)?.[1];
  if (inner === undefined) return null;
  if (!/^(int32|int64|float)(\[\])?$/.test(field?.type ?? ''))
    return 'Range facet is restricted to only integer and float fields.';
  let previousEnd: number | undefined;
  for (const range of inner.split(/\]\s*,\s*/)) {
    const parts = /^([A-Za-z0-9]+):\[([^,\]]*),([^\]]*)\]?$/.exec(range.trim());
    if (!parts) return 'Error splitting the facet range values.';
    const from = Number(parts[2]!.trim());
    const to = Number(parts[3]!.trim());
    if (parts[2]!.trim() === '' || parts[3]!.trim() === '' || !Number.isFinite(from) || !Number.isFinite(to))
      return 'Facet range value is not valid.';
    if (previousEnd !== undefined && from !== previousEnd) return 'Ranges in range facet syntax should be continous.';
    previousEnd = to;
  }
  return null;
}

/** One part of `sort_by`: a field (`missing_values` and the like left out), or an `_eval` with its scores. */
export type SortPart =
  { field: string; order: string } | { eval: { expression: string; score: number }[]; order: string };

const MALFORMED_SORT = { code: 400, error: 'Parameter `sort_by` is malformed.' };

/** Splits at commas outside parentheses, brackets and backticks. */
function topLevelParts(text: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let quoted = false;
  let start = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '`') quoted = !quoted;
    else if (quoted) continue;
    else if (c === '(' || c === '[') depth += 1;
    else if (c === ')' || c === ']') depth -= 1;
    else if (c === ',' && depth === 0) {
      parts.push(text.slice(start, i));
      start = i + 1;
    }
  }
  parts.push(text.slice(start));
  return parts;
}

/** The text inside the parentheses opening at `text[at]` (backticks quote), and the index after the closing one. */
function parenthesized(text: string, at: number): { inner: string; end: number } | null {
  if (text[at] !== '(') return null;
  let depth = 0;
  let quoted = false;
  for (let i = at; i < text.length; i++) {
    const c = text[i];
    if (c === '`') quoted = !quoted;
    else if (!quoted && c === '(') depth += 1;
    else if (!quoted && c === ')' && --depth === 0) return { inner: text.slice(at + 1, i), end: i + 1 };
  }
  return null;
}

/**
 * An `_eval` part as Typesense parses it (collection_manager.cpp `parse_eval`, `parse_multi_eval`):
 * `_eval(<expr>):<order>` (score 1) or `_eval([ (<expr>):<int64 score>, ... ]):<order>`.
 */
function parseEval(part: string): SortPart | null {
  const outer = parenthesized(part, part.indexOf('('));
  if (!outer) return null;
  const order = /^\s*:\s*(\w+)\s*$/.exec(part.slice(outer.end))?.[1];
  if (order === undefined) return null;
  const body = outer.inner.trim();
  if (!body.startsWith('[')) return { eval: [{ expression: body, score: 1 }], order: order.toUpperCase() };
  if (!body.endsWith(']')) return null;
  const entries: { expression: string; score: number }[] = [];
  for (const entry of topLevelParts(body.slice(1, -1))) {
    const trimmed = entry.trim();
    const expression = parenthesized(trimmed, 0);
    const score = expression && /^\s*:\s*([+-]?\d+)\s*$/.exec(trimmed.slice(expression.end))?.[1];
    if (!expression || score === undefined || score === null) return null;
    entries.push({ expression: expression.inner.trim(), score: Number(score) });
  }
  return { eval: entries, order: order.toUpperCase() };
}

/** `sort_by` in parts, or what Typesense answers for a malformed one (collection.cpp). */
export function parseSortBy(sortBy: unknown): SortPart[] | { code: number; error: string } {
  if (typeof sortBy !== 'string' || sortBy.trim() === '') return [];
  const parts: SortPart[] = [];
  for (const raw of topLevelParts(sortBy)) {
    const part = raw.trim();
    if (part.startsWith('_eval')) {
      const parsed = parseEval(part);
      if (!parsed) return MALFORMED_SORT;
      parts.push(parsed);
      continue;
    }
    const colon = part.lastIndexOf(':');
    if (colon < 0 || colon === part.length - 1) return MALFORMED_SORT;
    parts.push({
      field: part
        .slice(0, colon)
        .replace(/\(.*\)/, '')
        .trim(),
      order: part.slice(colon + 1).trim(),
    });
  }
  for (const part of parts) {
    if ('eval' in part) {
      if (part.eval.some((entry) => entry.expression === '')) {
        return { code: 400, error: 'The eval expression in sort_by is empty.' };
      }
    } else if (!['ASC', 'DESC'].includes(part.order.toUpperCase())) {
      return { code: 400, error: `Order for field\` ${part.field}\` should be either ASC or DESC.` };
    }
  }
  if (parts.length > 3) return { code: 422, error: 'Only upto 3 sort_by fields can be specified.' };
  if (parts.filter((part) => 'eval' in part).length > 1) {
    return { code: 422, error: 'Only one sorting eval expression is allowed.' };
  }
  return parts;
}

/**
 * A geopoint filter value as Typesense parses it (filter.cpp `parse_geopoint_filter_value`, the
 * current format): `([lat, lng], radius: <d> km|mi[, exact_filter_radius: <d> km|mi])` or a polygon
 * `([lat, lng, lat, lng, lat, lng, ...][, exact_filter_radius: ...])`. Returns the error, or null.
 */
export function geoFilterRefusal(field: string, value: string): string | null {
  const format =
    `Value of filter field \`${field}\`: must be in the ` +
    '`([-44.50, 170.29], radius: 0.75 km, exact_filter_radius: 5 km)` or ' +
    '([56.33, -65.97, 23.82, -127.82], exact_filter_radius: 7 km) format.';
  const parts = /^\(\s*\[([^\]]*)\]([^)]*)\)$/.exec(value.trim());
  if (!parts) return format;
  const points = parts[1]!.split(',').map((point) => point.trim());
  const isFloat = (text: string) => /^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/.test(text);
  if (points.length < 2 || points.length % 2 !== 0 || !points.every(isFloat)) return format;
  const polygon = points.length > 2;
  let radius = false;
  for (const option of parts[2]!.split(',').map((text) => text.trim())) {
    const [key, distance] = option.split(':').map((text) => text.trim());
    if (distance === undefined) continue;
    if (key !== 'radius' && key !== 'exact_filter_radius') continue;
    const unit = distance.slice(-2);
    if (unit !== 'km' && unit !== 'mi') return 'Unit must be either `km` or `mi`.';
    if (!isFloat(distance.slice(0, -2).trim())) return format;
    if (key === 'radius' && !polygon) radius = true;
  }
  return polygon || radius ? null : format;
}

/** The fields a filter expression names (`field:` after its start, a `(`, `&&` or `||`). */
const filterFieldNames = (expression: string) =>
  [...expression.matchAll(/(?:^|&& |\|\| |\()\s*([\w.]+):/g)].map((match) => match[1]!);

/**
 * What Typesense answers when a search names a field the schema lacks or whose flags do not allow
 * the use (status and message as in its server source, collection.cpp and filter.cpp).
 */
export function refusal(search: Record<string, unknown>, fields: Field[]): SearchAnswer | null {
  const field = (name: string) => fields.find((candidate) => candidate.name === name && candidate.index !== false);
  for (const name of names(search.query_by)) {
    if (!field(name)) return { code: 404, error: `Could not find a field named \`${name}\` in the schema.` };
  }
  for (const entry of facetEntries(search.facet_by)) {
    const name = entry.replace(/\(.*$/, '');
    if (!field(name)?.facet)
      return { code: 404, error: `Could not find a facet field named \`${name}\` in the schema.` };
    const refused = rangeFacetRefusal(entry, field(name));
    if (refused) return { code: 400, error: refused };
  }
  for (const name of names(search.group_by)) {
    if (!field(name)?.facet) return { code: 400, error: `Group by field \`${name}\` should be a facet field.` };
  }
  const sortParts = parseSortBy(search.sort_by);
  if (!Array.isArray(sortParts)) return sortParts;
  for (const part of sortParts) {
    if ('eval' in part) {
      // An unknown field fails the filter's parse, whose status Typesense keeps (404) under its own message.
      const unknown = part.eval.some((entry) => filterFieldNames(entry.expression).some((name) => !field(name)));
      if (unknown) return { code: 404, error: 'Error parsing eval expression in sort_by clause.' };
      continue;
    }
    const name = part.field;
    // Numbers and points sort without `sort: true` (a point by its distance from the point given).
    const sortable = (candidate: Field | undefined) =>
      candidate?.sort === true || (candidate !== undefined && /^(float|int32|int64|geopoint)$/.test(candidate.type));
    if (name !== '_text_match' && !sortable(field(name))) {
      return { code: 404, error: `Could not find a field named \`${name}\` in the schema for sorting.` };
    }
  }
  for (const [, name] of String(search.filter_by ?? '').matchAll(/(?:^|&& )([\w.]+):/g)) {
    if (!field(name!)) return { code: 404, error: `Could not find a filter field named \`${name}\` in the schema.` };
  }
  // Each filter on a geopoint field: its value, up to the parenthesis that closes it.
  for (const match of String(search.filter_by ?? '').matchAll(/(?:^|&& |\|\| |\()\s*([\w.]+):\s*\(/g)) {
    if (field(match[1]!)?.type !== 'geopoint') continue;
    const value = parenthesized(match.input, match.index + match[0].length - 1);
    const refused = geoFilterRefusal(match[1]!, value ? `(${value.inner})` : match.input.slice(match.index));
    if (refused) return { code: 400, error: refused };
  }
  return null;
}
