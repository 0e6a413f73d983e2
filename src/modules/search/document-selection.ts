/**
 * Pure parsing of the query string that selects documents to delete: `filter[id][in]=a,b`,
 * `filter[id][eq]=a`, and filters on index fields in the API's `filter[field][op]` form.
 */
import type { FieldProblem } from '../../kernel/errors';
import type { FilterOperator } from './engine/engine';
import type { FilterInput } from './search-query';

export const SELECTION_OPERATORS = ['eq', 'in', 'gte', 'gt', 'lt', 'lte'] as const;
/** Ids one request may name. */
export const MAX_SELECTED_IDS = 1000;

const FILTER_PARAMETER = /^filter\[([^[\]]+)\]\[([^[\]]+)\]$/;

/** Documents chosen by id and/or by filters on index fields; every part must hold. */
export interface DocumentSelection {
  ids?: string[];
  /** Each with the query parameter it came from, to name in problems. */
  filters: (FilterInput & { parameter: string })[];
}

export type SelectionParse = { selection: DocumentSelection; problems?: undefined } | { problems: FieldProblem[] };

/** The selection a query string makes; null when it names no filter (the whole index). */
export function parseDocumentSelection(query: Record<string, unknown>): SelectionParse | null {
  const problems: FieldProblem[] = [];
  const selection: DocumentSelection = { filters: [] };
  const entries = Object.entries(query).filter(([, value]) => value !== undefined);
  if (entries.length === 0) return null;
  for (const [parameter, raw] of entries) {
    const match = FILTER_PARAMETER.exec(parameter);
    const operator = match?.[2] as (typeof SELECTION_OPERATORS)[number] | undefined;
    if (!match || !operator || !(SELECTION_OPERATORS as readonly string[]).includes(operator)) {
      problems.push({
        field: parameter,
        message: `is not a filter: use filter[<field>][<op>] with op one of ${SELECTION_OPERATORS.join(', ')}`,
      });
      continue;
    }
    if (typeof raw !== 'string') {
      problems.push({ field: parameter, message: 'must be given once' });
      continue;
    }
    const values = operator === 'in' ? raw.split(',').map((value) => value.trim()) : [raw];
    if (values.some((value) => value === '')) {
      problems.push({ field: parameter, message: 'must not hold an empty value' });
      continue;
    }
    const key = match[1]!;
    if (key === 'id') {
      if (operator !== 'eq' && operator !== 'in') {
        problems.push({ field: parameter, message: 'takes eq or in: ids have no order' });
        continue;
      }
      if (selection.ids) {
        problems.push({ field: parameter, message: 'takes filter[id][eq] or filter[id][in], not both' });
        continue;
      }
      if (values.length > MAX_SELECTED_IDS) {
        problems.push({ field: parameter, message: `names more than ${MAX_SELECTED_IDS} ids` });
        continue;
      }
      selection.ids = [...new Set(values)];
      continue;
    }
    const engineOperator: FilterOperator = operator === 'eq' ? 'in' : operator;
    selection.filters.push({ key, operator: engineOperator, values, parameter });
  }
  return problems.length > 0 ? { problems } : { selection };
}
