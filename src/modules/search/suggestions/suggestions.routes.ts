/** `GET /api/instant/search/{key}/suggestions`: query suggestions through a proxy key. */
import { single } from '../../../kernel/envelope';
import { singleEnvelope, z } from '../../../kernel/rest/schemas';
import { underField } from '../../../kernel/validation';
import { defineOperation } from '../../context';
import {
  DEFAULT_MIN_SEARCHES,
  MAX_DENIED_ENTRIES,
  SUGGESTIONS_WINDOW_DAYS,
  SuggestionOutput,
  SuggestionsQuery,
} from './suggestions.schemas';
import { MAX_SUGGESTIONS_PER_INDEX } from './suggestion-index';

export const getSearchSuggestions = defineOperation({
  operationId: 'getSearchSuggestions',
  method: 'get',
  path: '/api/instant/search/{key}/suggestions',
  summary: 'Query suggestions',
  description:
    "Popular queries of one of the key's indexes that match what is typed in `q`: the queries searched through " +
    `any key or token in the last ${SUGGESTIONS_WINDOW_DAYS} days (fewer when \`SEARCH_ANALYTICS_RETENTION_DAYS\` ` +
    "keeps fewer) whose searches found results at least `suggestions.min_searches` times (the key's search " +
    `settings; default ${DEFAULT_MIN_SEARCHES}). Each word of \`q\` must match a word of the query, the last one ` +
    'also as a prefix, with the typos a search allows (case and accents ignored); the queries with fewer typos ' +
    'come first, then the most searched. `count` is the searches with results, `hits` their average result ' +
    "count. A query holding a word or phrase of the settings' `suggestions.deny` (up to " +
    `${MAX_DENIED_ENTRIES}) is never suggested. Each process keeps the ${MAX_SUGGESTIONS_PER_INDEX} most ` +
    'searched queries of an index in memory and rebuilds them every `SEARCH_SUGGESTIONS_REFRESH_SECONDS` ' +
    '(default 300) in the background, so a search shows up within that time; suggestions come from the ' +
    'search log in PostgreSQL and are the same with either search engine. Same access rule as searching ' +
    'through the key; callable from browsers (CORS). Each client address may send ' +
    '`SEARCH_SUGGESTIONS_PER_MINUTE` requests per minute (default 600), then gets a 429 with `Retry-After`.',
  tag: 'Search',
  security: 'bearer-optional',
  scopes: ['search'],
  cors: true,
  params: z.object({
    key: z.string().max(200).openapi({ description: 'Key of the proxy whose search settings are used.' }),
  }),
  query: SuggestionsQuery,
  // Public, so there may be no credential to count against: each client address is counted.
  limitPerAddress: { name: 'search suggestions', perMinute: (services) => services.config.searchSuggestionsPerMinute },
  responses: {
    200: {
      description: 'The suggestions, best first (none when nothing matches).',
      schema: singleEnvelope(z.array(SuggestionOutput)).openapi({
        example: {
          data: [
            { query: 'desk lamp', count: 42, hits: 7 },
            { query: 'lamp', count: 17, hits: 12 },
          ],
          page: null,
          meta: null,
        },
      }),
    },
  },
  errors: ['BAD_REQUEST', 'FORBIDDEN', 'NOT_FOUND', 'TOO_MANY_REQUESTS'],
  async handler({ params, query, optionalPrincipal, services }) {
    const suggestions = await underField('query', () =>
      services.search.suggestions.suggest(optionalPrincipal, params.key, query),
    );
    return { status: 200, body: single(suggestions) };
  },
});
