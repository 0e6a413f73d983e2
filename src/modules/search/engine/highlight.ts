/** Hits of the embedded engine: each search field's text with the words that matched marked. */
import { isGeoPoint, type EngineHit, type HighlightResult, type IndexedDocument } from './engine';
import { EXACT_MARK, type TextMatcher } from './matching';
import type { WordMatch } from './postings';
import { escapeHtml } from './text';

const HIGHLIGHT_PRE = '<mark>';
const HIGHLIGHT_POST = '</mark>';

/**
 * A document as a hit, its search fields highlighted: `words` are the query words and `matches`
 * the document words each matches; `exactField` tells, per search field, whether it is matched
 * word for word.
 */
export function hitOf(
  document: IndexedDocument,
  searchFields: string[],
  exactField: boolean[],
  matcher: TextMatcher,
  words: string[],
  matches: Map<string, WordMatch>[],
): EngineHit {
  const highlight: EngineHit['highlight'] = {};
  searchFields.forEach((field, f) => {
    const value = document.values[field];
    // A point has no words to mark.
    if (value === null || value === undefined || isGeoPoint(value)) return;
    const exact = exactField[f]!;
    const one = (text: string): HighlightResult => {
      let out = '';
      let at = 0;
      const matched = new Set<number>();
      // Stemmed words are compared as stems and marked as written.
      for (const token of matcher.wordsAt(text, exact)) {
        const term = exact ? EXACT_MARK + token.word : token.word;
        const which = matches.findIndex(
          (wordMatches) => wordMatches.has(term) || (token.typed !== token.word && wordMatches.has(token.typed)),
        );
        if (which === -1) continue;
        matched.add(which);
        out +=
          escapeHtml(text.slice(at, token.start)) +
          HIGHLIGHT_PRE +
          escapeHtml(text.slice(token.start, token.end)) +
          HIGHLIGHT_POST;
        at = token.end;
      }
      out += escapeHtml(text.slice(at));
      return {
        value: out,
        matchLevel: matched.size === 0 ? 'none' : matched.size === words.length ? 'full' : 'partial',
        matchedWords: [...matched].sort().map((i) => words[i]!),
      };
    };
    highlight[field] = Array.isArray(value) ? value.map((item) => one(String(item))) : one(String(value));
  });
  return { document, highlight };
}
