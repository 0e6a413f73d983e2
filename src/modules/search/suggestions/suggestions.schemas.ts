/** zod schemas of query suggestions: the `suggestions` block of search settings, the query and the answer. */
import { z } from '../../../kernel/rest/schemas';
import { isStorableText, UNSTORABLE_TEXT_MESSAGE } from '../../../kernel/validation';
import { tokenize } from '../engine/text';

export const MAX_DENIED_ENTRIES = 1000;
export const MAX_DENIED_ENTRY_LENGTH = 100;
export const DEFAULT_MIN_SEARCHES = 2;
export const DEFAULT_SUGGESTIONS_LIMIT = 5;
export const MAX_SUGGESTIONS_LIMIT = 20;
export const MAX_SUGGESTIONS_QUERY_LENGTH = 200;
/** Days of the search log suggestions come from (fewer when SEARCH_ANALYTICS_RETENTION_DAYS keeps fewer). */
export const SUGGESTIONS_WINDOW_DAYS = 30;

export const SuggestionSettingsInput = z
  .object({
    deny: z
      .array(
        z
          .string()
          .trim()
          .min(1)
          .max(MAX_DENIED_ENTRY_LENGTH)
          .refine(isStorableText, { message: UNSTORABLE_TEXT_MESSAGE })
          .refine((entry) => tokenize(entry).length > 0, 'must hold a word (letters or digits)'),
      )
      .max(MAX_DENIED_ENTRIES)
      .optional()
      .openapi({
        description:
          `Up to ${MAX_DENIED_ENTRIES} words or phrases (1-${MAX_DENIED_ENTRY_LENGTH} characters each): a query ` +
          'holding one as whole words (case and accents ignored) is never suggested.',
        example: ['cheap', 'free shipping'],
      }),
    min_searches: z
      .int()
      .min(1)
      .max(1_000_000)
      .optional()
      .openapi({
        description:
          'Searches with results a query needs within the window to be suggested; ' +
          `default ${DEFAULT_MIN_SEARCHES}.`,
      }),
  })
  .strict()
  .openapi({
    description:
      "Query suggestions of the key (`GET /api/instant/search/{key}/suggestions`). Left out, the key's " +
      'suggestions deny nothing and need ' +
      `${DEFAULT_MIN_SEARCHES} searches with results.`,
  });

export type SuggestionSettingsInputData = z.output<typeof SuggestionSettingsInput>;

export const SuggestionSettingsOutput = z.object({
  deny: z.array(z.string()),
  min_searches: z.int(),
});

export type SuggestionSettingsData = z.output<typeof SuggestionSettingsOutput>;

/** The stored block of a settings input: entries trimmed, defaults filled in. */
export const suggestionSettingsOf = (input: SuggestionSettingsInputData): SuggestionSettingsData => ({
  deny: input.deny ?? [],
  min_searches: input.min_searches ?? DEFAULT_MIN_SEARCHES,
});

export const SuggestionsQuery = z
  .object({
    q: z
      .string()
      .min(1)
      .max(MAX_SUGGESTIONS_QUERY_LENGTH)
      .openapi({
        description: `What the searcher typed so far, 1-${MAX_SUGGESTIONS_QUERY_LENGTH} characters.`,
        example: 'lam',
      }),
    limit: z.coerce
      .number()
      .int()
      .min(1)
      .max(MAX_SUGGESTIONS_LIMIT)
      .default(DEFAULT_SUGGESTIONS_LIMIT)
      .openapi({
        type: 'integer',
        minimum: 1,
        maximum: MAX_SUGGESTIONS_LIMIT,
        default: DEFAULT_SUGGESTIONS_LIMIT,
        description: `Suggestions at most, 1-${MAX_SUGGESTIONS_LIMIT}; default ${DEFAULT_SUGGESTIONS_LIMIT}.`,
      }),
    index: z
      .string()
      .min(1)
      .max(200)
      .optional()
      .openapi({
        description:
          "Alias of the index whose searches are suggested, one of the key's search settings; default the first " +
          'index of the settings.',
      }),
  })
  .strict();

export const SuggestionOutput = z
  .object({
    query: z.string().openapi({ description: 'The query as searched (trimmed and lowercased).' }),
    count: z
      .int()
      .openapi({ description: `Searches of it that found results in the last ${SUGGESTIONS_WINDOW_DAYS} days.` }),
    hits: z.int().openapi({ description: 'The average result count of those searches, rounded.' }),
  })
  .openapi('QuerySuggestion', { example: { query: 'desk lamp', count: 42, hits: 7 } });

export type SuggestionData = z.output<typeof SuggestionOutput>;
