/**
 * The terms of an index as a trie in typed arrays, for the typo search: the terms within a number of
 * edits of a query word are found by walking the trie depth first with one row of the edit-distance
 * table per depth, shared by every term under that prefix, and leaving a subtree as soon as its
 * prefix's row is out of reach. Most of a large vocabulary is never looked at, and a pruned subtree
 * costs nothing.
 */

/** An edit distance beyond any budget. */
const OUT_OF_REACH = 1 << 20;

export class TermTrie {
  /** Per node (the root is 0): its first child, its next sibling (-1: none), the code unit leading to it, and the
   * index in `terms` of the term ending there (-1: none). Siblings are in code unit order. */
  private readonly firstChild: Int32Array;
  private readonly nextSibling: Int32Array;
  private readonly unit: Uint16Array;
  private readonly termAt: Int32Array;

  /** `terms` sorted (by code unit, as `Array.prototype.sort` does) and distinct. */
  constructor(private readonly terms: string[]) {
    let capacity = 1;
    for (const term of terms) capacity += term.length;
    const firstChild = new Int32Array(capacity).fill(-1);
    const nextSibling = new Int32Array(capacity).fill(-1);
    const lastChild = new Int32Array(capacity).fill(-1);
    const unit = new Uint16Array(capacity);
    const termAt = new Int32Array(capacity).fill(-1);
    let count = 1;
    const path = [0];
    let previous = '';
    terms.forEach((term, index) => {
      let shared = 0;
      const limit = Math.min(previous.length, term.length);
      while (shared < limit && previous.charCodeAt(shared) === term.charCodeAt(shared)) shared++;
      path.length = shared + 1;
      for (let depth = shared; depth < term.length; depth++) {
        const node = count++;
        const parent = path[depth]!;
        unit[node] = term.charCodeAt(depth);
        if (lastChild[parent] === -1) firstChild[parent] = node;
        else nextSibling[lastChild[parent]!] = node;
        lastChild[parent] = node;
        path.push(node);
      }
      termAt[path[term.length]!] = index;
      previous = term;
    });
    this.firstChild = firstChild.slice(0, count);
    this.nextSibling = nextSibling.slice(0, count);
    this.unit = unit.slice(0, count);
    this.termAt = termAt.slice(0, count);
  }

  /**
   * Terms within `max` edits (Damerau-Levenshtein, optimal string alignment) of `word`, with their
   * distance, in term order. Only the cells within `max` of the table's diagonal are computed: the
   * others cannot be within reach.
   */
  within(word: string, max: number): [string, number][] {
    const { firstChild, nextSibling, unit, termAt, terms } = this;
    const n = word.length;
    const found: [string, number][] = [];
    const first = new Int32Array(n + 2);
    for (let j = 0; j < first.length; j++) first[j] = j <= max ? j : OUT_OF_REACH;
    const rows: Int32Array[] = [first];
    if (termAt[0]! >= 0 && n <= max) found.push([terms[termAt[0]!]!, n]);
    /** The node at each depth of the current path. */
    const path = [0];
    let depth = 1;
    let node = firstChild[0]!;
    while (depth > 0) {
      if (node === -1) {
        // Every sibling at this depth is done: on with the parent's next sibling.
        depth -= 1;
        if (depth > 0) node = nextSibling[path[depth]!]!;
        continue;
      }
      path[depth] = node;
      const above = rows[depth - 1]!;
      const row = (rows[depth] ??= new Int32Array(n + 2));
      const c = unit[node]!;
      const before = depth > 1 ? unit[path[depth - 1]!]! : -1;
      const low = Math.max(1, depth - max);
      const high = Math.min(n, depth + max);
      row[0] = depth;
      if (low > 1) row[low - 1] = OUT_OF_REACH;
      row[high + 1] = OUT_OF_REACH;
      let rowMin = depth <= max ? depth : OUT_OF_REACH;
      for (let j = low; j <= high; j++) {
        let value = Math.min(above[j]! + 1, row[j - 1]! + 1, above[j - 1]! + (c === word.charCodeAt(j - 1) ? 0 : 1));
        if (j > 1 && c === word.charCodeAt(j - 2) && before === word.charCodeAt(j - 1))
          value = Math.min(value, rows[depth - 2]![j - 2]! + 1);
        row[j] = value;
        if (value < rowMin) rowMin = value;
      }
      const term = termAt[node]!;
      if (term >= 0 && Math.abs(depth - n) <= max && row[n]! <= max) found.push([terms[term]!, row[n]!]);
      if (rowMin <= max && firstChild[node] !== -1) {
        depth += 1;
        node = firstChild[node]!;
      } else node = nextSibling[node]!;
    }
    return found;
  }
}
