import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { buildApp } from '../../../src/app';
import { resolveDefinition } from '../../../src/modules/search/definition';
import { EmbeddedEngine } from '../../../src/modules/search/engine/embedded-engine';
import type { EngineQuery } from '../../../src/modules/search/engine/engine';
import * as repository from '../../../src/modules/search/search.repository';
import { toEngineQuery } from '../../../src/modules/search/search-query';
import type { LoadResult, LoadSettings } from '../../lib/load';
import type { Measurement } from '../../lib/report';
import { probe, type Suite } from '../../lib/suite';
import { ALIAS, CONTEXT, DOCUMENTS, INDEX, product } from './catalogue';
import { buildMiniSearch, MINISEARCH_VERSION, searchMiniSearch } from './minisearch';

const BATCH = 1_000;

const collectGarbage = (() => {
  setFlagsFromString('--expose-gc');
  return runInNewContext('gc') as () => void;
})();

const readBody = (request: IncomingMessage) =>
  new Promise<string>((resolve) => {
    let body = '';
    request.setEncoding('utf8');
    request.on('data', (chunk: string) => (body += chunk));
    request.on('end', () => resolve(body));
  });

const seconds = (ms: number) => (ms / 1000).toFixed(1);
const integer = new Intl.NumberFormat('en-US', { maximumFractionDigits: 0 });

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
};

/**
 * Calls made in a loop in this process, one at a time, measured like a load run: each warmed up,
 * then interleaved rounds (round r starts at call r) so that outside load hits every case alike.
 */
async function measureInProcess(calls: (() => unknown)[], load: LoadSettings): Promise<LoadResult[]> {
  for (const call of calls) {
    for (const deadline = Date.now() + load.warmupSeconds * 1000; Date.now() < deadline;) await call();
  }
  const runs = calls.map(() => ({ latencies: [] as number[], seconds: 0, cpuMicros: 0, rounds: [] as number[] }));
  const roundMs = (load.durationSeconds / load.rounds) * 1000;
  for (let round = 0; round < load.rounds; round++) {
    for (let offset = 0; offset < calls.length; offset++) {
      const index = (round + offset) % calls.length;
      const run = runs[index]!;
      const done = run.latencies.length;
      const cpuBefore = process.cpuUsage();
      const start = performance.now();
      for (const deadline = start + roundMs; performance.now() < deadline;) {
        const t = performance.now();
        await calls[index]!();
        run.latencies.push(performance.now() - t);
      }
      const elapsed = (performance.now() - start) / 1000;
      const cpu = process.cpuUsage(cpuBefore);
      run.seconds += elapsed;
      run.cpuMicros += cpu.user + cpu.system;
      run.rounds.push((run.latencies.length - done) / elapsed);
    }
  }
  return runs.map(({ latencies, seconds, cpuMicros, rounds }) => {
    latencies.sort((a, b) => a - b);
    const at = (p: number) => latencies[Math.min(latencies.length - 1, Math.floor(latencies.length * p))]!;
    return {
      requestsPerSecond: latencies.length / seconds,
      roundRequestsPerSecond: rounds,
      p50Ms: at(0.5),
      p99Ms: at(0.99),
      completed: latencies.length,
      cpuMicrosPerRequest: cpuMicros / latencies.length,
      failed: 0,
    };
  });
}

/**
 * Memory held by what `build` returns, after full collections before and after: the JS heap plus
 * array buffers (typed arrays keep their contents outside the heap).
 */
async function heapOf<T>(build: () => Promise<T>): Promise<{ value: T; heapMb: number; rssMb: number }> {
  const held = () => {
    collectGarbage();
    const usage = process.memoryUsage();
    return { heap: usage.heapUsed + usage.arrayBuffers, rss: usage.rss };
  };
  const before = held();
  const value = await build();
  const after = held();
  return { value, heapMb: (after.heap - before.heap) / 2 ** 20, rssMb: (after.rss - before.rss) / 2 ** 20 };
}

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

    log(`building the same ${DOCUMENTS} products in MiniSearch`);
    const { value: miniSearch, heapMb: miniSearchHeapMb } = await heapOf(async () => buildMiniSearch());
    const miniSearchCount = searchMiniSearch(miniSearch).count;

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

    log('measuring the engine called directly and MiniSearch, interleaved');
    const [direct, peer] = await measureInProcess(
      [() => engine.search(definition, query), () => searchMiniSearch(miniSearch)],
      load,
    );
    const [bareResult, fullResult] = await measure([
      { url: bareOrigin, method: 'POST', headers: { 'content-type': 'application/json' }, body },
      { url: `${origin}/api/instant/search/indexes/${ALIAS}`, method: 'POST', headers: auth, body },
    ]);

    this.notes.push(
      `Search: ${integer.format(DOCUMENTS)} generated products upserted over HTTP in batches of ${BATCH} in ${seconds(upsertMs)} s (${integer.format(DOCUMENTS / (upsertMs / 1000))} documents/s, each batch stored in PostgreSQL and applied to the in-memory index before the 204).`,
      `Search: rebuilding the in-memory index of ${integer.format(DOCUMENTS)} documents from PostgreSQL, as at start, took ${seconds(rebuildMs)} s; it holds ${rebuilt.heapMb.toFixed(0)} MiB of JS heap and array buffers (resident set grew ${rebuilt.rssMb.toFixed(0)} MiB).`,
      `Search rows: the query "${CONTEXT.q}" (prefix on the last word) with a price filter and two facets, ${integer.format(count)} matches, 10 hits. "engine called directly" is EmbeddedEngine.search() in a loop in this process, one call at a time (its p50/p99 are per call, not under 50 connections); the bare node:http row parses the body and calls the engine, with no authentication, validation, database or search log; the full stack adds those.`,
      `Search peer: the same ${integer.format(DOCUMENTS)} products in MiniSearch ${MINISEARCH_VERSION} in this process (search fields ${INDEX.search_fields.join(', ')}; the engine's typo budget per word, prefix on the last word, combineWith AND; every field a hit returns stored), queried with the same words and price filter, without facets (${integer.format(miniSearchCount)} matches, 10 hits), measured in the same interleaved rounds as the direct engine: median round ${integer.format(median(direct!.roundRequestsPerSecond))} vs ${integer.format(median(peer!.roundRequestsPerSecond))} queries/s (${(median(direct!.roundRequestsPerSecond) / median(peer!.roundRequestsPerSecond)).toFixed(1)}×). JS heap and array buffers of the index: embedded ${rebuilt.heapMb.toFixed(0)} MiB, MiniSearch ${miniSearchHeapMb.toFixed(0)} MiB (${(rebuilt.heapMb / miniSearchHeapMb).toFixed(2)}×).`,
    );
    return [
      { id: 'search.minisearch', label: 'search: MiniSearch, same products (in process, peer)', result: peer! },
      {
        id: 'search.direct',
        label: 'search: engine called directly (in process)',
        result: direct!,
        baselines: ['search.minisearch'],
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
