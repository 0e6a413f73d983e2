/**
 * The ranking key of a merchandising rule's `boost` and `bury` filters in the embedded engine: one
 * value per candidate, computed once, deciding only among documents every earlier key left tied.
 */
import type { EngineQuery, FieldValue } from './engine';
import { passesFilters } from './filter-match';

/** The key of a document: boosted first, buried last; `bury` wins over `boost`. */
export const BOOSTED = -1;
export const NEUTRAL = 0;
export const BURIED = 1;

export function boostRank(values: Record<string, FieldValue>, query: Pick<EngineQuery, 'boost' | 'bury'>): number {
  if (query.bury?.some((filter) => passesFilters(values, [filter]))) return BURIED;
  if (query.boost?.some((filter) => passesFilters(values, [filter]))) return BOOSTED;
  return NEUTRAL;
}

/**
 * The key of each of `slots` (ascending: boosted, then the others, then buried), or undefined when
 * the query boosts and buries nothing, so that a search without them does no work for them.
 */
export function boostKeys(
  slots: number[],
  valuesOf: (slot: number) => Record<string, FieldValue>,
  query: Pick<EngineQuery, 'boost' | 'bury'>,
): Int32Array | undefined {
  if (!query.boost?.length && !query.bury?.length) return undefined;
  const keys = new Int32Array(slots.length);
  for (let s = 0; s < slots.length; s++) keys[s] = boostRank(valuesOf(slots[s]!), query);
  return keys;
}
