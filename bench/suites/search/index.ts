import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { buildApp } from '../../../src/app';
import { resolveDefinition } from '../../../src/modules/search/definition';
import { EmbeddedEngine } from '../../../src/modules/search/engine/embedded-engine';
import type { EngineQuery } from '../../../src/modules/search/engine/engine';
import * as repository from '../../../src/modules/search/search.repository';
import { toEngineQuery } from '../../../src/modules/search/search-query';
import type { Measurement } from '../../lib/report';
import { probe, type Suite } from '../../lib/suite';
import { ALIAS, CONTEXT, DOCUMENTS, INDEX, product } from './catalogue';
import { FLEXSEARCH_VERSION } from './flexsearch';
import { heapOf, integer, median, seconds } from './measure';
import { MINISEARCH_VERSION } from './minisearch';
import { measureWithPeers, type PeerRun } from './peers';

export { searchScaleSuite } from './scale';

const BATCH = 1_000;

const readBody = (request: IncomingMessage) =>
  new Promise<string>((resolve) => {
    let body = '';
    request.setEncoding('utf8');
    request.on('data', (chunk: string) => (body += chunk));
    request.on('end', () => resolve(body));
  });

/**
 * Search with the embedded engine over 100 000 generated products: upsert rate, rebuild time and
 * memory of the in-memory index, and search over HTTP (full stack, and a bare node:http handler)
 * against the engine called directly in the same process.
 */
export const searchSuite: Suite = {
  name: 'search (embedded engine)',
  notes: [],
  async run({ fixture, teardown, load, measure, log }) {
    const { app, services } = await buildApp({ config: fixture.config, db: fixture.db, masterKey: fixture.masterKey });
    teardown.add('close the search stack', () => app.close());
    await app.listen({ port: 0, host: '127.0.0.1' });
    const origin = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
    const auth = { authorization: `Bearer ${fixture.apiKey}`, 'content-type': 'application/json' };

    const created = await probe({
      url: `${origin}/api/instant/indexes`,
      method: 'POST',
      headers: auth,
      body: JSON.stringify({ data: INDEX }),
    });
    if (created.status !== 201)
      throw new Error(`creating the index answered ${created.status}: ${JSON.stringify(created.body)}`);

    log(`upserting ${DOCUMENTS} documents in batches of ${BATCH} over HTTP`);
    const upsertStart = performance.now();
    for (let start = 0; start < DOCUMENTS; start += BATCH) {
      const body = JSON.stringify({ data: Array.from({ length: BATCH }, (_, i) => product(start + i)) });
      const response = await fetch(`${origin}/api/instant/indexes/${ALIAS}/documents`, {
        method: 'PUT',
        headers: auth,
        body,
      });
      if (response.status !== 204) throw new Error(`upsert answered ${response.status}: ${await response.text()}`);
    }
    const upsertMs = performance.now() - upsertStart;

    // A fresh engine in this process rebuilds the index from PostgreSQL, as a starting process does.
    const row = (await repository.findIndex(fixture.db, fixture.tenantId, ALIAS))!;
    const definition = resolveDefinition(row);
    const translated = toEngineQuery(row, CONTEXT, 'bench');
    if (!translated.query) throw new Error(`bench query is invalid: ${JSON.stringify(translated.problems)}`);
    const query: EngineQuery = translated.query;
    const fresh = new EmbeddedEngine(fixture.db);
    const rebuilt = await heapOf(async () => {
      const rebuildStart = performance.now();
      await fresh.search(definition, query);
      return performance.now() - rebuildStart;
    });
    const rebuildMs = rebuilt.value;
    await fresh.close();

    const engine = services.search.engine;
    const bare = createServer(async (request, response) => {
      const body = JSON.parse(await readBody(request)) as { data: (typeof CONTEXT)[] };
      const result = await engine.search(definition, toEngineQuery(row, body.data[0]!, 'bench').query!);
      response.writeHead(201, { 'content-type': 'application/json' }).end(JSON.stringify(result));
    });
    teardown.add('close the bare search server', () =>
      new Promise((resolve) => bare.close(resolve)).then(() => bare.closeAllConnections()),
    );
    await new Promise<void>((resolve) => bare.listen(0, '127.0.0.1', resolve));
    const bareOrigin = `http://127.0.0.1:${(bare.address() as AddressInfo).port}`;

    const body = JSON.stringify({ data: [CONTEXT] });
    const check = await probe({
      url: `${origin}/api/instant/search/indexes/${ALIAS}`,
      method: 'POST',
      headers: auth,
      body,
    });
    if (check.status !== 201) throw new Error(`search answered ${check.status}: ${JSON.stringify(check.body)}`);
    const count = (check.body as { data: { results: { count: number }[] }[] }).data[0]!.results[0]!.count;

    const { direct, miniSearch, flexSearch } = await measureWithPeers(
      () => engine.search(definition, query),
      load,
      log,
    );
    const directRate = median(direct.roundRequestsPerSecond);
    const rateOf = (peer: PeerRun) => median(peer.result.roundRequestsPerSecond);
    const [bareResult, fullResult] = await measure([
      { url: bareOrigin, method: 'POST', headers: { 'content-type': 'application/json' }, body },
      { url: `${origin}/api/instant/search/indexes/${ALIAS}`, method: 'POST', headers: auth, body },
    ]);

    this.notes.push(
      `Search: ${integer.format(DOCUMENTS)} generated products upserted over HTTP in batches of ${BATCH} in ${seconds(upsertMs)} s (${integer.format(DOCUMENTS / (upsertMs / 1000))} documents/s, each batch stored in PostgreSQL and applied to the in-memory index before the 204).`,
      `Search: rebuilding the in-memory index of ${integer.format(DOCUMENTS)} documents from PostgreSQL, as at start, took ${(rebuildMs / 1000).toFixed(2)} s (goal: at most 1 s); it holds ${rebuilt.heapMb.toFixed(0)} MiB of JS heap and array buffers (resident set grew ${rebuilt.rssMb.toFixed(0)} MiB).`,
      `Search rows: the query "${CONTEXT.q}" (prefix on the last word) with a price filter and two facets, ${integer.format(count)} matches, 10 hits. "engine called directly" is EmbeddedEngine.search() in a loop in this process, one call at a time (its p50/p99 are per call, not under 50 connections); the bare node:http row parses the body and calls the engine, with no authentication, validation, database or search log; the full stack adds those.`,
      `Search peer: the same ${integer.format(DOCUMENTS)} products in MiniSearch ${MINISEARCH_VERSION} in this process, built in ${seconds(miniSearch.buildMs)} s (search fields ${INDEX.search_fields.join(', ')}; the engine's typo budget per word, prefix on the last word, combineWith AND; every field a hit returns stored), queried with the same words and price filter, without facets (${integer.format(miniSearch.count)} matches, 10 hits), measured in the same interleaved rounds as the direct engine: median round ${integer.format(directRate)} vs ${integer.format(rateOf(miniSearch))} queries/s (${(directRate / rateOf(miniSearch)).toFixed(1)}×). JS heap and array buffers of the index: embedded ${rebuilt.heapMb.toFixed(0)} MiB, MiniSearch ${miniSearch.heapMb.toFixed(0)} MiB (${(rebuilt.heapMb / miniSearch.heapMb).toFixed(2)}×).`,
      `Search peer: the same products in FlexSearch ${FLEXSEARCH_VERSION} in this process, built in ${seconds(flexSearch.buildMs)} s: a Document index over ${INDEX.search_fields.join(', ')} with tokenize "forward" and the LatinExtra encoder, every product stored; each query word must be in one of the fields (a Resolver unites a word's fields and intersects the words), and only when no document has every word is the query run again in its suggest mode; the price filter is applied to the stored documents of all matches, as MiniSearch's is (${integer.format(flexSearch.count)} matches, 10 hits, in its own order). Not matched: every query word matches as a prefix, not only the last (tokenize is per index); typos are its phonetic normalization (LatinExtra drops vowels and merges similar consonants), not an edit distance: it also forgives typos in words of 4 letters or fewer ("lmap", "sufa"), which the engine's budget does not, misses some swapped consonants ("keyboadr") and merges some distinct words; no facets; documents keyed by a number (the product's id stays stored), as FlexSearch advises: with the catalogue's string ids its intersections run several times slower. Median round ${integer.format(directRate)} vs ${integer.format(rateOf(flexSearch))} queries/s (${(directRate / rateOf(flexSearch)).toFixed(1)}×); JS heap and array buffers of the index: FlexSearch ${flexSearch.heapMb.toFixed(0)} MiB (the embedded index: ${(rebuilt.heapMb / flexSearch.heapMb).toFixed(2)}×).`,
    );
    return [
      {
        id: 'search.minisearch',
        label: 'search: MiniSearch, same products (in process, peer)',
        result: miniSearch.result,
      },
      {
        id: 'search.flexsearch',
        label: 'search: FlexSearch, same products (in process, peer)',
        result: flexSearch.result,
      },
      {
        id: 'search.direct',
        label: 'search: engine called directly (in process)',
        result: direct,
        baselines: ['search.minisearch', 'search.flexsearch'],
      },
      {
        id: 'search.bare',
        label: 'search: bare node:http + engine, no auth',
        result: bareResult!,
        baselines: ['search.direct'],
      },
      {
        id: 'search.full',
        label: 'search: full stack HTTP (POST /api/instant/search/indexes)',
        result: fullResult!,
        baselines: ['search.direct', 'search.bare'],
      },
    ] satisfies Measurement[];
  },
};
