/**
 * The search engine at two sizes: the same generated products and the same mix of queries over an
 * in-memory index of 100 000 and of 1 000 000 documents, built directly in this process (no HTTP,
 * no PostgreSQL), both held at once so that their rounds interleave. Reports queries/s and latency
 * of each size, the build time and the memory per document.
 */
import { mapStoredDocument, resolveDefinition, type IndexState } from '../../../src/modules/search/definition';
import type { EngineQuery, FieldType, IndexedDocument } from '../../../src/modules/search/engine/engine';
import { MemoryIndex } from '../../../src/modules/search/engine/memory-index';
import { toEngineQuery } from '../../../src/modules/search/search-query';
import type { SearchContextData } from '../../../src/modules/search/search.schemas';
import type { Measurement } from '../../lib/report';
import type { Suite } from '../../lib/suite';
import { CONTEXT, INDEX, uniformProduct } from './catalogue';
import { heapOf, integer, measureInProcess, seconds } from './measure';

const SIZES = [100_000, 1_000_000] as const;
/** Products generated, mapped and upserted at a time: the generator never holds more than these. */
const CHUNK = 10_000;
/** Time each query of the mix is run alone at each size, for the per-query note. */
const PER_QUERY_MS = 300;

/** The index as the service stores it after creating the catalogue's index (see search/index.ts). */
const STATE: IndexState = {
  id: 'bench-scale',
  tenantId: 'bench',
  alias: 'bench-scale',
  version: 1,
  rebuildVersion: 1,
  fields: INDEX.fields.map((field) => ({
    from: field.from,
    to: field.from,
    type: field.type as FieldType,
    label: null,
  })),
  searchFields: INDEX.search_fields,
  displayFields: [],
  filters: INDEX.filters,
  facetFields: [],
  distinctField: null,
  synonyms: [],
  stopWords: [],
  rankingRules: [],
  sortableFields: [],
  matching: {},
  seenFieldTypes: {},
};

/** What shop front ends send, run round-robin: each kind of search once. */
const MIX: { label: string; context: SearchContextData }[] = [
  { label: 'one word', context: { q: 'keyboard' } },
  { label: 'two words, prefix', context: { q: 'vintage lam' } },
  { label: 'typos', context: { q: 'wireles headphnoe' } },
  { label: 'rare word', context: { q: 'zenverlo' } },
  { label: 'filter + facets', context: CONTEXT },
  {
    label: 'filters + facet',
    context: {
      q: 'portable',
      filters: [
        { key: 'brand', operator: 'in', values: ['Lumo', 'Orbit'] },
        { key: 'in_stock', operator: 'in', values: [true] },
      ],
      facets: ['category'],
    },
  },
  { label: 'sort by price', context: { q: 'oak desk', sort: ['price:asc'] } },
];

const definition = resolveDefinition(STATE);
export const SCALE_QUERIES: EngineQuery[] = MIX.map(({ label, context }) => {
  const translated = toEngineQuery(STATE, context, 'scale');
  if (!translated.query) throw new Error(`scale query "${label}" is invalid: ${JSON.stringify(translated.problems)}`);
  return translated.query;
});

/**
 * `documents` products upserted chunk by chunk, and searched once (the first search sorts the
 * terms). Each chunk goes through JSON as documents read from PostgreSQL do, so that the index
 * holds flat strings as it does in the service, not the concatenations the generator builds.
 */
export function buildScaleIndex(documents: number): MemoryIndex {
  const index = new MemoryIndex(definition);
  for (let start = 0; start < documents; start += CHUNK) {
    const end = Math.min(documents, start + CHUNK);
    const stored = JSON.parse(
      JSON.stringify(Array.from({ length: end - start }, (_, i) => uniformProduct(start + i))),
    ) as unknown[];
    const chunk: IndexedDocument[] = stored.map((data, i) => {
      const document = mapStoredDocument(data, STATE, STATE.seenFieldTypes);
      if (!document) throw new Error(`product ${start + i} does not fit the index`);
      return document;
    });
    index.upsert(chunk);
  }
  index.search(SCALE_QUERIES[0]!);
  return index;
}

/** One query of the mix per call, in turn. */
function mixOf(index: MemoryIndex) {
  let next = 0;
  return () => index.search(SCALE_QUERIES[next++ % SCALE_QUERIES.length]!);
}

/** Milliseconds per call of each query alone. */
function perQuery(index: MemoryIndex): number[] {
  return SCALE_QUERIES.map((query) => {
    let calls = 0;
    const start = performance.now();
    while (performance.now() - start < PER_QUERY_MS || calls < 3) {
      index.search(query);
      calls += 1;
    }
    return (performance.now() - start) / calls;
  });
}

export const searchScaleSuite: Suite = {
  name: 'search scale (embedded engine, 100k vs 1M)',
  notes: [],
  async run({ load, log }) {
    const built: { size: number; index: MemoryIndex; buildMs: number; heapMb: number }[] = [];
    for (const size of SIZES) {
      log(`building the in-memory index of ${integer.format(size)} products in ${CHUNK}-product chunks`);
      const { value, heapMb } = await heapOf(async () => {
        const start = performance.now();
        return { index: buildScaleIndex(size), buildMs: performance.now() - start };
      });
      built.push({ size, ...value, heapMb });
    }
    const counts = built.map(({ index }) => SCALE_QUERIES.map((query) => index.search(query).count));

    log(`measuring the mix of ${SCALE_QUERIES.length} queries at each size, interleaved`);
    const results = await measureInProcess(
      built.map(({ index }) => mixOf(index)),
      load,
    );
    const perQueryMs = built.map(({ index }) => perQuery(index));

    const [small, large] = built;
    const bytesPerDocument = (one: (typeof built)[number]) => (one.heapMb * 2 ** 20) / one.size;
    const ms = (value: number) => (value >= 10 ? value.toFixed(0) : value.toFixed(2));
    this.notes.push(
      `Search scale rows: the engine's in-memory index (MemoryIndex, as the embedded engine holds it) built in this process from ${integer.format(small!.size)} and ${integer.format(large!.size)} generated products (the search suite's products, from uniformProduct: the same words in the same proportions at every size; ${integer.format(CHUNK)} generated and upserted at a time), both held while a mix of ${SCALE_QUERIES.length} queries runs round-robin, one call at a time, the two sizes in interleaved rounds: ${MIX.map(({ label, context }, i) => `${label} "${context.q}" (${counts.map((of) => integer.format(of[i]!)).join(' / ')} matches)`).join('; ')}. q/s and p50/p99 are over the mix.`,
      `Search scale: build (generating, mapping and upserting the products, and the first search, which sorts the terms) ${built.map((one) => `${seconds(one.buildMs)} s`).join(' / ')}; JS heap and array buffers held ${built.map((one) => `${one.heapMb.toFixed(0)} MiB`).join(' / ')} = ${built.map((one) => `${integer.format(bytesPerDocument(one))}`).join(' / ')} bytes per document; ${integer.format(large!.size)} documents hold ${(large!.heapMb / small!.heapMb).toFixed(1)}× the memory of ${integer.format(small!.size)}.`,
      `Search scale, ms per call of each query alone (${integer.format(small!.size)} → ${integer.format(large!.size)}): ${MIX.map(({ label }, i) => `${label} ${ms(perQueryMs[0]![i]!)} → ${ms(perQueryMs[1]![i]!)}`).join('; ')}.`,
    );
    return [
      {
        id: 'search.scale.100k',
        label: `search scale: engine, query mix, ${integer.format(small!.size)} products (in process)`,
        result: results[0]!,
      },
      {
        id: 'search.scale.1m',
        label: `search scale: engine, query mix, ${integer.format(large!.size)} products (in process)`,
        result: results[1]!,
        baselines: ['search.scale.100k'],
      },
    ] satisfies Measurement[];
  },
};
