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
import type { LoadResult } from '../../lib/load';
import type { Measurement } from '../../lib/report';
import { probe, type Suite } from '../../lib/suite';

const DOCUMENTS = 100_000;
const BATCH = 1_000;
const ALIAS = 'bench-products';

const BRANDS = ['Lumo', 'Sitwell', 'Clack', 'Brite', 'Nordic', 'Vanta', 'Kettle & Co', 'Orbit', 'Pellucid', 'Hearth'];
const ADJECTIVES = [
  'wireless',
  'compact',
  'ergonomic',
  'vintage',
  'smart',
  'foldable',
  'waterproof',
  'premium',
  'portable',
  'silent',
  'modular',
  'classic',
];
const NOUNS = [
  'headphone',
  'keyboard',
  'lamp',
  'chair',
  'speaker',
  'backpack',
  'kettle',
  'monitor',
  'blender',
  'jacket',
  'tent',
  'watch',
  'camera',
  'desk',
  'sofa',
];
const COLORS = ['black', 'white', 'red', 'blue', 'green', 'grey', 'oak', 'walnut'];
const SYLLABLES = [
  'ka',
  'lo',
  'mi',
  'ver',
  'sta',
  'no',
  'ri',
  'zen',
  'tal',
  'bo',
  'qui',
  'der',
  'san',
  'pe',
  'lux',
  'ar',
];
/** Model names, a few thousand distinct words, so the vocabulary is not only the lists above. */
const model = (i: number) =>
  SYLLABLES[i % 16]! + SYLLABLES[Math.floor(i / 16) % 16]! + SYLLABLES[Math.floor(i / 256) % 16]!;

/** A deterministic product catalogue: the same documents in every run. */
function product(i: number) {
  let seed = i * 2654435761;
  const pick = <T>(list: T[]) => {
    seed = (seed * 1103515245 + 12345) >>> 0;
    return list[seed % list.length]!;
  };
  const noun = pick(NOUNS);
  const brand = pick(BRANDS);
  return {
    id: `prod-${i}`,
    name: `${brand} ${model((i * 7919) % 4096)} ${pick(ADJECTIVES)} ${noun} ${pick(COLORS)}`,
    description: `A ${pick(ADJECTIVES)} ${noun} in ${pick(COLORS)}, ${pick(ADJECTIVES)} and ${pick(ADJECTIVES)}. Sku ${i}.`,
    brand,
    category: noun,
    price: 5 + ((i * 37) % 995),
    in_stock: i % 7 !== 0,
    metadata: { url: `https://shop.example.com/p/${i}` },
  };
}

const INDEX = {
  name: 'Bench products',
  alias: ALIAS,
  fields: [
    { from: 'name', type: 'STRING' },
    { from: 'description', type: 'STRING' },
    { from: 'brand', type: 'STRING' },
    { from: 'category', type: 'STRING' },
    { from: 'price', type: 'NUMBER' },
    { from: 'in_stock', type: 'BOOLEAN' },
  ],
  search_fields: ['name', 'brand', 'description'],
  filters: [{ key: 'brand' }, { key: 'category' }, { key: 'price' }, { key: 'in_stock' }],
};

/** What a shop front end sends while someone types "nordic wireless headph". */
const CONTEXT = {
  q: 'nordic wireless headph',
  facets: ['brand', 'price'],
  filters: [{ key: 'price', operator: 'lte' as const, values: ['800'] }],
  limit: 10,
};

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

/** The engine called in a loop in this process, measured like a load run (one caller at a time). */
async function measureDirect(
  call: () => Promise<unknown>,
  warmupSeconds: number,
  durationSeconds: number,
): Promise<LoadResult> {
  const until = (deadline: number) => Date.now() < deadline;
  for (const deadline = Date.now() + warmupSeconds * 1000; until(deadline);) await call();
  const latencies: number[] = [];
  const cpuBefore = process.cpuUsage();
  const start = performance.now();
  for (const deadline = Date.now() + durationSeconds * 1000; until(deadline);) {
    const t = performance.now();
    await call();
    latencies.push(performance.now() - t);
  }
  const elapsed = (performance.now() - start) / 1000;
  const cpu = process.cpuUsage(cpuBefore);
  latencies.sort((a, b) => a - b);
  const at = (p: number) => latencies[Math.min(latencies.length - 1, Math.floor(latencies.length * p))]!;
  const requestsPerSecond = latencies.length / elapsed;
  return {
    requestsPerSecond,
    roundRequestsPerSecond: [requestsPerSecond],
    p50Ms: at(0.5),
    p99Ms: at(0.99),
    completed: latencies.length,
    cpuMicrosPerRequest: (cpu.user + cpu.system) / latencies.length,
    failed: 0,
  };
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
    collectGarbage();
    const heapBefore = process.memoryUsage().heapUsed;
    const rssBefore = process.memoryUsage().rss;
    const fresh = new EmbeddedEngine(fixture.db);
    const rebuildStart = performance.now();
    await fresh.search(definition, query);
    const rebuildMs = performance.now() - rebuildStart;
    collectGarbage();
    const heapMb = (process.memoryUsage().heapUsed - heapBefore) / 2 ** 20;
    const rssMb = (process.memoryUsage().rss - rssBefore) / 2 ** 20;
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

    log('measuring the engine called directly');
    const direct = await measureDirect(
      () => engine.search(definition, query),
      load.warmupSeconds,
      load.durationSeconds,
    );
    const [bareResult, fullResult] = await measure([
      { url: bareOrigin, method: 'POST', headers: { 'content-type': 'application/json' }, body },
      { url: `${origin}/api/instant/search/indexes/${ALIAS}`, method: 'POST', headers: auth, body },
    ]);

    this.notes.push(
      `Search: ${integer.format(DOCUMENTS)} generated products upserted over HTTP in batches of ${BATCH} in ${seconds(upsertMs)} s (${integer.format(DOCUMENTS / (upsertMs / 1000))} documents/s, each batch stored in PostgreSQL and applied to the in-memory index before the 204).`,
      `Search: rebuilding the in-memory index of ${integer.format(DOCUMENTS)} documents from PostgreSQL, as at start, took ${seconds(rebuildMs)} s; it holds ${heapMb.toFixed(0)} MiB of JS heap (resident set grew ${rssMb.toFixed(0)} MiB).`,
      `Search rows: the query "${CONTEXT.q}" (prefix on the last word) with a price filter and two facets, ${integer.format(count)} matches, 10 hits. "engine called directly" is EmbeddedEngine.search() in a loop in this process, one call at a time (its p50/p99 are per call, not under 50 connections); the bare node:http row parses the body and calls the engine, with no authentication, validation, database or search log; the full stack adds those.`,
    );
    return [
      { id: 'search.direct', label: 'search: engine called directly (in process)', result: direct },
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
