import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { TermTrie } from '../../src/modules/search/engine/term-trie';
import {
  escapeHtml,
  facetValueMatches,
  tokenize,
  tokenizeWithOffsets,
  typoBudget,
} from '../../src/modules/search/engine/text';

/** Optimal string alignment distance, the plain way. */
function referenceDistance(a: string, b: string): number {
  const d = Array.from({ length: a.length + 1 }, (_, i) =>
    Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)),
  );
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      d[i]![j] = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        d[i]![j] = Math.min(d[i]![j]!, d[i - 2]![j - 2]! + 1);
    }
  }
  return d[a.length]![b.length]!;
}

describe('typoBudget', () => {
  it('is 0 up to 4 letters, 1 up to 8, 2 beyond', () => {
    expect(['a', 'lamp', 'chair', 'keyboard', 'headphone', 'headphones'].map(typoBudget)).toEqual([0, 0, 1, 1, 2, 2]);
  });
  it('counts letters, not UTF-16 units', () => {
    expect(typoBudget('𝒶𝒷𝒸𝒹')).toBe(0);
  });
});

describe('TermTrie', () => {
  const within = (terms: string[], word: string, max: number) => new TermTrie([...terms].sort()).within(word, max);

  it('counts insertions, deletions, substitutions and transpositions as one each', () => {
    expect(within(['chairs', 'char', 'chaer', 'chiar', 'chair', 'lamp', 'cheers'], 'chair', 1)).toEqual([
      ['chaer', 1],
      ['chair', 0],
      ['chairs', 1],
      ['char', 1],
      ['chiar', 1],
    ]);
  });

  it('finds exactly the terms within the distance of the plain algorithm, for any vocabulary', () => {
    const word = fc.string({ unit: fc.constantFrom('a', 'b', 'c', 'd'), maxLength: 8 });
    fc.assert(
      fc.property(
        fc.uniqueArray(word, { maxLength: 40 }),
        word,
        fc.integer({ min: 0, max: 3 }),
        (terms, query, max) => {
          const expected = terms
            .map((term) => [term, referenceDistance(query, term)] as [string, number])
            .filter(([, distance]) => distance <= max)
            .sort((a, b) => (a[0] < b[0] ? -1 : 1));
          expect(within(terms, query, max)).toEqual(expected);
        },
      ),
    );
  });
});

describe('tokenize', () => {
  it('splits on anything but letters and digits, lowercases and drops diacritics', () => {
    expect(tokenize('Café-Crème 2x, über!')).toEqual(['cafe', 'creme', '2x', 'uber']);
    expect(tokenize('  ')).toEqual([]);
  });
  it("keeps each word's place in the text", () => {
    expect(tokenizeWithOffsets('Big lamp')).toEqual([
      { word: 'big', start: 0, end: 3 },
      { word: 'lamp', start: 4, end: 8 },
    ]);
  });
});

it('escapeHtml escapes the five HTML specials', () => {
  expect(escapeHtml(`<a href="x">'&'</a>`)).toBe('&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;');
});

describe('facetValueMatches', () => {
  it('matches every query word, the last also as a prefix, with the typo budget of its length', () => {
    expect(facetValueMatches('Samsung Electronics', 'sams')).toBe(true);
    expect(facetValueMatches('Samsung Electronics', 'electronics sam')).toBe(true);
    expect(facetValueMatches('Samsung Electronics', 'samsnug')).toBe(true);
    expect(facetValueMatches('Samsung Electronics', 'lg')).toBe(false);
    expect(facetValueMatches('Café Noir', 'cafe')).toBe(true);
    // Four letters or fewer: no typo.
    expect(facetValueMatches('Lumo', 'lumi')).toBe(false);
    expect(facetValueMatches('Lumo', '')).toBe(true);
  });
});
