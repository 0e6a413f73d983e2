/**
 * Posting lists of the in-memory index: the ascending slots of the documents holding a term, and
 * how the documents holding every query word are found in them.
 */
import type { IndexedDocument } from './engine';

/** How a document word matches one query word. */
export interface WordMatch {
  typos: number;
  /** The word itself, not a typo, prefix completion or synonym. */
  exact: boolean;
}

/** The ascending slots of the documents holding a term, and the typos the term counts for. */
export interface TermPostings {
  slots: number[];
  typos: number;
}

/** A typed array twice as long (at least `needed`), with the contents of `array`. */
export function grown<T extends Uint32Array | Int32Array>(array: T, needed: number): T {
  if (needed <= array.length) return array;
  const next = new (array.constructor as new (length: number) => T)(Math.max(needed, array.length * 2));
  next.set(array);
  return next;
}

/** Index of the first term not below `word`. */
export function lowerBound(terms: string[], word: string): number {
  let low = 0;
  let high = terms.length;
  while (low < high) {
    const middle = (low + high) >> 1;
    if (terms[middle]! < word) low = middle + 1;
    else high = middle;
  }
  return low;
}

/**
 * For each of the ascending `slots`, the fewest typos among the terms whose postings hold it, -1
 * when none does. Each posting list is searched forward from where the previous slot was found,
 * in steps that double (galloping), so a long list costs about log(its length / slots) per slot.
 */
export function typosWithin(slots: number[], terms: TermPostings[]): Int8Array {
  const found = new Int8Array(slots.length).fill(-1);
  for (const { slots: list, typos: cost } of terms) {
    const length = list.length;
    let at = 0;
    for (let c = 0; c < slots.length && at < length; c++) {
      const target = slots[c]!;
      if (list[at]! < target) {
        let step = 1;
        let high = at + 1;
        while (high < length && list[high]! < target) {
          at = high;
          step *= 2;
          high = at + step;
        }
        let low = at + 1;
        high = Math.min(high, length);
        while (low < high) {
          const middle = (low + high) >> 1;
          if (list[middle]! < target) low = middle + 1;
          else high = middle;
        }
        at = low;
        if (at >= length) break;
      }
      if (list[at] === target) {
        const known = found[c]!;
        if (known === -1 || cost < known) found[c] = cost;
      }
    }
  }
  return found;
}

/**
 * The live documents holding any of a word's terms, ascending, with the fewest typos each needs.
 * `documents`: the index's documents by slot when some slots are dead (replaced or removed), to
 * skip them; undefined when every slot is live. `scratch` is all -1 and left so.
 */
function documentsOf(
  terms: TermPostings[],
  scratch: Int8Array,
  documents: (IndexedDocument | undefined)[] | undefined,
): { slots: number[]; typos: Int8Array } {
  if (terms.length === 1 && documents === undefined) {
    const [only] = terms;
    return { slots: only!.slots.slice(), typos: new Int8Array(only!.slots.length).fill(only!.typos) };
  }
  const found: number[] = [];
  for (const { slots, typos: cost } of terms) {
    for (const slot of slots) {
      if (documents !== undefined && documents[slot] === undefined) continue;
      const known = scratch[slot]!;
      if (known === -1) {
        found.push(slot);
        scratch[slot] = cost;
      } else if (cost < known) scratch[slot] = cost;
    }
  }
  const sorted = terms.length === 1 ? found : Array.from(Int32Array.from(found).sort());
  const typos = new Int8Array(sorted.length);
  for (let i = 0; i < sorted.length; i++) {
    typos[i] = scratch[sorted[i]!]!;
    scratch[sorted[i]!] = -1;
  }
  return { slots: sorted, typos };
}

/**
 * Documents holding the first `count` query words, and per query word the typos each of them
 * needs for it. The rarest word's documents are narrowed down by the others', most selective
 * first, each looked up in the ascending postings by galloping: the work follows the number of
 * candidates, not the length of a frequent word's postings. `scratch` and `documents` as for
 * `documentsOf`.
 */
export function intersect(
  words: TermPostings[][],
  count: number,
  scratch: Int8Array,
  documents: (IndexedDocument | undefined)[] | undefined,
) {
  const size = (terms: TermPostings[]) => terms.reduce((sum, term) => sum + term.slots.length, 0);
  const order = Array.from({ length: count }, (_, i) => i).sort((a, b) => size(words[a]!) - size(words[b]!));
  const start = documentsOf(words[order[0]!]!, scratch, documents);
  let slots = start.slots;
  const typos: (Int8Array | undefined)[] = new Array<Int8Array | undefined>(words.length);
  typos[order[0]!] = start.typos;
  for (const word of order.slice(1)) {
    const found = typosWithin(slots, words[word]!);
    typos[word] = found;
    let kept = 0;
    for (let i = 0; i < slots.length; i++) if (found[i]! >= 0) kept += 1;
    if (kept === slots.length) continue;
    const narrowed = new Array<number>(kept);
    const narrowedTypos = typos.map((of) => of && new Int8Array(kept));
    for (let i = 0, at = 0; i < slots.length; i++) {
      if (found[i]! < 0) continue;
      narrowed[at] = slots[i]!;
      for (let w = 0; w < typos.length; w++) if (typos[w]) narrowedTypos[w]![at] = typos[w]![i]!;
      at += 1;
    }
    slots = narrowed;
    typos.splice(0, typos.length, ...narrowedTypos);
  }
  return { slots, typos };
}
