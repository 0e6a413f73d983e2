/**
 * The in-memory index of the embedded engine: an inverted index from words to documents, searched
 * with typo tolerance, prefix matching of the last word, synonyms and stop words, filtered,
 * faceted, ranked bucket by bucket by the index's ranking rules, de-duplicated on the distinct
 * field and highlighted. Everything here is synchronous, so a batch of changes is applied whole
 * before any search sees it.
 */
import type {
  EngineHit,
  EngineQuery,
  FacetHit,
  EngineResult,
  FacetStats,
  FieldType,
  FieldValue,
  HighlightResult,
  IndexDefinition,
  IndexedDocument,
  Scalar,
  SortKey,
} from './engine';
import { countRanges } from './facet-ranges';
import { boostKeys } from './boost';
import { filtersWithout, passesFilters } from './filter-match';
import { phraseSynonyms, phraseTokens, replacePhrases, stopPhrases, type PhraseIndex } from './phrases';
import { TermTrie } from './term-trie';
import { EXACT_MARK, TextMatcher } from './matching';
import { escapeHtml, facetValueMatches } from './text';

/** Completions of the last (prefix) word that are searched: the most frequent ones. */
export const MAX_PREFIX_EXPANSIONS = 100;
/** Values listed per facet, most frequent first. */
export const MAX_FACET_VALUES = 100;
/** Proximity of two query words that are far apart or in different fields. */
const MAX_PROXIMITY = 8;
const HIGHLIGHT_PRE = '<mark>';
const HIGHLIGHT_POST = '</mark>';

/** Typo buffers kept from search to search: as many as most queries have words. */
const RETAINED_TYPO_BUFFERS = 8;
/** Closes each search field in a document's term ids (no term has this id). */
const FIELD_END = 0xffffffff;

/** How a document word matches one query word. */
interface WordMatch {
  typos: number;
  /** The word itself, not a typo, prefix completion or synonym. */
  exact: boolean;
}

/** The ascending slots of the documents holding a term, and the typos the term counts for. */
interface TermPostings {
  slots: number[];
  typos: number;
}

/** Proximity, attribute and exactness of each ranked document, by its place in the ranked list. */
interface PositionalScores {
  proximity: Int32Array;
  attribute: Int32Array;
  exactness: Int32Array;
}

const valuesOf = (value: FieldValue | undefined): Scalar[] =>
  value === null || value === undefined ? [] : Array.isArray(value) ? value : [value];

/** A typed array twice as long (at least `needed`), with the contents of `array`. */
function grown<T extends Uint32Array | Int32Array>(array: T, needed: number): T {
  if (needed <= array.length) return array;
  const next = new (array.constructor as new (length: number) => T)(Math.max(needed, array.length * 2));
  next.set(array);
  return next;
}

export class MemoryIndex {
  /** Documents by slot; a replaced or removed document leaves its slot empty until the next compaction. */
  private documents: (IndexedDocument | undefined)[] = [];
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
        const fieldWords = texts.flatMap((text) => matcher.words(text, exact));
        this.words = grown(this.words, at + fieldWords.length + 1);
        for (const word of fieldWords) {
          const id = this.termId(exact ? EXACT_MARK + word : word);
          this.words[at++] = id;
          this.post(id, slot);
        }
        this.words[at++] = FIELD_END;
        const typed = stemmed && !exact ? texts.flatMap((text) => matcher.words(text, true)) : fieldWords;
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

  /** The live documents holding any of a word's terms, ascending, with the fewest typos each needs. */
  private documentsOf(terms: TermPostings[], scratch: Int8Array): { slots: number[]; typos: Int8Array } {
    if (terms.length === 1 && this.dead === 0) {
      const [only] = terms;
      return { slots: only!.slots.slice(), typos: new Int8Array(only!.slots.length).fill(only!.typos) };
    }
    // Dead slots only exist after documents were replaced or removed.
    const documents = this.dead > 0 ? this.documents : undefined;
    const found: number[] = [];
    for (const { slots, typos: cost } of terms) {
      for (const slot of slots) {
        if (documents !== undefined && documents[slot] === undefined) continue;
        const known = scratch[slot]!;
        if (known === -1) {
          found.push(slot);
          scratch[slot] = cost;
        } else if (cost < known) scratch[slot] = cost;
      }
    }
    const sorted = terms.length === 1 ? found : Array.from(Int32Array.from(found).sort());
    const typos = new Int8Array(sorted.length);
    for (let i = 0; i < sorted.length; i++) {
      typos[i] = scratch[sorted[i]!]!;
      scratch[sorted[i]!] = -1;
    }
    return { slots: sorted, typos };
  }

  /**
   * Documents holding the first `count` query words, and per query word the typos each of them
   * needs for it. The rarest word's documents are narrowed down by the others', most selective
   * first, each looked up in the ascending postings by galloping: the work follows the number of
   * candidates, not the length of a frequent word's postings.
   */
  private intersect(words: TermPostings[][], count: number, scratch: Int8Array) {
    const size = (terms: TermPostings[]) => terms.reduce((sum, term) => sum + term.slots.length, 0);
    const order = Array.from({ length: count }, (_, i) => i).sort((a, b) => size(words[a]!) - size(words[b]!));
    const start = this.documentsOf(words[order[0]!]!, scratch);
    let slots = start.slots;
    const typos: (Int8Array | undefined)[] = new Array<Int8Array | undefined>(words.length);
    typos[order[0]!] = start.typos;
    for (const word of order.slice(1)) {
      const found = typosWithin(slots, words[word]!);
      typos[word] = found;
      let kept = 0;
      for (let i = 0; i < slots.length; i++) if (found[i]! >= 0) kept += 1;
      if (kept === slots.length) continue;
      const narrowed = new Array<number>(kept);
      const narrowedTypos = typos.map((of) => of && new Int8Array(kept));
      for (let i = 0, at = 0; i < slots.length; i++) {
        if (found[i]! < 0) continue;
        narrowed[at] = slots[i]!;
        for (let w = 0; w < typos.length; w++) if (typos[w]) narrowedTypos[w]![at] = typos[w]![i]!;
        at += 1;
      }
      slots = narrowed;
      typos.splice(0, typos.length, ...narrowedTypos);
    }
    return { slots, typos };
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
      let k = words.length;
      let level = this.intersect(postings, k, typos[0]!);
      while (k > 1 && level.slots.length < query.threshold) level = this.intersect(postings, --k, typos[0]!);
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
      query.filters.length === 0
        ? visible
        : visible.filter((slot) => passesFilters(this.documents[slot]!.values, query.filters));

    const { facets, facetsStats } = query.disjunctiveFacets
      ? this.disjunctiveFacetsOf(visible, filtered, query)
      : this.facetsOf(filtered, query.facets);
    const facetHits = query.facetQuery && this.facetHitsOf(visible, filtered, query, query.facetQuery);
    const facetRanges = query.facetRanges && this.facetRangesOf(visible, filtered, query, query.facetRanges);
    const pins = this.pinned(query, hidden);
    const needed = query.offset + query.limit + pins.length;
    const ranked = this.rank(filtered, words, matches, typos, query.sort, needed, query);
    const order = pins.length === 0 ? ranked.slots : placePins(ranked.slots, pins);
    const page = order.slice(query.offset, query.offset + query.limit);
    const matched = pins.length === 0 ? new Set<number>() : new Set(filtered);
    return {
      count: ranked.count + pins.filter((pin) => !matched.has(pin.slot)).length,
      hits: page.map((slot) => this.hitOf(this.documents[slot]!, words, matches)),
      facets,
      facetsStats,
      ...(facetHits ? { facetHits } : {}),
      ...(facetRanges ? { facetRanges } : {}),
    };
  }

  /** Each field's ranges counted over the matches (without the field's own filters when disjunctive). */
  private facetRangesOf(
    candidates: number[],
    filtered: number[],
    query: EngineQuery,
    ranges: NonNullable<EngineQuery['facetRanges']>,
  ) {
    const counted: NonNullable<EngineResult['facetRanges']> = {};
    for (const [field, fieldRanges] of Object.entries(ranges)) {
      const others = query.disjunctiveFacets ? filtersWithout(query.filters, field) : query.filters;
      const slots =
        others.length === query.filters.length
          ? filtered
          : candidates.filter((slot) => passesFilters(this.documents[slot]!.values, others));
      counted[field] = countRanges(
        slots.map((slot) => this.documents[slot]!.values[field]),
        fieldRanges,
      );
    }
    return counted;
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

  /** Values of a facet that match the facet query, counted over the matches (disjunctively when asked). */
  private facetHitsOf(
    candidates: number[],
    filtered: number[],
    query: EngineQuery,
    facetQuery: { field: string; q: string },
  ): FacetHit[] {
    const others = query.disjunctiveFacets ? filtersWithout(query.filters, facetQuery.field) : query.filters;
    const slots =
      others.length === query.filters.length
        ? filtered
        : candidates.filter((slot) => passesFilters(this.documents[slot]!.values, others));
    const counts = new Map<string, number>();
    for (const slot of slots) {
      for (const value of new Set(valuesOf(this.documents[slot]!.values[facetQuery.field]).map(String)))
        counts.set(value, (counts.get(value) ?? 0) + 1);
    }
    return [...counts]
      .filter(([value]) => facetValueMatches(value, facetQuery.q, this.matcher))
      .map(([value, count]) => ({ value, count }))
      .sort((a, b) => b.count - a.count || (a.value < b.value ? -1 : a.value > b.value ? 1 : 0))
      .slice(0, MAX_FACET_VALUES);
  }

  /** Each facet counted over the matches of every filter but those about its own field alone. */
  private disjunctiveFacetsOf(candidates: number[], filtered: number[], query: EngineQuery) {
    const facets: EngineResult['facets'] = {};
    const facetsStats: EngineResult['facetsStats'] = {};
    for (const field of query.facets) {
      const others = filtersWithout(query.filters, field);
      const slots =
        others.length === query.filters.length
          ? filtered
          : candidates.filter((slot) => passesFilters(this.documents[slot]!.values, others));
      const one = this.facetsOf(slots, [field]);
      Object.assign(facets, one.facets);
      Object.assign(facetsStats, one.facetsStats);
    }
    return { facets, facetsStats };
  }

  private facetsOf(slots: number[], fields: string[]) {
    const facets: Record<string, Record<string, number>> = {};
    const facetsStats: Record<string, FacetStats> = {};
    for (const field of fields) {
      const counts = new Map<Scalar, number>();
      let min = Infinity;
      let max = -Infinity;
      let sum = 0;
      let n = 0;
      const count = (value: Scalar) => {
        counts.set(value, (counts.get(value) ?? 0) + 1);
        if (typeof value === 'number') {
          if (value < min) min = value;
          if (value > max) max = value;
          sum += value;
          n += 1;
        }
      };
      for (const slot of slots) {
        const value = this.documents[slot]!.values[field];
        if (value === null || value === undefined) continue;
        if (Array.isArray(value)) new Set(value).forEach(count);
        else count(value);
      }
      facets[field] = Object.fromEntries(topValues(counts));
      if (this.types.get(field) === 'NUMBER' && n > 0) facetsStats[field] = { min, max, avg: sum / n, sum };
    }
    return { facets, facetsStats };
  }

  /**
   * Proximity, attribute and exactness of each document from where its words match the query
   * words, in one pass over each document's term ids with buffers reused from document to document.
   */
  private positionalScores(slots: number[], matches: Map<string, WordMatch>[]): PositionalScores {
    const n = matches.length;
    const fieldCount = this.definition.searchFields.length;
    // For each matching term, which query words it matches: one typed-array lookup per document word.
    if (this.termScratch.length < this.terms.length)
      this.termScratch = new Int32Array(this.terms.length + (this.terms.length >> 2)).fill(-1);
    const rowOf = this.termScratch;
    const byTerm = new Map<number, number[]>();
    matches.forEach((wordMatches, word) => {
      for (const [term, match] of wordMatches) {
        const id = this.termIds.get(term)!;
        let list = byTerm.get(id);
        if (!list) byTerm.set(id, (list = []));
        list.push(match.exact ? -word - 1 : word);
      }
    });
    const from = new Int32Array(byTerm.size + 1);
    const matchWord = new Int32Array([...byTerm.values()].reduce((sum, list) => sum + list.length, 0));
    const matchExact = new Uint8Array(matchWord.length);
    let row = 0;
    let at = 0;
    for (const [id, list] of byTerm) {
      rowOf[id] = row;
      for (const encoded of list) {
        matchWord[at] = encoded < 0 ? -encoded - 1 : encoded;
        matchExact[at++] = encoded < 0 ? 1 : 0;
      }
      from[++row] = at;
    }

    const scores = {
      proximity: new Int32Array(slots.length),
      attribute: new Int32Array(slots.length),
      exactness: new Int32Array(slots.length),
    };
    const bestField = new Int32Array(n);
    const exact = new Uint8Array(n);
    /** Last position of each query word in the field being read, -1 when none yet. */
    const last = new Int32Array(n);
    const closest = new Int32Array(Math.max(0, n - 1));
    const { words, wordStart } = this;
    try {
      for (let s = 0; s < slots.length; s++) {
        const slot = slots[s]!;
        bestField.fill(fieldCount);
        exact.fill(0);
        closest.fill(MAX_PROXIMITY);
        last.fill(-1);
        let field = 0;
        let position = 0;
        for (let w = wordStart[slot]!, end = wordStart[slot + 1]!; w < end; w++) {
          const term = words[w]!;
          if (term === FIELD_END) {
            field += 1;
            position = 0;
            last.fill(-1);
            continue;
          }
          const r = rowOf[term]!;
          if (r >= 0) {
            for (let m = from[r]!, mEnd = from[r + 1]!; m < mEnd; m++) {
              const i = matchWord[m]!;
              if (field < bestField[i]!) bestField[i] = field;
              if (matchExact[m] === 1) exact[i] = 1;
              // In order the distance counts as is, reversed one more.
              if (i > 0 && last[i - 1]! >= 0 && last[i - 1] !== position)
                closest[i - 1] = Math.min(closest[i - 1]!, position - last[i - 1]!);
              if (i + 1 < n && last[i + 1]! >= 0 && last[i + 1] !== position)
                closest[i] = Math.min(closest[i]!, position - last[i + 1]! + 1);
              last[i] = position;
            }
          }
          position += 1;
        }
        let proximity = 0;
        for (let i = 0; i < n - 1; i++) proximity += closest[i]!;
        let attribute = 0;
        let exactness = 0;
        for (let i = 0; i < n; i++) {
          attribute += bestField[i]!;
          exactness += exact[i]!;
        }
        scores.proximity[s] = proximity;
        scores.attribute[s] = attribute;
        scores.exactness[s] = exactness;
      }
    } finally {
      for (const id of byTerm.keys()) rowOf[id] = -1;
    }
    return scores;
  }

  /**
   * Orders documents by the query's sort keys, then the ranking rules, then a rule's boost and bury,
   * each deciding only among documents the previous ones left tied, then by id. Returns the first
   * `needed` (after de-duplication) and the count.
   */
  private rank(
    slots: number[],
    words: string[],
    matches: Map<string, WordMatch>[],
    typos: Int8Array[],
    sort: SortKey[],
    needed: number,
    promoted: Pick<EngineQuery, 'boost' | 'bury'> = {},
  ) {
    const rules = [...sort, ...this.definition.rankingRules];
    // Keys are computed once per document, into one array per rule indexed by the document's place in `slots`.
    const keys: (Int32Array | (Scalar | undefined)[])[] = [];
    const directions: number[] = [];
    const positional =
      words.length > 0 && rules.some((rule) => rule === 'proximity' || rule === 'attribute' || rule === 'exactness')
        ? this.positionalScores(slots, matches)
        : undefined;
    for (const rule of rules) {
      if (typeof rule === 'object') {
        keys.push(slots.map((slot) => valuesOf(this.documents[slot]!.values[rule.field])[0]));
        directions.push(rule.direction === 'asc' ? 1 : -1);
      } else if (words.length > 0) {
        if (rule === 'words' || rule === 'typo') {
          const key = new Int32Array(slots.length);
          for (const of of typos) {
            for (let s = 0; s < slots.length; s++) {
              const count = of[slots[s]!]!;
              if (rule === 'words') key[s] = key[s]! - (count >= 0 ? 1 : 0);
              else if (count > 0) key[s] = key[s]! + count;
            }
          }
          keys.push(key);
        } else if (positional && rule === 'proximity') keys.push(positional.proximity);
        else if (positional && rule === 'attribute') keys.push(positional.attribute);
        else if (positional && rule === 'exactness') keys.push(positional.exactness.map((value) => -value));
        else continue;
        directions.push(1);
      }
    }
    const boosted = boostKeys(slots, (slot) => this.documents[slot]!.values, promoted);
    if (boosted) {
      keys.push(boosted);
      directions.push(1);
    }
    const documents = this.documents;
    const compare = (a: number, b: number) => {
      for (let i = 0; i < keys.length; i++) {
        const x = keys[i]![a];
        const y = keys[i]![b];
        if (x === y) continue;
        // Documents without a value for a sort rule come last in either direction.
        if (x === undefined) return 1;
        if (y === undefined) return -1;
        return (x < y ? -1 : 1) * directions[i]!;
      }
      const ia = documents[slots[a]!]!.id;
      const ib = documents[slots[b]!]!.id;
      return ia < ib ? -1 : ia > ib ? 1 : 0;
    };
    const places = Array.from({ length: slots.length }, (_, s) => s);

    const distinct = this.definition.distinctField;
    if (!distinct) {
      return { slots: topOf(places, needed, compare).map((s) => slots[s]!), count: slots.length };
    }
    const sorted = places.sort(compare);
    const seen = new Set<string>();
    const kept: number[] = [];
    for (const s of sorted) {
      const slot = slots[s]!;
      const value = valuesOf(this.documents[slot]!.values[distinct])[0];
      if (value !== undefined) {
        const key = `${typeof value}:${String(value)}`;
        if (seen.has(key)) continue;
        seen.add(key);
      }
      kept.push(slot);
    }
    return { slots: kept.slice(0, needed), count: kept.length };
  }

  private hitOf(document: IndexedDocument, words: string[], matches: Map<string, WordMatch>[]): EngineHit {
    const highlight: EngineHit['highlight'] = {};
    this.definition.searchFields.forEach((field, f) => {
      const value = document.values[field];
      if (value === null || value === undefined) return;
      const exact = this.exactField[f]!;
      const one = (text: string): HighlightResult => {
        let out = '';
        let at = 0;
        const matched = new Set<number>();
        // Stemmed words are compared as stems and marked as written.
        for (const token of this.matcher.wordsAt(text, exact)) {
          const term = exact ? EXACT_MARK + token.word : token.word;
          const which = matches.findIndex(
            (wordMatches) => wordMatches.has(term) || (token.typed !== token.word && wordMatches.has(token.typed)),
          );
          if (which === -1) continue;
          matched.add(which);
          out +=
            escapeHtml(text.slice(at, token.start)) +
            HIGHLIGHT_PRE +
            escapeHtml(text.slice(token.start, token.end)) +
            HIGHLIGHT_POST;
          at = token.end;
        }
        out += escapeHtml(text.slice(at));
        return {
          value: out,
          matchLevel: matched.size === 0 ? 'none' : matched.size === words.length ? 'full' : 'partial',
          matchedWords: [...matched].sort().map((i) => words[i]!),
        };
      };
      highlight[field] = Array.isArray(value) ? value.map((item) => one(String(item))) : one(String(value));
    });
    return { document, highlight };
  }
}

/**
 * The most frequent values, at most MAX_FACET_VALUES, by count and then by value as text. Values
 * are grouped by count, and each group's texts sorted natively (by code unit, as `<` compares).
 */
function topValues(counts: Map<Scalar, number>): [string, number][] {
  const byCount = new Map<number, string[]>();
  for (const [value, count] of counts) {
    const texts = byCount.get(count);
    if (texts) texts.push(String(value));
    else byCount.set(count, [String(value)]);
  }
  const top: [string, number][] = [];
  for (const count of [...byCount.keys()].sort((a, b) => b - a)) {
    for (const text of byCount.get(count)!.sort()) {
      if (top.length === MAX_FACET_VALUES) return top;
      top.push([text, count]);
    }
  }
  return top;
}

/** Ranked slots with the pinned ones moved to their positions (or the end, when the list is shorter). */
function placePins(slots: number[], pins: { slot: number; position: number }[]): number[] {
  const pinnedSlots = new Set(pins.map((pin) => pin.slot));
  const order = slots.filter((slot) => !pinnedSlots.has(slot));
  for (const pin of pins) order.splice(Math.min(pin.position - 1, order.length), 0, pin.slot);
  return order;
}

/** The first `k` items in `compare` order, without sorting everything when k is small. */
function topOf(items: number[], k: number, compare: (a: number, b: number) => number): number[] {
  if (items.length <= k * 4) return [...items].sort(compare).slice(0, k);
  // A max-heap of the best k seen so far: its root is the worst of them.
  const heap: number[] = [];
  const worse = (a: number, b: number) => compare(a, b) > 0;
  const siftUp = (i: number) => {
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!worse(heap[i]!, heap[parent]!)) break;
      [heap[i], heap[parent]] = [heap[parent]!, heap[i]!];
      i = parent;
    }
  };
  const siftDown = (i: number) => {
    for (;;) {
      const left = 2 * i + 1;
      const right = left + 1;
      let largest = i;
      if (left < heap.length && worse(heap[left]!, heap[largest]!)) largest = left;
      if (right < heap.length && worse(heap[right]!, heap[largest]!)) largest = right;
      if (largest === i) return;
      [heap[i], heap[largest]] = [heap[largest]!, heap[i]!];
      i = largest;
    }
  };
  for (const item of items) {
    if (heap.length < k) {
      heap.push(item);
      siftUp(heap.length - 1);
    } else if (k > 0 && compare(item, heap[0]!) < 0) {
      heap[0] = item;
      siftDown(0);
    }
  }
  return heap.sort(compare);
}

/**
 * For each of the ascending `slots`, the fewest typos among the terms whose postings hold it, -1
 * when none does. Each posting list is searched forward from where the previous slot was found,
 * in steps that double (galloping), so a long list costs about log(its length / slots) per slot.
 */
function typosWithin(slots: number[], terms: TermPostings[]): Int8Array {
  const found = new Int8Array(slots.length).fill(-1);
  for (const { slots: list, typos: cost } of terms) {
    const length = list.length;
    let at = 0;
    for (let c = 0; c < slots.length && at < length; c++) {
      const target = slots[c]!;
      if (list[at]! < target) {
        let step = 1;
        let high = at + 1;
        while (high < length && list[high]! < target) {
          at = high;
          step *= 2;
          high = at + step;
        }
        let low = at + 1;
        high = Math.min(high, length);
        while (low < high) {
          const middle = (low + high) >> 1;
          if (list[middle]! < target) low = middle + 1;
          else high = middle;
        }
        at = low;
        if (at >= length) break;
      }
      if (list[at] === target) {
        const known = found[c]!;
        if (known === -1 || cost < known) found[c] = cost;
      }
    }
  }
  return found;
}

/** Index of the first term not below `word`. */
function lowerBound(terms: string[], word: string): number {
  let low = 0;
  let high = terms.length;
  while (low < high) {
    const middle = (low + high) >> 1;
    if (terms[middle]! < word) low = middle + 1;
    else high = middle;
  }
  return low;
}
