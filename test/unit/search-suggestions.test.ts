/**
 * The pure parts of query suggestions: the in-memory index of an index's popular queries (prefix and
 * typo matching, order, minimum count, deny list, limit), the deny list's whole-word matching, the
 * settings block's defaults and bounds, the query parameters, and the configuration variables.
 */
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/kernel/config';
import { safeParseInput } from '../../src/kernel/validation';
import { denyListOf, isDenied, SuggestionIndex } from '../../src/modules/search/suggestions/suggestion-index';
import {
  suggestionSettingsOf,
  SuggestionSettingsInput,
  SuggestionsQuery,
} from '../../src/modules/search/suggestions/suggestions.schemas';

const popular = [
  { query: 'desk lamp', searches: 9, hits: 2 },
  { query: 'lamp', searches: 5, hits: 3 },
  { query: 'lamp shade', searches: 5, hits: 1 },
  { query: 'leather jacket', searches: 4, hits: 6 },
  { query: 'jacket', searches: 7, hits: 12 },
  { query: 'café table', searches: 2, hits: 1 },
  { query: 'chair', searches: 1, hits: 4 },
  { query: 'cheap chair', searches: 3, hits: 2 },
  { query: 'shirt', searches: 2, hits: 5 },
  { query: 'short', searches: 50, hits: 8 },
];
const index = new SuggestionIndex('00000000-0000-7000-8000-000000000001', popular);
const options = { limit: 5, minSearches: 1, deny: [] as string[] };
const suggested = (q: string, more: Partial<typeof options> = {}) =>
  index.suggest(q, { ...options, ...more }).map((suggestion) => suggestion.query);

describe('SuggestionIndex', () => {
  it('holds every popular query', () => {
    expect(index.size).toBe(popular.length);
  });

  it('completes the last word, most searched first, with the count and hits of each', () => {
    expect(index.suggest('la', options)).toEqual([
      { query: 'desk lamp', count: 9, hits: 2 },
      { query: 'lamp', count: 5, hits: 3 },
      { query: 'lamp shade', count: 5, hits: 1 },
    ]);
    expect(suggested('LAMP S')).toEqual(['lamp shade']);
    // A finished word (followed by a space) is not completed.
    expect(suggested('lam ')).toEqual([]);
  });

  it('matches with typos, fewer typos first, and ignores accents', () => {
    // One typo from both: the more searched first.
    expect(suggested('jackt')).toEqual(['jacket', 'leather jacket']);
    // What was typed before what resembles it, however often that was searched.
    expect(suggested('shirt')).toEqual(['shirt', 'short']);
    expect(suggested('lether')).toEqual(['leather jacket']);
    expect(suggested('CAFE')).toEqual(['café table']);
    // Short words allow no typos.
    expect(suggested('lsmp')).toEqual([]);
  });

  it('needs every typed word', () => {
    expect(suggested('cheap ch')).toEqual(['cheap chair']);
    expect(suggested('cheap lamp')).toEqual([]);
  });

  it('leaves out queries searched fewer times than the minimum', () => {
    expect(suggested('ch')).toEqual(['cheap chair', 'chair']);
    expect(suggested('ch', { minSearches: 2 })).toEqual(['cheap chair']);
    expect(suggested('ch', { minSearches: 4 })).toEqual([]);
  });

  it('leaves out queries holding a denied word or phrase', () => {
    expect(suggested('ch', { deny: ['Cheap'] })).toEqual(['chair']);
    expect(suggested('la', { deny: ['desk lamp'] })).toEqual(['lamp', 'lamp shade']);
    expect(suggested('la', { deny: ['lamp desk', 'la'] })).toEqual(['desk lamp', 'lamp', 'lamp shade']);
    // The deny list of another key applies to its own requests only.
    expect(suggested('ch')).toEqual(['cheap chair', 'chair']);
  });

  it('gives at most `limit`, and nothing for a query without words', () => {
    expect(suggested('l', { limit: 2 })).toEqual(['desk lamp', 'lamp']);
    expect(suggested('!?')).toEqual([]);
    expect(suggested(' ')).toEqual([]);
  });

  it('an index without popular queries suggests nothing', () => {
    expect(new SuggestionIndex('00000000-0000-7000-8000-000000000002', []).suggest('lamp', options)).toEqual([]);
  });
});

describe('the deny list', () => {
  const denied = denyListOf(['Free Shipping', 'crap', '  ', 'ÉCO']);

  it('matches whole words in a row, case and accents ignored', () => {
    expect(isDenied(['free', 'shipping', 'lamp'], denied)).toBe(true);
    expect(isDenied(['lamp', 'free', 'shipping'], denied)).toBe(true);
    expect(isDenied(['shipping', 'free'], denied)).toBe(false);
    expect(isDenied(['free', 'lamp', 'shipping'], denied)).toBe(false);
    expect(isDenied(['crap'], denied)).toBe(true);
    expect(isDenied(['crappy'], denied)).toBe(false);
    expect(isDenied(['eco', 'lamp'], denied)).toBe(true);
    expect(isDenied([], denied)).toBe(false);
  });

  it('ignores entries without words', () => {
    expect([...denyListOf(['  ', '!!']).keys()]).toEqual([]);
  });
});

describe('the suggestions block of search settings', () => {
  const parse = (value: unknown) => safeParseInput(SuggestionSettingsInput, value);

  it('fills in the defaults and trims the entries', () => {
    const parsed = parse({ deny: [' spam '] });
    expect(parsed.success).toBe(true);
    expect(suggestionSettingsOf(parsed.data!)).toEqual({ deny: ['spam'], min_searches: 2 });
    expect(suggestionSettingsOf({})).toEqual({ deny: [], min_searches: 2 });
  });

  it('takes at most 1000 entries of at most 100 characters', () => {
    expect(parse({ deny: Array.from({ length: 1000 }, (_, i) => `w${i}`.padEnd(100, 'x')) }).success).toBe(true);
    expect(parse({ deny: Array.from({ length: 1001 }, (_, i) => `w${i}`) }).success).toBe(false);
    expect(parse({ deny: ['x'.repeat(101)] }).success).toBe(false);
  });

  it.each([
    [{ deny: [''] }],
    [{ deny: ['!!!'] }],
    [{ deny: [1] }],
    [{ deny: 'x' }],
    [{ min_searches: 0 }],
    [{ min_searches: '2' }],
    [{ other: true }],
  ])('refuses %j', (value) => {
    expect(parse(value).success).toBe(false);
  });
});

describe('the query parameters', () => {
  const parse = (value: Record<string, unknown>) => safeParseInput(SuggestionsQuery, value);

  it('reads limit from text, 5 by default, at most 20', () => {
    expect(parse({ q: 'la' }).data).toEqual({ q: 'la', limit: 5 });
    expect(parse({ q: 'la', limit: '20', index: 'products' }).data).toEqual({ q: 'la', limit: 20, index: 'products' });
    expect(parse({ q: 'la', limit: '21' }).success).toBe(false);
  });

  it.each([[{}], [{ q: '' }], [{ q: 'x'.repeat(201) }], [{ q: ['a', 'b'] }], [{ q: 'a', other: '1' }]])(
    'refuses %j',
    (value) => {
      expect(parse(value).success).toBe(false);
    },
  );
});

describe('configuration', () => {
  it('rebuilds every 300 seconds and allows 600 requests a minute per address unless told otherwise', () => {
    expect(loadConfig({})).toMatchObject({ searchSuggestionsRefreshSeconds: 300, searchSuggestionsPerMinute: 600 });
    expect(loadConfig({ SEARCH_SUGGESTIONS_REFRESH_SECONDS: '60', SEARCH_SUGGESTIONS_PER_MINUTE: '10' })).toMatchObject(
      { searchSuggestionsRefreshSeconds: 60, searchSuggestionsPerMinute: 10 },
    );
    expect(() => loadConfig({ SEARCH_SUGGESTIONS_REFRESH_SECONDS: '0' })).toThrow(/SEARCH_SUGGESTIONS_REFRESH_SECONDS/);
    expect(() => loadConfig({ SEARCH_SUGGESTIONS_PER_MINUTE: 'many' })).toThrow(/SEARCH_SUGGESTIONS_PER_MINUTE/);
  });
});
