/**
 * Synonyms and stop words of several words, matched as phrases: the words in a row. A synonym
 * entry with such a phrase becomes one token that documents containing any of its phrases carry,
 * and that the phrase in a query is replaced by; stop phrases are cut out of queries.
 */
import type { Synonym } from './engine';
import { tokenize } from './text';

interface Phrase {
  words: string[];
  /** What the phrase stands for: a group token, or nothing (a stop phrase). */
  token: string;
}

/** Phrases by their first word, longest first, so the longest match wins. */
export type PhraseIndex = Map<string, Phrase[]>;

function indexOf(phrases: Phrase[]): PhraseIndex {
  const index: PhraseIndex = new Map();
  for (const phrase of phrases) {
    if (phrase.words.length === 0) continue;
    const list = index.get(phrase.words[0]!) ?? [];
    list.push(phrase);
    index.set(phrase.words[0]!, list);
  }
  for (const list of index.values()) list.sort((a, b) => b.words.length - a.words.length);
  return index;
}

/** A token no text can produce (the tokenizer keeps letters, digits and marks only), nor a prefix of another. */
const groupToken = (entry: number) => `\u0001${entry}\u0001`;

/**
 * For synonym entries with a phrase of several words: what documents are tagged with (every phrase
 * of the entry) and what queries are rewritten by (every phrase of a multi-way entry; only the root
 * of a one-way one). Entries of single words only are left to word synonyms.
 */
export function phraseSynonyms(
  synonyms: Synonym[],
  words: (text: string) => string[] = tokenize,
): { documents: PhraseIndex; queries: PhraseIndex } {
  const documents: Phrase[] = [];
  const queries: Phrase[] = [];
  synonyms.forEach((synonym, entry) => {
    const members = [...(synonym.root !== undefined ? [synonym.root] : []), ...synonym.synonyms].map(words);
    if (!members.some((words) => words.length > 1)) return;
    const token = groupToken(entry);
    for (const words of members) documents.push({ words, token });
    if (synonym.root !== undefined) queries.push({ words: members[0]!, token });
    else for (const words of members) queries.push({ words, token });
  });
  return { documents: indexOf(documents), queries: indexOf(queries) };
}

/** Stop words and stop phrases, as phrases that stand for nothing. */
export const stopPhrases = (stopWords: string[], words: (text: string) => string[] = tokenize): PhraseIndex =>
  indexOf(stopWords.map((stop) => ({ words: words(stop), token: '' })));

function matchAt(words: string[], at: number, index: PhraseIndex): Phrase | undefined {
  return index.get(words[at]!)?.find((phrase) => phrase.words.every((word, i) => words[at + i] === word));
}

/** The group tokens of the phrases a text's words contain. */
export function phraseTokens(words: string[], index: PhraseIndex): string[] {
  if (index.size === 0) return [];
  const tokens = new Set<string>();
  for (let at = 0; at < words.length; at++) {
    for (const phrase of index.get(words[at]!) ?? []) {
      if (phrase.words.every((word, i) => words[at + i] === word)) tokens.add(phrase.token);
    }
  }
  return [...tokens];
}

/** Query words with each phrase (longest first, left to right) replaced by its token, or cut out when it has none. */
export function replacePhrases(words: string[], index: PhraseIndex): string[] {
  if (index.size === 0) return words;
  const out: string[] = [];
  for (let at = 0; at < words.length;) {
    const phrase = matchAt(words, at, index);
    if (!phrase) {
      out.push(words[at]!);
      at += 1;
      continue;
    }
    if (phrase.token !== '') out.push(phrase.token);
    at += phrase.words.length;
  }
  return out;
}
