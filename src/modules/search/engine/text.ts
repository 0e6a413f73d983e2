/**
 * Text handling shared by indexing and querying: one tokenizer (so a query word and an indexed word
 * are compared in the same form) and the typo budget per word length.
 */

const WORD = /[\p{L}\p{N}\p{M}]+/gu;
const MARKS = /\p{M}/gu;

// eslint-disable-next-line no-control-regex
const ASCII = /^[\x00-\x7f]*$/;

/** Lowercase without diacritics: "Café" and "cafe" are the same word (ASCII has none to take off). */
export const normalizeWord = (word: string) =>
  ASCII.test(word) ? word.toLowerCase() : word.normalize('NFKD').replace(MARKS, '').toLowerCase();

/** The words of a text, normalized, in order. */
export function tokenize(text: string): string[] {
  const words: string[] = [];
  for (const match of text.matchAll(WORD)) {
    const word = normalizeWord(match[0]);
    if (word) words.push(word);
  }
  return words;
}

/** The words of a text with their place in it, for highlighting. */
export function tokenizeWithOffsets(text: string): { word: string; start: number; end: number }[] {
  const words: { word: string; start: number; end: number }[] = [];
  for (const match of text.matchAll(WORD)) {
    const word = normalizeWord(match[0]);
    if (word) words.push({ word, start: match.index, end: match.index + match[0].length });
  }
  return words;
}

/** Typos allowed in a query word: none up to 4 letters, one up to 8, two beyond. */
export function typoBudget(word: string): number {
  const length = [...word].length;
  if (length <= 4) return 0;
  if (length <= 8) return 1;
  return 2;
}

const HTML_ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
export const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => HTML_ESCAPES[c]!);

/**
 * Whether a facet value matches a facet query: every query word matches a word of the value with
 * the typo budget of its length, the last one also as a prefix (the value is being typed).
 */
export function facetValueMatches(
  value: string,
  q: string,
  text: { words(text: string): string[]; typoBudget(word: string): number } = { words: tokenize, typoBudget },
): boolean {
  const words = text.words(value);
  const query = text.words(q);
  return query.every((word, i) =>
    words.some(
      (candidate) =>
        (i === query.length - 1 && candidate.startsWith(word)) || withinEdits(candidate, word, text.typoBudget(word)),
    ),
  );
}

/** Damerau-Levenshtein distance (optimal string alignment) of two words is at most `max`. */
function withinEdits(a: string, b: string, max: number): boolean {
  if (Math.abs(a.length - b.length) > max) return false;
  let before = new Array<number>(b.length + 1).fill(0);
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) {
      let value = Math.min(previous[j]! + 1, row[j - 1]! + 1, previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) value = Math.min(value, before[j - 2]! + 1);
      row.push(value);
    }
    before = previous;
    previous = row;
  }
  return previous[b.length]! <= max;
}
