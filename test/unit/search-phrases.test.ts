import { describe, expect, it } from 'vitest';
import { phraseSynonyms, phraseTokens, replacePhrases, stopPhrases } from '../../src/modules/search/engine/phrases';

describe('phrase synonyms', () => {
  const { documents, queries } = phraseSynonyms([
    { synonyms: ['sofa', 'couch'] },
    { synonyms: ['t shirt', 'tee', 'tee shirt'] },
    { root: 'tv', synonyms: ['flat screen', 'television'] },
  ]);

  it('leaves entries of single words to word synonyms', () => {
    expect(phraseTokens(['sofa'], documents)).toEqual([]);
    expect(replacePhrases(['couch'], queries)).toEqual(['couch']);
  });

  it('tags a text with the group of every phrase it holds in a row', () => {
    const [tee] = phraseTokens(['a', 'tee'], documents);
    expect(tee).toBeDefined();
    expect(phraseTokens(['red', 't', 'shirt'], documents)).toEqual([tee]);
    expect(phraseTokens(['t', 'red', 'shirt'], documents)).toEqual([]);
    expect(phraseTokens(['big', 'flat', 'screen'], documents)).toHaveLength(1);
  });

  it('rewrites a query phrase to its group: any phrase of a multi-way entry, only the root of a one-way one', () => {
    const [tee] = phraseTokens(['tee'], documents);
    const [tv] = phraseTokens(['tv'], documents);
    expect(replacePhrases(['red', 't', 'shirt'], queries)).toEqual(['red', tee]);
    expect(replacePhrases(['tee', 'shirt', 'xl'], queries)).toEqual([tee, 'xl']);
    expect(replacePhrases(['tv', 'stand'], queries)).toEqual([tv, 'stand']);
    expect(replacePhrases(['flat', 'screen'], queries)).toEqual(['flat', 'screen']);
  });
});

describe('stop phrases', () => {
  it('cut stop words and phrases (the words in a row) out of a query', () => {
    const stop = stopPhrases(['the', 'how to']);
    expect(replacePhrases(['how', 'to', 'clean', 'the', 'sofa'], stop)).toEqual(['clean', 'sofa']);
    expect(replacePhrases(['to', 'how', 'clean'], stop)).toEqual(['to', 'how', 'clean']);
  });
});
