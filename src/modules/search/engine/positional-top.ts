/**
 * The first hits when the ranking rules include proximity, attribute or exactness, without
 * computing them for every match: they cost a walk over each document's words, and of a million
 * matches only those that can still reach the first page need them. A match needs them while its
 * other keys, with the best values these rules can give, would still place it before the worst of
 * the best found so far; the others cannot be among the first, whatever their words.
 */
import type { PositionalScores } from './word-positions';

export type PositionalRule = 'proximity' | 'attribute' | 'exactness';

/** A ranking key of each match, lower first, or the positional rule it is read from. */
export type LazyKey = Float64Array | PositionalRule;

/** The best (lowest) value each positional key can have: one for every match, or one per place. */
export type PositionalBounds = Record<PositionalRule, number | Float64Array>;

/** Matches whose positional scores are computed at a time. */
const BATCH = 128;

/**
 * The first `needed` of `count` places in the order of `keys`, then `tieBreak`, with the positional
 * keys computed (by `positional`, for the places given) only where they can change that answer.
 * `bounds` are the best values the positional keys can have.
 */
export function topWithPositional(
  keys: LazyKey[],
  count: number,
  needed: number,
  bounds: PositionalBounds,
  positional: (places: number[]) => PositionalScores,
  tieBreak: (a: number, b: number) => number,
): number[] {
  const values = keys.map((key) => (typeof key === 'string' ? new Float64Array(count) : key));
  const best = keys.map((key) => (typeof key === 'string' ? bounds[key] : 0));
  const computed = keys.map((key) => typeof key !== 'string');
  const compare = (a: number, b: number) => {
    for (const key of values) {
      const d = key[a]! - key[b]!;
      if (d < 0) return -1;
      if (d > 0) return 1;
    }
    return tieBreak(a, b);
  };
  /** Whether `place`, at best, still comes before `worst`. */
  const mayBeat = (place: number, worst: number) => {
    for (let i = 0; i < values.length; i++) {
      const bound = best[i]!;
      const value = computed[i] ? values[i]![place]! : typeof bound === 'number' ? bound : bound[place]!;
      const d = value - values[i]![worst]!;
      if (d < 0) return true;
      if (d > 0) return false;
    }
    return tieBreak(place, worst) < 0;
  };

  // A max-heap of the best `needed` so far: its root is the worst of them.
  const heap: number[] = [];
  const swap = (i: number, j: number) => {
    const t = heap[i]!;
    heap[i] = heap[j]!;
    heap[j] = t;
  };
  const offer = (place: number) => {
    if (heap.length < needed) {
      heap.push(place);
      for (let i = heap.length - 1; i > 0;) {
        const parent = (i - 1) >> 1;
        if (compare(heap[i]!, heap[parent]!) <= 0) break;
        swap(i, parent);
        i = parent;
      }
    } else if (needed > 0 && compare(place, heap[0]!) < 0) {
      heap[0] = place;
      for (let i = 0; ;) {
        const left = 2 * i + 1;
        let largest = i;
        if (left < heap.length && compare(heap[left]!, heap[largest]!) > 0) largest = left;
        if (left + 1 < heap.length && compare(heap[left + 1]!, heap[largest]!) > 0) largest = left + 1;
        if (largest === i) break;
        swap(i, largest);
        i = largest;
      }
    }
  };

  const pending: number[] = [];
  const flush = () => {
    if (pending.length === 0) return;
    const scores = positional(pending);
    keys.forEach((key, i) => {
      if (typeof key !== 'string') return;
      const into = values[i]!;
      const from = scores[key];
      for (let p = 0; p < pending.length; p++) into[pending[p]!] = key === 'exactness' ? -from[p]! : from[p]!;
    });
    for (const place of pending) offer(place);
    pending.length = 0;
  };
  for (let place = 0; place < count; place++) {
    if (heap.length === needed && (needed === 0 || !mayBeat(place, heap[0]!))) continue;
    pending.push(place);
    if (pending.length === BATCH) flush();
  }
  flush();
  return heap.sort(compare);
}
