/**
 * The peer reference of the search suite: the same products in MiniSearch, the most used
 * in-process JavaScript search engine, configured like the suite's query (the same search fields,
 * the typo budget of the embedded engine, prefix on the last word, every word required) and
 * storing every field a hit returns, as the embedded index does.
 */
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import MiniSearch, { type SearchResult } from 'minisearch';
import { typoBudget } from '../../../src/modules/search/engine/text';
import { CONTEXT, DOCUMENTS, INDEX, product } from './catalogue';

const CHUNK = 1_000;

/** The installed version, from the package.json above its entry point (the package exports no package.json). */
export const MINISEARCH_VERSION = (() => {
  for (
    let dir = dirname(createRequire(import.meta.url).resolve('minisearch'));
    dir !== dirname(dir);
    dir = dirname(dir)
  ) {
    const file = join(dir, 'package.json');
    if (!existsSync(file)) continue;
    const info = JSON.parse(readFileSync(file, 'utf8')) as { name?: string; version?: string };
    if (info.name === 'minisearch') return info.version ?? '?';
  }
  return '?';
})();

export function buildMiniSearch(): MiniSearch {
  const index = new MiniSearch({
    fields: INDEX.search_fields,
    storeFields: [...INDEX.fields.map((field) => field.from), 'metadata'],
    searchOptions: {
      prefix: (_term, i, terms) => i === terms.length - 1,
      fuzzy: (term) => typoBudget(term),
      combineWith: 'AND',
    },
  });
  for (let start = 0; start < DOCUMENTS; start += CHUNK)
    index.addAll(Array.from({ length: Math.min(CHUNK, DOCUMENTS - start) }, (_, i) => product(start + i)));
  return index;
}

const maxPrice = Number(CONTEXT.filters[0]!.values[0]);

/** The suite's query words and price filter: the matches and the first page (MiniSearch has no facets). */
export function searchMiniSearch(index: MiniSearch): { count: number; hits: SearchResult[] } {
  const results = index.search(CONTEXT.q, { filter: (result) => (result.price as number) <= maxPrice });
  return { count: results.length, hits: results.slice(0, CONTEXT.limit) };
}
