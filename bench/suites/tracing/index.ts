import type { AddressInfo } from 'node:net';
import { ExportResultCode } from '@opentelemetry/core';
import { BatchSpanProcessor, type SpanExporter } from '@opentelemetry/sdk-trace-base';
import { buildApp } from '../../../src/app';
import { createDb, poolUse } from '../../../src/kernel/db';
import { startTracing } from '../../../src/kernel/tracing/setup';
import type { LoadRequest } from '../../lib/load';
import type { Measurement } from '../../lib/report';
import { startFullStack, type RunningServer } from '../../lib/stack';
import { probe, type Suite, type SuiteContext } from '../../lib/suite';

/** Takes every batch and keeps nothing: what tracing costs the service, without a collector's network. */
const droppingExporter: SpanExporter = {
  export: (_spans, done) => done({ code: ExportResultCode.SUCCESS }),
  shutdown: async () => {},
};

const PRODUCTS_QUERY = '{ products(first: 10) { edges { cursor node { id name sku } } pageInfo { hasNextPage } } }';

/**
 * The full application with tracing on, made as src/main.ts makes it once OTEL_* configures an
 * exporter: tracing started first, then its own database pool (traced) and the app. Spans go
 * through the batch processor an OTLP exporter would use, into an exporter that drops them.
 */
async function startTracedStack({ fixture, teardown }: SuiteContext) {
  const tracing = startTracing(fixture.config.tracing, { spanProcessors: [new BatchSpanProcessor(droppingExporter)] })!;
  const db = createDb(fixture.databaseUrl, { poolSize: poolUse(fixture.db)?.size });
  teardown.add('disconnect the traced stack’s Prisma', () => db.$disconnect());
  const { app } = await buildApp({ config: fixture.config, db, masterKey: fixture.masterKey });
  teardown.add('close the traced stack', () => app.close());
  await app.listen({ port: 0, host: '127.0.0.1' });
  const server: RunningServer = { origin: `http://127.0.0.1:${(app.server.address() as AddressInfo).port}` };
  return { server, tracing };
}

/** The cases measured against each stack, with the same requests. */
function casesFor(server: RunningServer, apiKey: string, proxyKey: string) {
  const auth = { authorization: `Bearer ${apiKey}` };
  return [
    { name: 'GET proxy', request: { url: `${server.origin}/api/storage/edge/proxies/${proxyKey}`, headers: auth } },
    {
      name: 'products(first: 10)',
      request: {
        url: `${server.origin}/graphql`,
        method: 'POST',
        headers: { ...auth, 'content-type': 'application/json' },
        body: JSON.stringify({ query: PRODUCTS_QUERY }),
      },
    },
  ] satisfies { name: string; request: LoadRequest }[];
}

async function checkAnswers(requests: LoadRequest[]) {
  for (const request of requests) {
    const { status, body } = await probe(request);
    if (status !== 200 || (body as { errors?: unknown } | null)?.errors !== undefined)
      throw new Error(`${request.url} answered ${status}: ${JSON.stringify(body)}`);
  }
}

/**
 * What tracing costs: the same requests to the full stack with tracing off (the default), then to
 * the full stack with tracing on. Measured one after the other, not interleaved: once tracing is on,
 * its context manager (AsyncLocalStorage) makes every await of the process dearer (Node 20), so a
 * stack without tracing measured at the same time would not show what tracing off costs.
 */
export const tracingSuite: Suite = {
  name: 'Tracing',
  notes: [
    '"tracing on" rows: the full stack built after startTracing() with every span sampled (parentbased_always_on), sent through a BatchSpanProcessor into an exporter that drops them; OTLP serialisation and its network are left out. A GET proxy request makes 3 spans (HTTP, operation, SQL), products(first: 10) 5 (HTTP, parse, validate, execution, SQL).',
    '"tracing off" rows: the full stack as without OTEL_* variables, in a process where tracing never started. The off rows are measured first and the on rows after them (not interleaved: tracing\'s AsyncLocalStorage slows every await of the process, so off rows measured while it is on would hide that cost).',
  ],
  async run(context) {
    const { fixture, teardown, measure, log } = context;
    const off = casesFor(await startFullStack(fixture, teardown), fixture.apiKey, fixture.proxyKey);
    await checkAnswers(off.map((c) => c.request));
    log('tracing: measuring the full stack with tracing off');
    const offResults = await measure(off.map((c) => c.request));

    const { server, tracing } = await startTracedStack(context);
    try {
      const on = casesFor(server, fixture.apiKey, fixture.proxyKey);
      await checkAnswers(on.map((c) => c.request));
      log('tracing: measuring the full stack with tracing on');
      const onResults = await measure(on.map((c) => c.request));
      return off.flatMap(({ name }, index): Measurement[] => [
        { id: `tracing.${index}.off`, label: `${name}: full stack, tracing off`, result: offResults[index]! },
        {
          id: `tracing.${index}.on`,
          label: `${name}: full stack, tracing on`,
          baselines: [`tracing.${index}.off`],
          result: onResults[index]!,
        },
      ]);
    } finally {
      // The suites after this one measure stacks built with tracing off.
      await tracing.shutdown();
    }
  },
};
