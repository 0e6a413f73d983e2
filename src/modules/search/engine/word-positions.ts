/**
 * Where query words match in documents: the proximity, attribute and exactness ranking rules. The
 * index keeps every document's search fields as term ids, slot after slot and field after field,
 * each field closed by FIELD_END; a slot's run starts at `wordStart[slot]` and ends where the next
 * one's starts.
 */
import type { WordMatch } from './postings';

/** Closes each search field in a document's term ids (no term has this id). */
export const FIELD_END = 0xffffffff;
/** Proximity of two query words that are far apart or in different fields. */
const MAX_PROXIMITY = 8;

/** Proximity, attribute and exactness of each ranked document, by its place in the ranked list. */
export interface PositionalScores {
  proximity: Int32Array;
  attribute: Int32Array;
  exactness: Int32Array;
}

/** The documents' term ids, and how the terms of the query's matches are found among them. */
export interface WordLayout {
  words: Uint32Array;
  wordStart: Uint32Array;
  /** Search fields per document. */
  fieldCount: number;
  termIds: Map<string, number>;
  /** One entry per term, all -1, and left so: the row of each term in the query's matches. */
  rowOf: Int32Array;
}

/**
 * Proximity, attribute and exactness of each document from where its words match the query
 * words, in one pass over each document's term ids with buffers reused from document to document.
 */
export function positionalScores(
  layout: WordLayout,
  slots: number[],
  matches: Map<string, WordMatch>[],
): PositionalScores {
  const n = matches.length;
  const { fieldCount, rowOf, termIds } = layout;
  // For each matching term, which query words it matches: one typed-array lookup per document word.
  const byTerm = new Map<number, number[]>();
  matches.forEach((wordMatches, word) => {
    for (const [term, match] of wordMatches) {
      const id = termIds.get(term)!;
      let list = byTerm.get(id);
      if (!list) byTerm.set(id, (list = []));
      list.push(match.exact ? -word - 1 : word);
    }
  });
  const from = new Int32Array(byTerm.size + 1);
  const matchWord = new Int32Array([...byTerm.values()].reduce((sum, list) => sum + list.length, 0));
  const matchExact = new Uint8Array(matchWord.length);
  let row = 0;
  let at = 0;
  for (const [id, list] of byTerm) {
    rowOf[id] = row;
    for (const encoded of list) {
      matchWord[at] = encoded < 0 ? -encoded - 1 : encoded;
      matchExact[at++] = encoded < 0 ? 1 : 0;
    }
    from[++row] = at;
  }

  const scores = {
    proximity: new Int32Array(slots.length),
    attribute: new Int32Array(slots.length),
    exactness: new Int32Array(slots.length),
  };
  const bestField = new Int32Array(n);
  const exact = new Uint8Array(n);
  /** Last position of each query word in the field being read, -1 when none yet. */
  const last = new Int32Array(n);
  const closest = new Int32Array(Math.max(0, n - 1));
  const { words, wordStart } = layout;
  try {
    for (let s = 0; s < slots.length; s++) {
      const slot = slots[s]!;
      bestField.fill(fieldCount);
      exact.fill(0);
      closest.fill(MAX_PROXIMITY);
      last.fill(-1);
      let field = 0;
      let position = 0;
      for (let w = wordStart[slot]!, end = wordStart[slot + 1]!; w < end; w++) {
        const term = words[w]!;
        if (term === FIELD_END) {
          field += 1;
          position = 0;
          last.fill(-1);
          continue;
        }
        const r = rowOf[term]!;
        if (r >= 0) {
          for (let m = from[r]!, mEnd = from[r + 1]!; m < mEnd; m++) {
            const i = matchWord[m]!;
            if (field < bestField[i]!) bestField[i] = field;
            if (matchExact[m] === 1) exact[i] = 1;
            // In order the distance counts as is, reversed one more.
            if (i > 0 && last[i - 1]! >= 0 && last[i - 1] !== position)
              closest[i - 1] = Math.min(closest[i - 1]!, position - last[i - 1]!);
            if (i + 1 < n && last[i + 1]! >= 0 && last[i + 1] !== position)
              closest[i] = Math.min(closest[i]!, position - last[i + 1]! + 1);
            last[i] = position;
          }
        }
        position += 1;
      }
      let proximity = 0;
      for (let i = 0; i < n - 1; i++) proximity += closest[i]!;
      let attribute = 0;
      let exactness = 0;
      for (let i = 0; i < n; i++) {
        attribute += bestField[i]!;
        exactness += exact[i]!;
      }
      scores.proximity[s] = proximity;
      scores.attribute[s] = attribute;
      scores.exactness[s] = exactness;
    }
  } finally {
    for (const id of byTerm.keys()) rowOf[id] = -1;
  }
  return scores;
}
