import { badRequest } from '../../kernel/errors';
import { isUuid } from '../../kernel/ids';
import type { Inequality } from './repository/filters';
import type { LedgerFilter, LedgerSortField } from './repository/ledger';
import { STOCK_MUTATION_SOURCES, STOCK_MUTATION_STATUSES } from './stock.types';

/**
 * The `query` argument of `stockMutations`: a URL-style query string of filters and one sort.
 *
 *   query    = "" | term *("&" term)
 *   term     = field ["[" operator "]"] "=" value  |  "sort=" ["-"] sort-field
 *   operator = "eq" | "in" | "gt" | "gte" | "lt" | "lte"        (no operator: eq)
 *   value    = percent-encoded text; for "in", up to 100 comma-separated values
 *
 * Every term must hold. A field may appear once per operator, and not with both `eq` and `in`.
 */

type ValueKind = 'text' | 'id' | 'source' | 'status' | 'integer' | 'timestamp';
type ListKey =
  | 'skus'
  | 'productIds'
  | 'warehouseIds'
  | 'positionIds'
  | 'businessIds'
  | 'inventoryItemIds'
  | 'locationIds'
  | 'sources'
  | 'statuses'
  | 'actorTypes'
  | 'actorIds';
type RangeKey = 'createdAt' | 'newQuantity' | 'delta';

const LIST_FIELDS: Record<string, { key: ListKey; kind: ValueKind }> = {
  sku: { key: 'skus', kind: 'text' },
  product_id: { key: 'productIds', kind: 'id' },
  warehouse_id: { key: 'warehouseIds', kind: 'id' },
  position_id: { key: 'positionIds', kind: 'id' },
  business_id: { key: 'businessIds', kind: 'id' },
  inventory_item_id: { key: 'inventoryItemIds', kind: 'id' },
  location_id: { key: 'locationIds', kind: 'id' },
  source: { key: 'sources', kind: 'source' },
  status: { key: 'statuses', kind: 'status' },
  actor_type: { key: 'actorTypes', kind: 'text' },
  actor_id: { key: 'actorIds', kind: 'text' },
};

const RANGE_FIELDS: Record<string, { key: RangeKey; kind: ValueKind }> = {
  created_at: { key: 'createdAt', kind: 'timestamp' },
  new_quantity: { key: 'newQuantity', kind: 'integer' },
  delta: { key: 'delta', kind: 'integer' },
};

const SORT_FIELDS: readonly LedgerSortField[] = ['created_at', 'new_quantity'];
const LIST_OPERATORS = ['eq', 'in'];
const RANGE_OPERATORS = ['eq', 'gt', 'gte', 'lt', 'lte'];
const MAX_QUERY_LENGTH = 4096;
const MAX_IN_VALUES = 100;

export interface MutationQuery {
  filter: LedgerFilter;
  sort: { field: LedgerSortField; descending: boolean };
}

const invalid = (message: string) => badRequest(`query: ${message}`, [{ field: 'query', message }]);

function decode(text: string, what: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    throw invalid(`${what} "${text}" is not valid percent-encoding`);
  }
}

function parseValue(field: string, kind: ValueKind, value: string): string | number {
  const bad = (expected: string) => invalid(`value "${value}" of "${field}" is not ${expected}`);
  switch (kind) {
    case 'text':
      if (value === '' || value.length > 255) throw bad('1 to 255 characters');
      return value;
    case 'id':
      if (!isUuid(value)) throw bad('an id');
      return value.toLowerCase();
    case 'source':
      if (!(STOCK_MUTATION_SOURCES as readonly string[]).includes(value))
        throw bad(`one of ${STOCK_MUTATION_SOURCES.join(', ')}`);
      return value;
    case 'status':
      if (!(STOCK_MUTATION_STATUSES as readonly string[]).includes(value))
        throw bad(`one of ${STOCK_MUTATION_STATUSES.join(', ')}`);
      return value;
    case 'integer':
    case 'timestamp': {
      const number = /^-?\d{1,16}$/.test(value) ? Number(value) : Number.NaN;
      if (!Number.isSafeInteger(number) || (kind === 'timestamp' && number < 0)) {
        throw bad(kind === 'timestamp' ? 'a Unix timestamp in milliseconds' : 'a whole number');
      }
      return number;
    }
  }
}

/** Parses a `stockMutations` query string; a VALIDATION_ERROR (400) names what is wrong. */
export function parseMutationQuery(query: string | null | undefined): MutationQuery {
  const result: MutationQuery = { filter: {}, sort: { field: 'created_at', descending: true } };
  if (query == null || query === '') return result;
  if (query.length > MAX_QUERY_LENGTH) throw invalid(`is longer than ${MAX_QUERY_LENGTH} characters`);
  const seen = new Set<string>();
  let sorted = false;
  for (const term of query.split('&')) {
    if (term === '') throw invalid('has an empty term (two "&" in a row, or one at an end)');
    const equals = term.indexOf('=');
    if (equals === -1) throw invalid(`term "${term}" has no "="`);
    const name = decode(term.slice(0, equals), 'field');
    const value = decode(term.slice(equals + 1), 'value');
    const match = /^([a-z_]+)(?:\[([a-z]+)\])?$/.exec(name);
    if (!match) throw invalid(`"${name}" is not a field or field[operator]`);
    const field = match[1]!;
    const operator = match[2] ?? 'eq';

    if (field === 'sort') {
      if (match[2] !== undefined) throw invalid('"sort" takes no operator');
      if (sorted) throw invalid('"sort" may appear once');
      const descending = value.startsWith('-');
      const sortField = descending ? value.slice(1) : value;
      if (!(SORT_FIELDS as readonly string[]).includes(sortField)) {
        throw invalid(`unknown sort "${value}"; sort by ${SORT_FIELDS.map((f) => `${f} or -${f}`).join(', ')}`);
      }
      result.sort = { field: sortField as LedgerSortField, descending };
      sorted = true;
      continue;
    }

    const list = LIST_FIELDS[field];
    const range = RANGE_FIELDS[field];
    if (!list && !range) throw invalid(`unknown field "${field}"`);
    const operators = list ? LIST_OPERATORS : RANGE_OPERATORS;
    if (!operators.includes(operator)) {
      throw invalid(`unknown operator "${operator}" for "${field}"; use ${operators.join(', ')}`);
    }
    const slot = list ? field : `${field}[${operator}]`;
    if (seen.has(slot)) throw invalid(`"${list ? field : name}" may appear once`);
    seen.add(slot);

    if (list) {
      const values = operator === 'in' ? value.split(',') : [value];
      if (values.length > MAX_IN_VALUES) throw invalid(`"${field}[in]" takes at most ${MAX_IN_VALUES} values`);
      result.filter[list.key] = values.map((v) => parseValue(field, list.kind, v)) as string[];
    } else {
      const inequality: Inequality = (result.filter[range!.key] ??= {});
      inequality[operator as keyof Inequality] = parseValue(field, range!.kind, value) as number;
    }
  }
  return result;
}
