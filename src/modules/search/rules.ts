/**
 * Pure rules of merchandising: which rule of an index applies to a search context (the first whose
 * query and filter conditions hold), matched on the normalized words of the query.
 */
import { tokenize } from './engine/text';
import type { FieldFilterData, SearchContextData } from './search.schemas';

export interface MerchandisingRule {
  id: string;
  /** Without one, the rule applies to every query. */
  query: { text: string; match: 'exact' | 'contains' } | null;
  /** The context's filters must include each of these (same key, operator and values). */
  filters: FieldFilterData[];
  pin: { id: string; position: number }[];
  hide: string[];
  /** Searched instead of the query typed. */
  replace_query?: string;
  /** Returned as `rule_data` with the results the rule applies to. */
  data?: Record<string, unknown>;
  /** ISO timestamps: the rule is skipped before `active_from` and from `active_to` on. */
  active_from?: string;
  active_to?: string;
  /** Documents matching any of these come before, and those matching any of `bury` after, others of equal relevance. */
  boost?: FieldFilterData[];
  bury?: FieldFilterData[];
}

/** Whether a rule is active at `now` (milliseconds); a rule without a period always is. */
export const isActive = (rule: MerchandisingRule, now: number): boolean =>
  (rule.active_from === undefined || Date.parse(rule.active_from) <= now) &&
  (rule.active_to === undefined || now < Date.parse(rule.active_to));

const sameFilter = (a: FieldFilterData, b: FieldFilterData) => {
  const values = (filter: FieldFilterData) => (filter.values ?? []).map(String).sort().join('\u0000');
  return a.key === b.key && a.operator === b.operator && values(a) === values(b);
};

/** Whether the words of `condition` stand in `q`: all of them (`exact`) or in a row somewhere (`contains`). */
export function queryMatches(condition: NonNullable<MerchandisingRule['query']>, q: string): boolean {
  const words = tokenize(q);
  const wanted = tokenize(condition.text);
  if (condition.match === 'exact') return words.join(' ') === wanted.join(' ');
  if (wanted.length === 0) return true;
  for (let at = 0; at + wanted.length <= words.length; at++) {
    if (wanted.every((word, i) => words[at + i] === word)) return true;
  }
  return false;
}

/** The first rule active at `now` whose conditions the context meets, or null. */
export function ruleFor(
  rules: MerchandisingRule[],
  context: SearchContextData,
  now: number = Date.now(),
): MerchandisingRule | null {
  if (rules.length === 0) return null;
  const given = (context.filters ?? []).filter((filter): filter is FieldFilterData => 'key' in filter);
  return (
    rules.find(
      (rule) =>
        isActive(rule, now) &&
        (rule.query === null || queryMatches(rule.query, context.q ?? '')) &&
        rule.filters.every((wanted) => given.some((filter) => sameFilter(filter, wanted))),
    ) ?? null
  );
}
