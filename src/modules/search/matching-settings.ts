/** Matching settings between their REST shape and their stored shape (only what was given is stored). */
import { effectiveMatching, type IndexSettings } from './definition';
import type { IndexInputData, IndexRecord } from './search.schemas';

/** The matching settings an index input gives, in their stored form. */
export function matchingSettingsOf(input: IndexInputData): IndexSettings['matching'] {
  const given = input.matching ?? {};
  const entries = {
    exactFields: given.exact_fields,
    typosOnDigitWords: given.typos_on_digit_words,
    minWordLengthOneTypo: given.min_word_length_for_one_typo,
    minWordLengthTwoTypos: given.min_word_length_for_two_typos,
    tokenSeparators: given.token_separators,
    symbolsToIndex: given.symbols_to_index,
    language: input.language ?? undefined,
  };
  return Object.fromEntries(Object.entries(entries).filter(([, value]) => value !== undefined));
}

/** The matching settings in effect and the language, as an index record shows them. */
export function matchingRecord(settings: Pick<IndexSettings, 'matching'>): Pick<IndexRecord, 'matching' | 'language'> {
  const matching = effectiveMatching(settings);
  return {
    matching: {
      exact_fields: matching.exactFields,
      typos_on_digit_words: matching.typosOnDigitWords,
      min_word_length_for_one_typo: matching.minWordLengthOneTypo,
      min_word_length_for_two_typos: matching.minWordLengthTwoTypos,
      token_separators: matching.tokenSeparators,
      symbols_to_index: matching.symbolsToIndex,
    },
    language: matching.language,
  };
}
