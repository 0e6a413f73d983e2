/** Request and response shapes of an index's word matching settings and its language. */
import { z } from '../../kernel/rest/schemas';
import { DEFAULT_MATCHING, LANGUAGES } from './engine/matching';

/** More characters than any shop separates codes with or indexes as symbols. */
export const MAX_MATCHING_CHARACTERS = 32;
export const MAX_TYPO_WORD_LENGTH = 100;

/**
 * One ASCII punctuation or symbol character: Typesense takes only single-byte characters here, and
 * letters, digits and spaces are words or separators already.
 */
const SeparatorCharacter = z
  .string()
  .max(1)
  .regex(/^[!-/:-@[-`{-~]$/, 'must be one ASCII punctuation or symbol character (not a letter, digit or space)');

const characterList = (description: string) =>
  z
    .array(SeparatorCharacter)
    .max(MAX_MATCHING_CHARACTERS)
    .refine((list) => new Set(list).size === list.length, 'must not repeat a character')
    .optional()
    .openapi({ description });

const WordLength = z.int().min(1).max(MAX_TYPO_WORD_LENGTH);

export const MatchingInput = z
  .object({
    exact_fields: z
      .array(z.string().min(1).max(64))
      .max(100)
      .refine((list) => new Set(list).size === list.length, 'must not repeat a value')
      .optional()
      .openapi({
        description:
          'Search fields matched word for word: no typos and no completion of the last word (`sku`, `gtin`). ' +
          'Each must be one of the search fields. Default none.',
      }),
    typos_on_digit_words: z
      .boolean()
      .optional()
      .openapi({
        description:
          'Whether a query word of digits only (`9789525557992`) may match with typos. Default `false`: a code one ' +
          'digit off is another product.',
      }),
    min_word_length_for_one_typo: WordLength.optional().openapi({
      description:
        'Shortest query word that may match with one typo. ' + `Default ${DEFAULT_MATCHING.minWordLengthOneTypo}.`,
    }),
    min_word_length_for_two_typos: WordLength.optional().openapi({
      description:
        'Shortest query word that may match with two typos; at least `min_word_length_for_one_typo`. ' +
        `Default ${DEFAULT_MATCHING.minWordLengthTwoTypos}.`,
    }),
    token_separators: characterList(
      'Characters that join the parts of a code: `["-"]` makes `AB-1234` also the word `ab1234`, so `AB-1234`, ' +
        '`AB1234` and `ab 1234` find it. Every character that is not a letter or digit separates words anyway. ' +
        `Up to ${MAX_MATCHING_CHARACTERS}. Default none.`,
    ),
    symbols_to_index: characterList(
      'Characters kept as part of words instead of separating them: `["+", "#"]` tells `c++` and `c#` from `c`. ' +
        `Up to ${MAX_MATCHING_CHARACTERS}, none also in \`token_separators\`. Default none.`,
    ),
  })
  .strict()
  .superRefine((matching, context) => {
    const one = matching.min_word_length_for_one_typo ?? DEFAULT_MATCHING.minWordLengthOneTypo;
    const two = matching.min_word_length_for_two_typos ?? DEFAULT_MATCHING.minWordLengthTwoTypos;
    if (two < one)
      context.addIssue({
        code: 'custom',
        path: ['min_word_length_for_two_typos'],
        message: `must be at least min_word_length_for_one_typo (${one})`,
      });
    const separators = new Set(matching.token_separators ?? []);
    (matching.symbols_to_index ?? []).forEach((symbol, i) => {
      if (separators.has(symbol))
        context.addIssue({ code: 'custom', path: ['symbols_to_index', i], message: 'is also a token separator' });
    });
  })
  .openapi('SearchMatchingInput', {
    description: 'How the query matches words. Settings left out take their defaults.',
  });

export type MatchingInputData = z.output<typeof MatchingInput>;

export const Language = z.enum(LANGUAGES).openapi('SearchLanguage', {
  description:
    'Words are matched by their Snowball stem in this language (`dresses` finds `dress`, `fietsen` `fiets`, ' +
    '`Kleider` `Kleid`); highlights mark the words as written. Default none.',
});

export const MatchingOutput = z
  .object({
    exact_fields: z.array(z.string()),
    typos_on_digit_words: z.boolean(),
    min_word_length_for_one_typo: z.int(),
    min_word_length_for_two_typos: z.int(),
    token_separators: z.array(z.string()),
    symbols_to_index: z.array(z.string()),
  })
  .openapi('SearchMatching', { description: 'The matching settings in effect, defaults included.' });
