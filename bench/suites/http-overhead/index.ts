import { isDeepStrictEqual } from 'node:util';
import type { LoadRequest } from '../../lib/load';
import type { Measurement } from '../../lib/report';
import { startFullStack, startNodeServer } from '../../lib/stack';
import { probe, type Suite } from '../../lib/suite';
import { createBareListener, PRODUCTS_PAGE_SIZE, PROXY_PATH_PREFIX } from './bare';
import { createYogaNodeServer } from './yoga-node';

const PRODUCTS_QUERY = `{
  products(first: ${PRODUCTS_PAGE_SIZE}) {
    edges { cursor node { id name sku } }
    pageInfo { hasNextPage hasPreviousPage startCursor endCursor }
  }
}`;

/**
 * What the HTTP stack costs: the full application (Fastify routes from the contract for REST, Fastify +
 * graphql-yoga for GraphQL, with authentication) against a bare node:http handler doing the same
 * database work, and yoga's own node:http adapter against the Fastify mounting.
 */
export const httpOverheadSuite: Suite = {
  name: 'HTTP stack overhead',
  notes: [
    '"bare node:http, no auth" rows are bare node:http handlers running the same Prisma queries and serialisation WITHOUT authentication, routing framework, validation or GraphQL: the floor, not a competitor.',
    'Full-stack rows send "Authorization: Bearer <API key>" and go through buildApp() unchanged (the verified key is cached, so auth is mostly a hash lookup).',
    'yoga-on-node:http gets a fixed principal in its context (no authentication); otherwise it is configured like mountGraphQL.',
  ],
  async run({ fixture, teardown, measure, log }) {
    const full = await startFullStack(fixture, teardown);
    const bare = await startNodeServer(
      createBareListener(fixture.db, fixture.services.cursors, fixture.tenantId),
      'bare server',
      teardown,
    );
    const yogaNode = await startNodeServer(
      createYogaNodeServer(fixture.services, fixture.principal),
      'yoga node:http server',
      teardown,
    );

    const auth = { authorization: `Bearer ${fixture.apiKey}` };
    const proxyPath = `${PROXY_PATH_PREFIX}${fixture.proxyKey}`;
    const graphql = (origin: string, headers: Record<string, string> = {}): LoadRequest => ({
      url: `${origin}/graphql`,
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify({ query: PRODUCTS_QUERY }),
    });
    const cases: (Omit<Measurement, 'result'> & { request: LoadRequest })[] = [
      { id: 'proxy.bare', label: 'GET proxy: bare node:http, no auth', request: { url: `${bare.origin}${proxyPath}` } },
      {
        id: 'proxy.full',
        label: 'GET proxy: full stack (Fastify routes from the contract, zod)',
        request: { url: `${full.origin}${proxyPath}`, headers: auth },
        baselines: ['proxy.bare'],
      },
      {
        id: 'products.bare',
        label: `products(first: ${PRODUCTS_PAGE_SIZE}): bare node:http, no auth`,
        request: graphql(bare.origin),
      },
      {
        id: 'products.yoga-node',
        label: `products(first: ${PRODUCTS_PAGE_SIZE}): yoga on node:http`,
        request: graphql(yogaNode.origin),
        baselines: ['products.bare'],
      },
      {
        id: 'products.full',
        label: `products(first: ${PRODUCTS_PAGE_SIZE}): full stack (yoga in Fastify)`,
        request: graphql(full.origin, auth),
        baselines: ['products.bare', 'products.yoga-node'],
      },
    ];

    await checkResponses(cases, log);

    const results = await measure(cases.map((c) => c.request));
    return cases.map(({ id, label, baselines }, index) => ({ id, label, baselines, result: results[index]! }));
  },
};

/**
 * Sends each request once before loading it: a case that answers an error would measure the
 * error path, so that aborts the run. Rows that answer the same request should answer the same
 * body; a difference is reported (the comparison is then less like-for-like) but does not abort.
 */
async function checkResponses(
  cases: { id: string; request: LoadRequest; baselines?: string[] }[],
  log: (line: string) => void,
) {
  const bodies = new Map<string, unknown>();
  for (const { id, request } of cases) {
    const { status, body } = await probe(request);
    const graphqlErrors = (body as { errors?: unknown } | null)?.errors;
    if (status !== 200 || graphqlErrors !== undefined) {
      throw new Error(`${id}: ${request.method ?? 'GET'} ${request.url} answered ${status}: ${JSON.stringify(body)}`);
    }
    bodies.set(id, body);
  }
  for (const { id, baselines = [] } of cases) {
    for (const baseline of baselines) {
      if (!isDeepStrictEqual(bodies.get(id), bodies.get(baseline))) {
        log(
          `warning: ${id} and ${baseline} answer different bodies:\n  ${JSON.stringify(bodies.get(id))}\n  ${JSON.stringify(bodies.get(baseline))}`,
        );
      }
    }
  }
}
