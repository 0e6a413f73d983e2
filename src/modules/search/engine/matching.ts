/**
 * How an index turns text into the words it matches: which characters are part of words
 * (`symbols_to_index`), which join parts of one code (`token_separators`), the language whose stems
 * are matched, and the typo budget per word (by length; none for words of digits unless asked).
 * Indexing and querying share one `TextMatcher` per index, so both see words in the same form.
 */
import { stemmer as dutch } from '@orama/stemmers/dutch';
import { stemmer as english } from '@orama/stemmers/english';
import { stemmer as french } from '@orama/stemmers/french';
import { stemmer as german } from '@orama/stemmers/german';
import { stemmer as spanish } from '@orama/stemmers/spanish';
import { normalizeWord } from './text';

export const LANGUAGES = ['en', 'nl', 'de', 'fr', 'es'] as const;
export type Language = (typeof LANGUAGES)[number];

/** Snowball stemmers (the algorithms Typesense's `stem` uses), by language. */
const STEMMERS: Record<Language, (word: string) => string> = {
  en: english,
  nl: dutch,
  de: german,
  fr: french,
  es: spanish,
};

export interface MatchingSettings {
  /** Search fields matched word for word: no typos, no completion of the last word. */
  exactFields: string[];
  /** Whether a query word of digits only may match with typos (a GTIN one digit off is another product). */
  typosOnDigitWords: boolean;
  /** Shortest query word that may have one typo, and two. */
  minWordLengthOneTypo: number;
  minWordLengthTwoTypos: number;
  /** Characters that join the parts of one code: `AB-1234` is also the word `ab1234`. */
  tokenSeparators: string[];
  /** Characters that are part of words instead of separating them (`c++`, `c#`). */
  symbolsToIndex: string[];
  /** Words are matched by their stem in this language. */
  language: Language | null;
}

export const DEFAULT_MATCHING: MatchingSettings = {
  exactFields: [],
  typosOnDigitWords: false,
  minWordLengthOneTypo: 5,
  minWordLengthTwoTypos: 9,
  tokenSeparators: [],
  symbolsToIndex: [],
  language: null,
};

/** Marks the terms of exact fields, so the typo and prefix search (which skip marked terms) never reach them. */
export const EXACT_MARK = '\u0002';

const DIGITS = /^\p{N}+$/u;
const escapeClass = (chars: string[]) => chars.map((char) => char.replace(/[\\\]^-]/g, '\\$&')).join('');

export interface WordAt {
  word: string;
  /** The word as written (normalized), before stemming. */
  typed: string;
  start: number;
  end: number;
}

/** ASCII letters and digits: the ASCII characters in `\p{L}`, `\p{N}` and `\p{M}`. */
const ASCII_WORD_CHAR = /[A-Za-z0-9]/;

export class TextMatcher {
  private readonly wordPattern: RegExp;
  /** Per ASCII character code, 1 when the word pattern takes it as part of a word. */
  private readonly asciiWordChars = new Uint8Array(128);
  private readonly stem: ((word: string) => string) | null;
  private readonly separators: Set<string>;
  readonly exactFields: Set<string>;

  constructor(readonly settings: MatchingSettings = DEFAULT_MATCHING) {
    this.wordPattern = new RegExp(`[\\p{L}\\p{N}\\p{M}${escapeClass(settings.symbolsToIndex)}]+`, 'gu');
    const stemmer = settings.language ? STEMMERS[settings.language] : null;
    this.stem = stemmer;
    this.separators = new Set(settings.tokenSeparators);
    this.exactFields = new Set(settings.exactFields);
    for (let code = 0; code < 128; code++) {
      const char = String.fromCharCode(code);
      if (ASCII_WORD_CHAR.test(char) || settings.symbolsToIndex.some((symbol) => symbol.includes(char)))
        this.asciiWordChars[code] = 1;
    }
  }

  /** The words of a text with their place in it, normalized (and stemmed unless `exact`). */
  wordsAt(text: string, exact = false): WordAt[] {
    const words: WordAt[] = [];
    for (const match of text.matchAll(this.wordPattern)) {
      const typed = normalizeWord(match[0]);
      if (!typed) continue;
      const word = this.stem && !exact ? this.stem(typed) : typed;
      words.push({ word, typed, start: match.index, end: match.index + match[0].length });
    }
    return words;
  }

  /**
   * The words of a text, in order: `wordsAt` without an object per word, since this one runs on
   * every field of every document indexed.
   */
  words(text: string, exact = false): string[] {
    return this.asciiWords(text, exact) ?? this.patternWords(text, exact);
  }

  /**
   * `words` of a text of ASCII characters only, read character by character (several times faster
   * than the pattern, and an ASCII word is only lowercased); undefined for any other text.
   */
  private asciiWords(text: string, exact: boolean): string[] | undefined {
    const words: string[] = [];
    const wordChars = this.asciiWordChars;
    const stem = exact ? null : this.stem;
    let start = -1;
    for (let i = 0; i <= text.length; i++) {
      // -1 past the end, which is no character of a word, closes the last word.
      const code = i < text.length ? text.charCodeAt(i) : -1;
      if (code >= 128) return undefined;
      if (wordChars[code] === 1) {
        if (start < 0) start = i;
      } else if (start >= 0) {
        const typed = text.slice(start, i).toLowerCase();
        words.push(stem ? stem(typed) : typed);
        start = -1;
      }
    }
    return words;
  }

  private patternWords(text: string, exact: boolean): string[] {
    const words: string[] = [];
    const pattern = this.wordPattern;
    pattern.lastIndex = 0;
    for (let match = pattern.exec(text); match; match = pattern.exec(text)) {
      const typed = normalizeWord(match[0]);
      if (!typed) continue;
      words.push(this.stem && !exact ? this.stem(typed) : typed);
    }
    return words;
  }

  /**
   * Codes written with token separators, as one word each: `AB-1234` gives `ab1234`, so a query
   * typed without the separator finds it (its parts are words of their own as well).
   */
  joinedWords(text: string): string[] {
    if (this.separators.size === 0) return [];
    const words = this.wordsAt(text, true);
    const joined: string[] = [];
    let run = words[0]?.word ?? '';
    let parts = 1;
    for (let i = 1; i <= words.length; i++) {
      const gap = i < words.length ? text.slice(words[i - 1]!.end, words[i]!.start) : '';
      if (i < words.length && gap.length > 0 && [...gap].every((char) => this.separators.has(char))) {
        run += words[i]!.word;
        parts += 1;
        continue;
      }
      if (parts > 1) joined.push(run);
      run = words[i]?.word ?? '';
      parts = 1;
    }
    return joined;
  }

  /**
   * What a query word may equal in the index besides itself: its stem, and the stem of that (a
   * Snowball stemmer may shorten a stem once more: Dutch `fietsen` → `fiets` → `fiet`).
   */
  queryForms(word: string): string[] {
    if (!this.stem) return [word];
    const stem = this.stem(word);
    return [...new Set([stem, word, this.stem(stem)])];
  }

  /** Typos a query word may have: by its length, none for a word of digits unless the index allows it. */
  typoBudget(word: string): number {
    if (!this.settings.typosOnDigitWords && DIGITS.test(word)) return 0;
    const length = [...word].length;
    if (length >= this.settings.minWordLengthTwoTypos) return 2;
    if (length >= this.settings.minWordLengthOneTypo) return 1;
    return 0;
  }
}
