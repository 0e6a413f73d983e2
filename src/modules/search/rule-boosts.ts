/**
 * A merchandising rule's `boost` and `bury` filters: checked against the index like search filters
 * when the rules are saved, and turned into engine filters when the rule applies to a search.
 */
import type { FieldProblem } from '../../kernel/errors';
import { filterableFields, type IndexState } from './definition';
import type { EngineQuery, FieldFilter } from './engine/engine';
import type { MerchandisingRule } from './rules';
import { toEngineFilter, type FilterInput } from './search-query';

type Boosts = Pick<MerchandisingRule, 'boost' | 'bury'>;

const filterable = (index: IndexState) =>
  Object.assign(new Set(filterableFields(index)), { what: 'a filterable field' });

/** The problems of a rule's `boost` and `bury` filters; `where` names the rule, e.g. `[0]`. */
export function boostProblems(index: IndexState, rule: { boost?: FilterInput[]; bury?: FilterInput[] }, where: string) {
  const allowed = filterable(index);
  const problems: FieldProblem[] = [];
  for (const member of ['boost', 'bury'] as const) {
    (rule[member] ?? []).forEach((filter, j) => {
      const translated = toEngineFilter(index, filter, `${where}.${member}[${j}]`, allowed);
      if (translated.problem) problems.push(translated.problem);
    });
  }
  return problems;
}

/**
 * The engine query members of a rule's `boost` and `bury`, coerced to the fields' current types. A
 * filter the index no longer takes (its field stopped being filterable since the rule was saved) is
 * left out; a rule without either adds nothing, so the engine does no work for them.
 */
export function boostsOf(index: IndexState, rule: Boosts): Pick<EngineQuery, 'boost' | 'bury'> {
  if (!rule.boost?.length && !rule.bury?.length) return {};
  const allowed = filterable(index);
  const translate = (filters: FilterInput[] = []) =>
    filters
      .map((filter) => toEngineFilter(index, filter, '', allowed).filter)
      .filter((filter): filter is FieldFilter => filter !== undefined);
  const boost = translate(rule.boost);
  const bury = translate(rule.bury);
  return { ...(boost.length > 0 ? { boost } : {}), ...(bury.length > 0 ? { bury } : {}) };
}
