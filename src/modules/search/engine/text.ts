/**
 * Text handling shared by indexing and querying: one tokenizer (so a query word and an indexed word
 * are compared in the same form) and the typo budget per word length.
 */

const WORD = /[\p{L}\p{N}\p{M}]+/gu;
const MARKS = /\p{M}/gu;

/** Lowercase without diacritics: "Café" and "cafe" are the same word. */
export const normalizeWord = (word: string) => word.normalize('NFKD').replace(MARKS, '').toLowerCase();

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
