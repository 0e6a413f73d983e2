/**
 * The second peer reference of the search suite: the same products in FlexSearch, the fastest
 * in-process JavaScript engine, configured as close to the suite's query as it allows. Each search
 * field is its own index with forward tokenization (every word also matches as a prefix) and the
 * LatinExtra encoder (phonetic normalization, its answer to typos); every query word must match in
 * one of the fields (a word's fields are united, the words intersected), and only when no document
 * has every word is the query retried in its suggest mode, as the embedded engine drops words only
 * when nothing matches them all. The whole product is stored, as the embedded index stores it.
 */
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import FlexSearch from 'flexsearch';
import { CONTEXT, DOCUMENTS, INDEX, product } from './catalogue';

const { Charset, Document, Resolver } = FlexSearch;

type Product = ReturnType<typeof product>;
/**
 * FlexSearch keys documents by its own numeric id: with the catalogue's string ids its
 * intersections run several times slower, so its users are advised to number their documents. The
 * product's own id stays in the stored document.
 */
type Stored = Product & { key: number };
type FlexIndex = InstanceType<typeof Document<Stored>>;

/** The installed version, from the package.json above its entry point. */
export const FLEXSEARCH_VERSION = (() => {
  for (
    let dir = dirname(createRequire(import.meta.url).resolve('flexsearch'));
    dir !== dirname(dir);
    dir = dirname(dir)
  ) {
    const file = join(dir, 'package.json');
    if (!existsSync(file)) continue;
    const info = JSON.parse(readFileSync(file, 'utf8')) as { name?: string; version?: string };
    if (info.name === 'flexsearch') return info.version ?? '?';
  }
  return '?';
})();

export function buildFlexSearch(): FlexIndex {
  const index = new Document<Stored>({
    document: {
      id: 'key',
      index: INDEX.search_fields.map((field) => ({
        field: field as keyof Product & string,
        tokenize: 'forward' as const,
        encoder: Charset.LatinExtra,
      })),
      store: true,
    },
  });
  for (let i = 0; i < DOCUMENTS; i++) index.add({ ...product(i), key: i });
  return index;
}

const maxPrice = Number(CONTEXT.filters[0]!.values[0]);
const words = CONTEXT.q.split(/\s+/).filter(Boolean);

type Field = keyof Product & string;
const fields = INDEX.search_fields as Field[];
/** One query word in any of the search fields. */
const inAnyField = (query: string) => fields.map((field) => ({ query, field }));

/** Documents with every query word in one of the search fields (suggest: those with the most of them). */
function matching(index: FlexIndex, suggest: boolean) {
  const [first, ...others] = words;
  const [own, ...more] = inAnyField(first!);
  const firstWord = new Resolver<Stored>({ index, ...own!, suggest }).or(...more);
  const all =
    others.length === 0 ? firstWord : firstWord.and(...others.map((word) => ({ or: inAnyField(word), suggest })));
  return all.resolve({ limit: DOCUMENTS, enrich: true });
}

/** The suite's query words and price filter: the matches and the first page (facets are not counted). */
export function searchFlexSearch(index: FlexIndex): { count: number; hits: Product[] } {
  let results = matching(index, false);
  if (results.length === 0) results = matching(index, true);
  const hits: Product[] = [];
  for (const result of results) {
    const doc = result.doc as Stored | null;
    if (doc && doc.price <= maxPrice) hits.push(doc);
  }
  return { count: hits.length, hits: hits.slice(0, CONTEXT.limit) };
}
