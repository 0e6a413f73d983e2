import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { EngineQuery, IndexedDocument } from '../../src/modules/search/engine/engine';
import { MemoryIndex } from '../../src/modules/search/engine/memory-index';
import { indexDefinition } from '../helpers/search-definitions';

const WORDS = ['lamp', 'lamps', 'lampe', 'chair', 'chairs', 'wireless', 'wirelss', 'headphone', 'head', 'red', 'read'];

const definition = indexDefinition({
  fields: [
    { name: 'name', type: 'STRING' },
    { name: 'tags', type: 'STRING' },
    { name: 'price', type: 'NUMBER' },
  ],
  searchFields: ['name', 'tags'],
  filterFields: ['price'],
  facetFields: ['price'],
  synonyms: [{ synonyms: ['lamp', 'light'] }],
  sortableFields: ['price'],
});

const text = fc.array(fc.constantFrom(...WORDS), { minLength: 0, maxLength: 6 }).map((words) => words.join(' '));
const document = fc.record({
  id: fc.integer({ min: 0, max: 40 }).map(String),
  name: text,
  tags: fc.array(text, { maxLength: 2 }),
  price: fc.integer({ min: 0, max: 20 }),
});
/** Queries of up to 12 words, typos and prefixes included, so that some have more words than buffers are kept. */
const query = fc
  .array(fc.constantFrom(...WORDS, 'lam', 'wir', 'chiar', 'headphon', 'light'), { minLength: 0, maxLength: 12 })
  .map((words) => words.join(' '));

const toDocument = (input: { id: string; name: string; tags: string[]; price: number }): IndexedDocument => ({
  id: input.id,
  values: { name: input.name, tags: input.tags, price: input.price },
  metadata: null,
});

const engineQuery = (q: string): EngineQuery => ({
  q,
  filters: [{ field: 'price', operator: 'lte', values: [15] }],
  facets: ['price'],
  limit: 5,
  offset: 0,
  threshold: 2,
  sort: [],
  disjunctiveFacets: false,
});

describe('MemoryIndex', () => {
  it('answers every search of a sequence as an index built afresh from the same live documents does', () => {
    fc.assert(
      fc.property(
        fc.array(fc.array(document, { minLength: 1, maxLength: 15 }), { minLength: 1, maxLength: 4 }),
        fc.array(fc.integer({ min: 0, max: 40 }).map(String), { maxLength: 10 }),
        fc.array(query, { minLength: 1, maxLength: 6 }),
        (batches, removed, queries) => {
          const index = new MemoryIndex(definition);
          const live = new Map<string, IndexedDocument>();
          for (const batch of batches) {
            const documents = batch.map(toDocument);
            index.upsert(documents);
            for (const one of documents) live.set(one.id, one);
          }
          index.remove(removed);
          for (const id of removed) live.delete(id);

          // Each search runs after the others on the same index: what one leaves behind must not change the next.
          for (const q of queries) {
            const fresh = new MemoryIndex(definition);
            fresh.upsert([...live.values()]);
            expect(index.search(engineQuery(q))).toEqual(fresh.search(engineQuery(q)));
          }
        },
      ),
    );
  });

  it('finds a document through a typo, a prefix and a synonym, ranking the exact match first', () => {
    const index = new MemoryIndex(definition);
    index.upsert([
      toDocument({ id: 'a', name: 'wireless lamp', tags: [], price: 1 }),
      toDocument({ id: 'b', name: 'wirelss light', tags: [], price: 2 }),
      toDocument({ id: 'c', name: 'red chair', tags: [], price: 3 }),
    ]);
    const typoAndSynonym = index.search({ ...engineQuery('wireless lamp '), threshold: 1 });
    expect(typoAndSynonym.hits.map((hit) => hit.document.id)).toEqual(['a', 'b']);
    expect(typoAndSynonym.count).toBe(2);
    const prefix = index.search({ ...engineQuery('red cha'), threshold: 1 });
    expect(prefix.hits.map((hit) => hit.document.id)).toEqual(['c']);
  });
});
