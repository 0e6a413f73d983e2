/**
 * The order of the embedded engine's hits: the query's sort keys, then the index's ranking rules,
 * then a rule's boost and bury, then the id; the first hits without sorting every match, the
 * distinct field's duplicates left out, and pinned documents placed.
 */
import { boostKeys } from './boost';
import {
  isGeoPoint,
  valuesOf,
  type EngineQuery,
  type GeoPoint,
  type IndexDefinition,
  type IndexedDocument,
  type Scalar,
  type SortKey,
} from './engine';
import { MISSING, type FieldColumns } from './field-columns';
import { distanceMeters } from './geo';
import { topWithPositional, type LazyKey, type PositionalBounds, type PositionalRule } from './positional-top';
import type { PositionalScores } from './word-positions';

/** What ranking needs of a search: the matches, the typos each query word needed, and the index. */
export interface RankInput {
  definition: IndexDefinition;
  /** Documents by slot. */
  documents: (IndexedDocument | undefined)[];
  /** The matches to rank, by slot. */
  slots: number[];
  /** The query words. */
  words: string[];
  /** Per query word, by slot, the fewest typos it needs in that document (-1: not there). */
  typos: Int8Array[];
  /** Per query word, whether any document word matches it exactly (the exactness rule counts those). */
  exactWords: boolean[];
  /** The positional scores of the slots given (some of `slots`), computed only when a rule needs them. */
  positional: (slots: number[]) => PositionalScores;
  /** Per slot, its document's place by id (see id-order.ts). */
  idRanks: Int32Array;
  /** The documents' values by field, for the sort keys. */
  columns: FieldColumns;
}

/**
 * Orders documents by the query's sort keys, then the ranking rules, then a rule's boost and bury,
 * each deciding only among documents the previous ones left tied, then by id. Returns the first
 * `needed` (after de-duplication) and the count.
 */
export function rank(
  input: RankInput,
  sort: SortKey[],
  needed: number,
  promoted: Pick<EngineQuery, 'boost' | 'bury'> = {},
): { slots: number[]; count: number } {
  const { definition, documents, slots, words, typos } = input;
  const rules = [...sort, ...definition.rankingRules];
  // Keys are computed once per document, into one array per rule indexed by the document's place in `slots`.
  // A positional rule's key is computed last, and only for the matches that need it (positional-top.ts).
  const keys: (Int32Array | (Scalar | undefined)[] | PositionalRule)[] = [];
  const directions: number[] = [];
  for (const rule of rules) {
    if (typeof rule === 'object') {
      keys.push(
        rule.from
          ? geoDistances(documents, slots, rule.field, rule.from)
          : firstValues(input.columns, documents, slots, rule.field),
      );
      directions.push(rule.direction === 'asc' ? 1 : -1);
    } else if (words.length > 0) {
      if (rule === 'words' || rule === 'typo') {
        const key = new Int32Array(slots.length);
        for (const of of typos) {
          for (let s = 0; s < slots.length; s++) {
            const count = of[slots[s]!]!;
            if (rule === 'words') key[s] = key[s]! - (count >= 0 ? 1 : 0);
            else if (count > 0) key[s] = key[s]! + count;
          }
        }
        keys.push(key);
      } else if (rule === 'proximity' || rule === 'attribute' || rule === 'exactness') keys.push(rule);
      else continue;
      directions.push(1);
    }
  }
  const boosted = boostKeys(slots, (slot) => documents[slot]!.values, promoted);
  if (boosted) {
    keys.push(boosted);
    directions.push(1);
  }
  const { idRanks } = input;
  const byId = (a: number, b: number) => idRanks[slots[a]!]! - idRanks[slots[b]!]!;
  const distinct = definition.distinctField;
  if (!distinct && keys.some((key) => typeof key === 'string')) {
    const lazy = lazyKeys(keys, directions);
    if (lazy) {
      const positional = (places: number[]) => input.positional(places.map((s) => slots[s]!));
      const top = topWithPositional(
        lazy,
        slots.length,
        needed,
        positionalBounds(slots, typos, input.exactWords),
        positional,
        byId,
      );
      return { slots: top.map((s) => slots[s]!), count: slots.length };
    }
  }
  if (keys.some((key) => typeof key === 'string')) {
    const scores = input.positional(slots);
    keys.forEach((key, i) => {
      if (key === 'exactness') keys[i] = scores.exactness.map((value) => -value);
      else if (key === 'proximity' || key === 'attribute') keys[i] = scores[key];
    });
  }
  const computed = keys as (Int32Array | (Scalar | undefined)[])[];
  const numeric = numericKeys(computed, directions, slots.length);
  const compare = numeric
    ? numericCompare(numeric, slots, idRanks)
    : (a: number, b: number) => {
        for (let i = 0; i < computed.length; i++) {
          const x = computed[i]![a];
          const y = computed[i]![b];
          if (x === y) continue;
          // Documents without a value for a sort rule come last in either direction.
          if (x === undefined) return 1;
          if (y === undefined) return -1;
          return (x < y ? -1 : 1) * directions[i]!;
        }
        return byId(a, b);
      };
  const places = Array.from({ length: slots.length }, (_, s) => s);

  if (!distinct) {
    return { slots: topOf(places, needed, compare).map((s) => slots[s]!), count: slots.length };
  }
  const sorted = places.sort(compare);
  const seen = new Set<string>();
  const kept: number[] = [];
  for (const s of sorted) {
    const slot = slots[s]!;
    const value = valuesOf(documents[slot]!.values[distinct])[0];
    if (value !== undefined) {
      const key = `${typeof value}:${String(value)}`;
      if (seen.has(key)) continue;
      seen.add(key);
    }
    kept.push(slot);
  }
  return { slots: kept.slice(0, needed), count: kept.length };
}

/** Packed keys stay below this, where every integer is exact in a double (with room for rounding the bound). */
const MAX_PACKED = 2 ** 52;

/**
 * A key as numbers that order lower first, a sort's missing values as Infinity; undefined when its
 * values cannot be: a sort key's values that are not all finite numbers or all strings (strings
 * become their places among the distinct values).
 */
function orientedKey(key: Int32Array | (Scalar | undefined)[], direction: number): Float64Array | undefined {
  const oriented = new Float64Array(key.length);
  if (key instanceof Int32Array) {
    for (let s = 0; s < key.length; s++) oriented[s] = key[s]! * direction;
    return oriented;
  }
  let kind: string | undefined;
  const distinct = new Set<Scalar>();
  for (const value of key) {
    if (value === undefined) continue;
    const type = typeof value;
    if (type !== kind && kind !== undefined) return undefined;
    if (type === 'number' ? !Number.isFinite(value) : type !== 'string') return undefined;
    kind = type;
    if (type === 'string') distinct.add(value);
  }
  const placeOf = new Map([...distinct].sort().map((value, place) => [value, place]));
  for (let s = 0; s < key.length; s++) {
    const value = key[s];
    // Documents without a value for a sort rule come last in either direction.
    oriented[s] =
      value === undefined
        ? Infinity
        : (typeof value === 'string' ? placeOf.get(value)! : (value as number)) * direction;
  }
  return oriented;
}

/**
 * The keys as a few arrays of numbers compared one after the other, lower first: adjacent keys of
 * small integers packed into one, so that choosing the first page of a million matches compares a
 * number or two instead of each key in turn. Undefined when a key cannot be read as numbers.
 */
function numericKeys(
  keys: (Int32Array | (Scalar | undefined)[])[],
  directions: number[],
  count: number,
): Float64Array[] | undefined {
  const columns: Float64Array[] = [];
  let packing: { packed: Float64Array; span: number } | undefined;
  for (let i = 0; i < keys.length; i++) {
    const key = orientedKey(keys[i]!, directions[i]!);
    if (!key) return undefined;
    let min = Infinity;
    let max = -Infinity;
    let integers = true;
    for (let s = 0; s < count; s++) {
      const value = key[s]!;
      if (value < min) min = value;
      if (value > max) max = value;
      if (!Number.isInteger(value)) integers = false;
    }
    const range = count === 0 ? 1 : max - min + 1;
    if (integers && range < MAX_PACKED) {
      if (packing && packing.span * range < MAX_PACKED) {
        const { packed } = packing;
        for (let s = 0; s < count; s++) packed[s] = packed[s]! * range + (key[s]! - min);
        packing.span *= range;
        continue;
      }
      for (let s = 0; s < count; s++) key[s] = key[s]! - min;
      packing = { packed: key, span: range };
      columns.push(key);
    } else {
      packing = undefined;
      columns.push(key);
    }
  }
  return columns;
}

/**
 * The best positional keys each match can have (word-positions.ts): each pair of query words at
 * least a word apart, every word in the first field, and exact only where it needed no typo (an
 * exact match needs none) and some document word matches it exactly, stored negated as the key is.
 */
function positionalBounds(slots: number[], typos: Int8Array[], exactWords: boolean[]): PositionalBounds {
  const exactness = new Float64Array(slots.length);
  typos.forEach((of, word) => {
    if (!exactWords[word]) return;
    for (let s = 0; s < slots.length; s++) if (of[slots[s]!] === 0) exactness[s] = exactness[s]! - 1;
  });
  return { proximity: Math.max(0, typos.length - 1), attribute: 0, exactness };
}

/** The keys as numbers, lower first, a positional rule's left to be computed; undefined when one cannot be. */
function lazyKeys(keys: (Int32Array | (Scalar | undefined)[] | PositionalRule)[], directions: number[]) {
  const lazy: LazyKey[] = [];
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i]!;
    const oriented = typeof key === 'string' ? key : orientedKey(key, directions[i]!);
    if (!oriented) return undefined;
    lazy.push(oriented);
  }
  return lazy;
}

/** Compares places in `slots` by numeric keys, then by id; Infinity (a missing sort value) ties with itself. */
function numericCompare(keys: Float64Array[], slots: number[], idRanks: Int32Array) {
  const byId = (a: number, b: number) => idRanks[slots[a]!]! - idRanks[slots[b]!]!;
  if (keys.length === 0) return byId;
  if (keys.length === 1) {
    const [first] = keys as [Float64Array];
    return (a: number, b: number) => {
      const d = first[a]! - first[b]!;
      return d < 0 ? -1 : d > 0 ? 1 : byId(a, b);
    };
  }
  return (a: number, b: number) => {
    for (const key of keys) {
      const d = key[a]! - key[b]!;
      if (d < 0) return -1;
      if (d > 0) return 1;
    }
    return byId(a, b);
  };
}

/** The first value of `field` in each of `slots` (undefined without one), read from its column. */
function firstValues(
  columns: FieldColumns,
  documents: (IndexedDocument | undefined)[],
  slots: number[],
  field: string,
): (Scalar | undefined)[] {
  const { codes, values } = columns.of(documents, field);
  return slots.map((slot) => {
    const code = codes[slot]!;
    if (code >= 0) return values[code];
    return code === MISSING ? undefined : valuesOf(documents[slot]!.values[field])[0];
  });
}

/** The distance in meters of each of `slots` from `from`, undefined for a document without a point. */
export const geoDistances = (
  documents: (IndexedDocument | undefined)[],
  slots: number[],
  field: string,
  from: GeoPoint,
): (number | undefined)[] =>
  slots.map((slot) => {
    const point = documents[slot]!.values[field];
    return isGeoPoint(point) ? distanceMeters(point, from) : undefined;
  });

/** Ranked slots with the pinned ones moved to their positions (or the end, when the list is shorter). */
export function placePins(slots: number[], pins: { slot: number; position: number }[]): number[] {
  const pinnedSlots = new Set(pins.map((pin) => pin.slot));
  const order = slots.filter((slot) => !pinnedSlots.has(slot));
  for (const pin of pins) order.splice(Math.min(pin.position - 1, order.length), 0, pin.slot);
  return order;
}

/** The first `k` items in `compare` order, without sorting everything when k is small. */
function topOf(items: number[], k: number, compare: (a: number, b: number) => number): number[] {
  if (items.length <= k * 4) return [...items].sort(compare).slice(0, k);
  // A max-heap of the best k seen so far: its root is the worst of them.
  const heap: number[] = [];
  const worse = (a: number, b: number) => compare(a, b) > 0;
  const siftUp = (i: number) => {
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!worse(heap[i]!, heap[parent]!)) break;
      [heap[i], heap[parent]] = [heap[parent]!, heap[i]!];
      i = parent;
    }
  };
  const siftDown = (i: number) => {
    for (;;) {
      const left = 2 * i + 1;
      const right = left + 1;
      let largest = i;
      if (left < heap.length && worse(heap[left]!, heap[largest]!)) largest = left;
      if (right < heap.length && worse(heap[right]!, heap[largest]!)) largest = right;
      if (largest === i) return;
      [heap[i], heap[largest]] = [heap[largest]!, heap[i]!];
      i = largest;
    }
  };
  for (const item of items) {
    if (heap.length < k) {
      heap.push(item);
      siftUp(heap.length - 1);
    } else if (k > 0 && compare(item, heap[0]!) < 0) {
      heap[0] = item;
      siftDown(0);
    }
  }
  return heap.sort(compare);
}
