/**
 * The in-memory index of the embedded engine: an inverted index from words to documents, searched
 * with typo tolerance, prefix matching of the last word, synonyms and stop words, filtered,
 * faceted (facet-counts.ts), ranked bucket by bucket by the index's ranking rules (ranking.ts,
 * word-positions.ts), de-duplicated on the distinct field and highlighted (highlight.ts).
 * Everything here is synchronous, so a batch of changes is applied whole before any search sees it.
 */
import {
  valuesOf,
  type EngineQuery,
  type EngineResult,
  type FieldType,
  type IndexDefinition,
  type IndexedDocument,
} from './engine';
import { slotFilter } from './column-filters';
import { FacetCounter } from './facet-counts';
import { FieldColumns } from './field-columns';
import { IdOrder } from './id-order';
import { passesFilters } from './filter-match';
import { hitOf } from './highlight';
import { EXACT_MARK, TextMatcher } from './matching';
import { phraseSynonyms, phraseTokens, replacePhrases, stopPhrases, type PhraseIndex } from './phrases';
import { grown, intersect, lowerBound, typosWithin, type TermPostings, type WordMatch } from './postings';
import { geoDistances, placePins, rank } from './ranking';
import { TermTrie } from './term-trie';
import { FIELD_END, positionalScores } from './word-positions';

/** Completions of the last (prefix) word that are searched: the most frequent ones. */
export const MAX_PREFIX_EXPANSIONS = 100;

/** Typo buffers kept from search to search: as many as most queries have words. */
const RETAINED_TYPO_BUFFERS = 8;

/**
 * Whether some document word matches the query word exactly (the exactness rule counts only such
 * words). The exact forms come first in a word's matches, so this mostly reads one.
 */
function hasExactMatch(matches: Map<string, WordMatch>): boolean {
  for (const match of matches.values()) if (match.exact) return true;
  return false;
}

/**
 * The words of a field's texts, in order. A loop rather than `flatMap`, which V8 runs far slower,
 * and most fields hold one text: indexing spends much of its time here.
 */
function wordsOfTexts(matcher: TextMatcher, texts: string[], exact: boolean): string[] {
  if (texts.length === 1) return matcher.words(texts[0]!, exact);
  const words: string[] = [];
  for (const text of texts) for (const word of matcher.words(text, exact)) words.push(word);
  return words;
}

export class MemoryIndex {
  /**
   * Documents by slot; a replaced or removed document leaves its slot empty until the next
   * compaction. Slots are only appended and emptied, and `clear` starts a new array: the columns
   * rely on it.
   */
  private documents: (IndexedDocument | undefined)[] = [];
  /** The documents' values by field, for filters, facets and sorting. */
  private readonly columns = new FieldColumns();
  /** The documents' places by id, the ranking's last tie-breaker. */
  private readonly idOrder = new IdOrder();
  private readonly slotOf = new Map<string, number>();
  private readonly termIds = new Map<string, number>();
  /** Terms by id: the words of documents and the group tokens of phrases. */
  private terms: string[] = [];
  /** Slots of the documents holding each term, by term id, ascending. */
  private postings: number[][] = [];
  /** The terms sorted, and as a trie for the typo search; rebuilt by the first search after new terms. */
  private dictionary: { sorted: string[]; trie: TermTrie } | null = null;
  /**
   * Every document's search fields as term ids, slot after slot and field after field, each field
   * closed by FIELD_END; a slot's run starts at `wordStart[slot]` and ends where the next one's starts.
   */
  private words = new Uint32Array(1 << 16);
  private wordStart = new Uint32Array(1 << 12);
  private dead = 0;
  /**
   * Buffers reused by searches. Per query word, the fewest typos each slot needs (-1: not there),
   * and per term, its row in the query's term matches (-1: none); every search puts back the -1s it
   * changed, so a search of up to RETAINED_TYPO_BUFFERS words neither allocates nor clears a buffer
   * the size of the index.
   */
  private typoScratch: Int8Array[] = [];
  private termScratch = new Int32Array(0);
  private readonly synonymsOf = new Map<string, Set<string>>();
  private readonly stopPhrases: PhraseIndex;
  private readonly phrases: { documents: PhraseIndex; queries: PhraseIndex };
  private readonly types: Map<string, FieldType | null>;
  private readonly matcher: TextMatcher;
  /** Each search field, and whether it is matched word for word. */
  private readonly exactField: boolean[];

  constructor(readonly definition: IndexDefinition) {
    this.matcher = new TextMatcher(definition.matching);
    this.exactField = definition.searchFields.map((field) => this.matcher.exactFields.has(field));
    // Phrases are matched on the words as typed: the query's words are stemmed only when looked up.
    const words = (text: string) => this.matcher.words(text, true);
    this.stopPhrases = stopPhrases(definition.stopWords, words);
    this.phrases = phraseSynonyms(definition.synonyms, words);
    this.types = new Map(definition.fields.map((field) => [field.name, field.type]));
    const link = (from: string, to: string) => {
      const [a, ...moreOfA] = this.matcher.words(from);
      const [b, ...moreOfB] = this.matcher.words(to);
      // Phrases of several words are matched as group tokens (see phrases.ts).
      if (!a || !b || a === b || moreOfA.length > 0 || moreOfB.length > 0) return;
      if (!this.synonymsOf.has(a)) this.synonymsOf.set(a, new Set());
      this.synonymsOf.get(a)!.add(b);
    };
    for (const synonym of definition.synonyms) {
      if (synonym.root !== undefined) for (const word of synonym.synonyms) link(synonym.root, word);
      else for (const a of synonym.synonyms) for (const b of synonym.synonyms) link(a, b);
    }
  }

  get size() {
    return this.slotOf.size;
  }

  /** The id of a term, added to the dictionary when new. */
  private termId(term: string): number {
    let id = this.termIds.get(term);
    if (id === undefined) {
      id = this.terms.length;
      this.termIds.set(term, id);
      this.terms.push(term);
      this.postings.push([]);
      this.dictionary = null;
    }
    return id;
  }

  /** Lists `slot` under a term once, however often the document holds it (postings grow in slot order). */
  private post(id: number, slot: number) {
    const list = this.postings[id]!;
    if (list.length === 0 || list[list.length - 1] !== slot) list.push(slot);
  }

  /** Inserts or replaces documents by id. */
  upsert(documents: IndexedDocument[]) {
    for (const document of documents) {
      const previous = this.slotOf.get(document.id);
      if (previous !== undefined) {
        this.documents[previous] = undefined;
        this.dead += 1;
      }
      const slot = this.documents.length;
      this.documents.push(document);
      this.slotOf.set(document.id, slot);
      let at = this.wordStart[slot]!;
      const { matcher } = this;
      const stemmed = matcher.settings.language !== null;
      this.definition.searchFields.forEach((field, f) => {
        const exact = this.exactField[f]!;
        const texts = valuesOf(document.values[field]).map(String);
        const fieldWords = wordsOfTexts(matcher, texts, exact);
        this.words = grown(this.words, at + fieldWords.length + 1);
        for (const word of fieldWords) {
          const id = this.termId(exact ? EXACT_MARK + word : word);
          this.words[at++] = id;
          this.post(id, slot);
        }
        this.words[at++] = FIELD_END;
        const typed = stemmed && !exact ? wordsOfTexts(matcher, texts, true) : fieldWords;
        for (const token of phraseTokens(typed, this.phrases.documents)) this.post(this.termId(token), slot);
        // The words as written, beside their stems, for typos: `mechanicl` is a typo of `mechanical`, not of `mechan`.
        if (typed !== fieldWords)
          typed.forEach((word, i) => {
            if (word !== fieldWords[i]) this.post(this.termId(word), slot);
          });
        for (const text of texts)
          for (const joined of matcher.joinedWords(text))
            this.post(this.termId(exact ? EXACT_MARK + joined : joined), slot);
      });
      this.wordStart = grown(this.wordStart, slot + 2);
      this.wordStart[slot + 1] = at;
    }
    // Replaced documents leave dead slots in the postings; rebuild once they outnumber the live ones.
    if (this.dead > 1000 && this.dead > this.slotOf.size) this.compact();
  }

  /** Removes documents by id; ids not in the index are ignored. */
  remove(ids: string[]) {
    for (const id of ids) {
      const slot = this.slotOf.get(id);
      if (slot === undefined) continue;
      this.documents[slot] = undefined;
      this.slotOf.delete(id);
      this.dead += 1;
    }
    if (this.dead > 1000 && this.dead > this.slotOf.size) this.compact();
  }

  clear() {
    this.documents = [];
    this.slotOf.clear();
    this.termIds.clear();
    this.terms = [];
    this.postings = [];
    this.dictionary = null;
    this.words = new Uint32Array(1 << 16);
    this.wordStart = new Uint32Array(1 << 12);
    this.typoScratch = [];
    this.termScratch = new Int32Array(0);
    this.dead = 0;
  }

  private compact() {
    const live = this.documents.filter((document): document is IndexedDocument => document !== undefined);
    this.clear();
    this.upsert(live);
  }

  /** Document words that match a query word, with their typo count. */
  private matchesOf(typed: string, prefix: boolean): Map<string, WordMatch> {
    const matches = new Map<string, WordMatch>();
    // A phrase's group token is looked up as it is.
    const forms = typed.startsWith('\u0001') ? [typed] : this.matcher.queryForms(typed);
    const word = forms[0]!;
    for (const form of forms) if (this.termIds.has(form)) matches.set(form, { typos: 0, exact: true });
    if (this.exactField.includes(true) && this.termIds.has(EXACT_MARK + typed))
      matches.set(EXACT_MARK + typed, { typos: 0, exact: true });
    for (const form of forms) {
      for (const synonym of this.synonymsOf.get(form) ?? []) {
        if (this.termIds.has(synonym) && !matches.has(synonym)) matches.set(synonym, { typos: 0, exact: false });
      }
    }
    // The budget is the typed word's: a stem is shorter than the word it stands for.
    const budget = this.matcher.typoBudget(typed);
    if (!this.dictionary) {
      // Terms of exact fields sort first (their mark is below every character a word has) and are left out.
      const sorted = [...this.terms].sort();
      const from = lowerBound(sorted, String.fromCharCode(EXACT_MARK.charCodeAt(0) + 1));
      const searched = from === 0 ? sorted : sorted.slice(from);
      this.dictionary = { sorted: searched, trie: new TermTrie(searched) };
    }
    const terms = this.dictionary.sorted;
    if (budget > 0) {
      // A stemmed index holds the words as written too, so a typo in a word is measured against them.
      for (const start of word === typed ? [word] : [word, typed]) {
        for (const [term, typos] of this.dictionary.trie.within(start, budget)) {
          const known = matches.get(term);
          if (!known || (!known.exact && typos < known.typos)) matches.set(term, { typos, exact: false });
        }
      }
    }
    if (prefix) {
      // A stemmed index completes the word as typed too: a stem may be shorter than what was typed so far.
      const completions: string[] = [];
      for (const start of word === typed ? [word] : [word, typed]) {
        for (let i = lowerBound(terms, start); i < terms.length && terms[i]!.startsWith(start); i++)
          if (terms[i] !== start && !matches.has(terms[i]!)) completions.push(terms[i]!);
      }
      if (completions.length > MAX_PREFIX_EXPANSIONS) {
        const frequency = (term: string) => this.postings[this.termIds.get(term)!]!.length;
        completions.sort((a, b) => frequency(b) - frequency(a));
        completions.length = MAX_PREFIX_EXPANSIONS;
      }
      for (const term of completions) if (!matches.has(term)) matches.set(term, { typos: 0, exact: false });
    }
    return matches;
  }

  /**
   * One buffer of typos per query word, each as long as there are slots and all -1. The first
   * RETAINED_TYPO_BUFFERS are kept for the next search; a longer query's others are its own.
   */
  private typoBuffers(count: number): Int8Array[] {
    const slots = this.documents.length;
    if (this.typoScratch.length > 0 && this.typoScratch[0]!.length < slots) this.typoScratch = [];
    const capacity = Math.max(slots + (slots >> 2), 1024);
    while (this.typoScratch.length < Math.min(count, RETAINED_TYPO_BUFFERS))
      this.typoScratch.push(new Int8Array(capacity).fill(-1));
    const buffers = this.typoScratch.slice(0, count);
    while (buffers.length < count) buffers.push(new Int8Array(capacity).fill(-1));
    return buffers;
  }

  /** The postings of the terms a query word matches, with their typo counts. */
  private postingsOf(matches: Map<string, WordMatch>): TermPostings[] {
    const terms: TermPostings[] = [];
    for (const [term, match] of matches)
      terms.push({ slots: this.postings[this.termIds.get(term)!]!, typos: match.typos });
    return terms;
  }

  private queryWords(q: string): string[] {
    const words = this.matcher.words(q, true);
    const kept = replacePhrases(words, this.stopPhrases);
    // A query of stop words only is searched as typed.
    return replacePhrases(kept.length > 0 ? kept : words, this.phrases.queries);
  }

  search(query: EngineQuery): EngineResult {
    const words = this.queryWords(query.q);
    const prefixLast = words.length > 0 && !/[\s\p{P}]$/u.test(query.q);
    const matches = words.map((word, i) => this.matchesOf(word, prefixLast && i === words.length - 1));
    const typos = this.typoBuffers(words.length);
    let candidates: number[] = [];
    try {
      if (words.length === 0) {
        for (let slot = 0; slot < this.documents.length; slot++) if (this.documents[slot]) candidates.push(slot);
        return this.resultOf(query, words, matches, typos, candidates);
      }
      // Documents with every query word; while they are fewer than the threshold, the last words are dropped.
      const postings = matches.map((wordMatches) => this.postingsOf(wordMatches));
      // Dead slots only exist after documents were replaced or removed.
      const live = this.dead > 0 ? this.documents : undefined;
      let k = words.length;
      let level = intersect(postings, k, typos[0]!, live);
      while (k > 1 && level.slots.length < query.threshold) level = intersect(postings, --k, typos[0]!, live);
      candidates = level.slots;
      // The ranking rules count every query word, the dropped ones too; they read typos by slot.
      for (let i = 0; i < words.length; i++) {
        const of = level.typos[i] ?? typosWithin(candidates, postings[i]!);
        const buffer = typos[i]!;
        for (let c = 0; c < candidates.length; c++) buffer[candidates[c]!] = of[c]!;
      }
      return this.resultOf(query, words, matches, typos, candidates);
    } finally {
      for (const buffer of typos) for (const slot of candidates) buffer[slot] = -1;
    }
  }

  private resultOf(
    query: EngineQuery,
    words: string[],
    matches: Map<string, WordMatch>[],
    typos: Int8Array[],
    candidates: number[],
  ): EngineResult {
    const hidden = new Set(query.hide ?? []);
    const visible = hidden.size === 0 ? candidates : candidates.filter((slot) => !hidden.has(this.documents[slot]!.id));
    const filtered =
      query.filters.length === 0 ? visible : visible.filter(slotFilter(query.filters, this.documents, this.columns));

    const { facets, facetsStats, facetHits, facetRanges } = new FacetCounter(
      this.documents,
      this.types,
      this.matcher,
      this.columns,
    ).count(visible, filtered, query);
    const pins = this.pinned(query, hidden);
    const needed = query.offset + query.limit + pins.length;
    const ranked = rank(
      {
        definition: this.definition,
        documents: this.documents,
        slots: filtered,
        words,
        typos,
        exactWords: matches.map(hasExactMatch),
        positional: (of) => this.positionalScores(of, matches),
        idRanks: this.idOrder.of(this.documents),
        columns: this.columns,
      },
      query.sort,
      needed,
      query,
    );
    const order = pins.length === 0 ? ranked.slots : placePins(ranked.slots, pins);
    const page = order.slice(query.offset, query.offset + query.limit);
    const matched = pins.length === 0 ? new Set<number>() : new Set(filtered);
    const { searchFields } = this.definition;
    // Hits say how far they are from the point of the first sort by distance.
    const byDistance = query.sort.find((key) => key.from !== undefined);
    const distances = byDistance && geoDistances(this.documents, page, byDistance.field, byDistance.from!);
    return {
      count: ranked.count + pins.filter((pin) => !matched.has(pin.slot)).length,
      hits: page.map((slot, i) => {
        const hit = hitOf(this.documents[slot]!, searchFields, this.exactField, this.matcher, words, matches);
        if (distances) hit.geoDistanceMeters = distances[i] === undefined ? null : Math.round(distances[i]);
        return hit;
      }),
      facets,
      facetsStats,
      ...(facetHits ? { facetHits } : {}),
      ...(facetRanges ? { facetRanges } : {}),
    };
  }

  /** The pinned documents that exist, are not hidden and pass the filters, by position. */
  private pinned(query: EngineQuery, hidden: Set<string>) {
    const pins: { slot: number; position: number }[] = [];
    for (const pin of query.pin ?? []) {
      const slot = this.slotOf.get(pin.id);
      if (slot === undefined || hidden.has(pin.id)) continue;
      if (!passesFilters(this.documents[slot]!.values, query.filters)) continue;
      pins.push({ slot, position: pin.position });
    }
    return pins.sort((a, b) => a.position - b.position);
  }

  /** Proximity, attribute and exactness of each of `slots` (see word-positions.ts). */
  private positionalScores(slots: number[], matches: Map<string, WordMatch>[]) {
    if (this.termScratch.length < this.terms.length)
      this.termScratch = new Int32Array(this.terms.length + (this.terms.length >> 2)).fill(-1);
    const layout = {
      words: this.words,
      wordStart: this.wordStart,
      fieldCount: this.definition.searchFields.length,
      termIds: this.termIds,
      rowOf: this.termScratch,
    };
    return positionalScores(layout, slots, matches);
  }
}
