import { single } from '../../../kernel/envelope';
import { singleEnvelope, z } from '../../../kernel/rest/schemas';
import { underField } from '../../../kernel/validation';
import { defineOperation } from '../../context';
import { MAX_RANGE_HOURS } from './analytics.service';

const counts = {
  hits: z.int().openapi({ description: 'Answers from a fresh cached response, or one the origin confirmed (304).' }),
  misses: z.int().openapi({ description: 'Answers fetched from the origin (uncached routes and errors included).' }),
  stale: z.int().openapi({ description: 'Answers from an expired response: while it was refreshed, or on failure.' }),
  bytes_served: z.int().openapi({ description: 'Body bytes sent to clients (as sent: compressed when it was).' }),
  bytes_from_origin: z.int().openapi({ description: 'Body bytes received from the origin.' }),
  origin_errors: z.int().openapi({ description: 'Origin requests that failed or timed out, and 5xx answers.' }),
};

const ProxyAnalyticsOutput = z
  .object({
    from: z.iso.datetime().openapi({ description: 'Start of the range counted: `from` at the start of its hour.' }),
    to: z.iso.datetime().openapi({ description: 'End of the range counted (exclusive): `to` at the end of its hour.' }),
    totals: z.object(counts),
    hours: z.array(
      z.object({ hour: z.iso.datetime().openapi({ description: 'Start of the hour (UTC).' }), ...counts }),
    ),
  })
  .openapi('ProxyAnalytics');

export const getProxyAnalytics = defineOperation({
  operationId: 'getProxyAnalytics',
  method: 'get',
  path: '/api/storage/edge/proxies/{key}/analytics',
  summary: "A proxy's traffic per hour",
  description:
    'Hits, misses, stale answers, bytes served and fetched from the origin, and origin errors of the proxy per hour ' +
    'over the whole hours covering `[from, to)`, every hour listed, with their totals. Every service process counts ' +
    'its answers in memory and writes them in batches every 10 seconds; the answering process writes its own ' +
    `first. At most ${MAX_RANGE_HOURS} hours per request.`,
  tag: 'Edge proxies',
  security: 'bearer',
  scopes: ['proxies:read'],
  params: z.object({ key: z.string().max(63).openapi({ description: 'Key of the proxy.' }) }),
  query: z
    .object({
      from: z.iso.datetime({ offset: true }).optional().openapi({
        description:
          'Start of the range (inclusive), ISO 8601, counted from the start of its hour; default 24 hours before `to`.',
      }),
      to: z.iso.datetime({ offset: true }).optional().openapi({
        description: 'End of the range (exclusive), ISO 8601, counted to the end of its hour; default now.',
      }),
    })
    .strict(),
  responses: { 200: { description: 'The traffic.', schema: singleEnvelope(ProxyAnalyticsOutput) } },
  errors: ['BAD_REQUEST', 'FORBIDDEN', 'NOT_FOUND'],
  async handler({ params, query, principal, services }) {
    return {
      status: 200,
      body: single(await underField('query', () => services.edgeAnalytics.forProxy(principal, params.key, query))),
    };
  },
});
