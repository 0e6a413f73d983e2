import { describe, expect, it } from 'vitest';
import type { EngineQuery, IndexedDocument } from '../../src/modules/search/engine/engine';
import { DEFAULT_MATCHING, TextMatcher, type MatchingSettings } from '../../src/modules/search/engine/matching';
import { MemoryIndex } from '../../src/modules/search/engine/memory-index';
import { indexDefinition } from '../helpers/search-definitions';

const indexOf = (matching: Partial<MatchingSettings>, documents: Record<string, string>[]) => {
  const definition = indexDefinition({
    fields: [
      { name: 'title', type: 'STRING' },
      { name: 'sku', type: 'STRING' },
      { name: 'gtin', type: 'STRING' },
    ],
    searchFields: ['title', 'sku', 'gtin'],
    matching: { ...DEFAULT_MATCHING, ...matching },
  });
  const index = new MemoryIndex(definition);
  index.upsert(documents.map(({ id, ...values }): IndexedDocument => ({ id: id!, values, metadata: null })));
  return index;
};

const query = (q: string): EngineQuery => ({
  q,
  filters: [],
  facets: [],
  limit: 10,
  offset: 0,
  threshold: 0,
  sort: [],
  disjunctiveFacets: false,
});

const ids = (index: MemoryIndex, q: string) => index.search(query(q)).hits.map((hit) => hit.document.id);

describe('matching settings of the embedded engine', () => {
  const catalog = [
    { id: 'book', title: 'Travel guide', gtin: '9789525557992', sku: 'TG-100' },
    { id: 'other-book', title: 'Atlas', gtin: '9789525157992', sku: 'AT-200' },
    { id: 'lamp', title: 'Desk lamp', sku: 'AB-1234', gtin: '' },
  ];

  it('matches a word of digits without typos by default, and with them when the index allows it', () => {
    expect(ids(indexOf({}, catalog), '9789525557992')).toEqual(['book']);
    expect(ids(indexOf({ typosOnDigitWords: true }, catalog), '9789525557992').sort()).toEqual(['book', 'other-book']);
  });

  it('matches exact fields without typos and without completing the last word', () => {
    const index = indexOf({ exactFields: ['sku'], typosOnDigitWords: true }, catalog);
    expect(ids(index, 'TG-100')).toEqual(['book']);
    expect(ids(index, 'TG-10')).toEqual([]);
    expect(ids(indexOf({ typosOnDigitWords: true }, catalog), 'TG-10')).toEqual(['book']);
  });

  it('applies the minimum word lengths for one and two typos', () => {
    expect(ids(indexOf({}, catalog), 'trevel ')).toEqual(['book']);
    expect(ids(indexOf({ minWordLengthOneTypo: 7 }, catalog), 'trevel ')).toEqual([]);
    expect(ids(indexOf({ minWordLengthTwoTypos: 6 }, catalog), 'trevl ')).toEqual([]);
    expect(ids(indexOf({ minWordLengthOneTypo: 4, minWordLengthTwoTypos: 5 }, catalog), 'travle gide ')).toEqual([
      'book',
    ]);
  });

  it('finds a code written with a token separator as typed with it, without it, and with a space', () => {
    const index = indexOf({ tokenSeparators: ['-'], exactFields: ['sku'] }, catalog);
    for (const q of ['AB-1234', 'AB1234', 'ab 1234', 'ab1234 ']) expect(ids(index, q)).toEqual(['lamp']);
    expect(ids(indexOf({ exactFields: ['sku'] }, catalog), 'AB1234')).toEqual([]);
  });

  it('keeps symbols to index as part of words', () => {
    const documents = [
      { id: 'cpp', title: 'Learning C++' },
      { id: 'c', title: 'Learning C' },
    ];
    expect(ids(indexOf({}, documents), 'c++ ').sort()).toEqual(['c', 'cpp']);
    expect(ids(indexOf({ symbolsToIndex: ['+'] }, documents), 'c++ ')).toEqual(['cpp']);
  });

  it('matches stems in the index language and highlights the words as written', () => {
    const cases: [MatchingSettings['language'], string, string, string][] = [
      ['en', 'Summer dresses', 'dress', 'dresses'],
      ['nl', 'Elektrische fietsen', 'fiets', 'fietsen'],
      ['nl', 'Elektrische fiets', 'fietsen', 'fiets'],
      ['de', 'Kleider für den Sommer', 'Kleid', 'Kleider'],
      ['fr', 'Chaussures de sport', 'chaussure', 'Chaussures'],
      ['es', 'Zapatos de cuero', 'zapato', 'Zapatos'],
    ];
    for (const [language, title, q, marked] of cases) {
      const [hit] = indexOf({ language }, [{ id: 'hit', title }]).search(query(`${q} `)).hits;
      expect(hit?.document.id, `${language}: ${q}`).toBe('hit');
      expect((hit!.highlight.title as { value: string }).value).toContain(`<mark>${marked}</mark>`);
    }
    expect(ids(indexOf({}, [{ id: 'hit', title: 'Kleider' }]), 'Kleid ')).toEqual([]);
    expect(ids(indexOf({}, [{ id: 'hit', title: 'fietsen' }]), 'fiets ')).toEqual([]);
  });

  it("measures typos against the words as written in a stemmed index, with the typed word's budget", () => {
    const index = indexOf({ language: 'en' }, [
      { id: 'keyboard', title: 'Mechanical keyboard' },
      { id: 'chair', title: 'Office chair' },
    ]);
    expect(ids(index, 'mechanicl ')).toEqual(['keyboard']);
    expect(ids(index, 'ofice ')).toEqual(['chair']);
    const [hit] = index.search(query('mechanicl ')).hits;
    expect((hit!.highlight.title as { value: string }).value).toBe('<mark>Mechanical</mark> keyboard');
  });

  it('reads words as the word pattern does, character by character for ASCII texts', () => {
    // `wordsAt` always reads with the pattern; `words` reads ASCII texts without it.
    const texts = [
      'Plain ASCII words, UPPER and lower: AB-1234 c++ c# 3.5 x_y',
      'Café Straße İstanbul ﬁne 日本 Ⅻ² 😀 mixed with ASCII',
      '\u0000nul\u0000 tab\there new\nline ^caret] back\\slash',
      '',
      '   ',
      'ends-with-word',
      'fietsen Running chairs',
      'word '.repeat(50_000),
    ];
    const settings: Partial<MatchingSettings>[] = [
      {},
      { symbolsToIndex: ['+', '#', '\\', ']', '^', '-', '\u0000'] },
      { symbolsToIndex: ['_.', 'é'], language: 'en' },
      { language: 'nl' },
    ];
    for (const matching of settings) {
      const matcher = new TextMatcher({ ...DEFAULT_MATCHING, ...matching });
      for (const text of texts)
        for (const exact of [false, true])
          expect(matcher.words(text, exact)).toEqual(matcher.wordsAt(text, exact).map((word) => word.word));
    }
    const symbols = new TextMatcher({ ...DEFAULT_MATCHING, symbolsToIndex: ['+', '#'] });
    expect(symbols.words('C++ and C# code')).toEqual(['c++', 'and', 'c#', 'code']);
  });

  it('tokenizes with the default rules when nothing is set', () => {
    const matcher = new TextMatcher();
    expect(matcher.words('Café AB-1234 c++')).toEqual(['cafe', 'ab', '1234', 'c']);
    expect(matcher.typoBudget('lamp')).toBe(0);
    expect(matcher.typoBudget('lamps')).toBe(1);
    expect(matcher.typoBudget('headphones')).toBe(2);
    expect(matcher.typoBudget('123456789')).toBe(0);
  });
});
