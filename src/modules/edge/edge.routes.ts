import { defineOperation } from '../context';
import { z } from '../../kernel/rest/schemas';
import { MAX_TAG_BYTES, MAX_TAGS, splitTags, tagProblem } from './cache-tags';
import { getProxyAnalytics } from './analytics/analytics.routes';
import { SOFT_PURGE_STALE_MS } from './edge.service';

const tagList = z
  .string()
  .max(MAX_TAGS * (MAX_TAG_BYTES + 1))
  .superRefine((list, context) => {
    const tags = splitTags(list);
    if (tags.length === 0) context.addIssue({ code: 'custom', message: 'must name at least one tag' });
    if (tags.length > MAX_TAGS) context.addIssue({ code: 'custom', message: `must name at most ${MAX_TAGS} tags` });
    for (const tag of tags) {
      const problem = tagProblem(tag);
      if (problem !== null) return context.addIssue({ code: 'custom', message: `has a tag that ${problem}` });
    }
  });

export const purgeProxyCache = defineOperation({
  operationId: 'purgeProxyCache',
  method: 'delete',
  path: '/api/storage/edge/proxies/{key}/cache',
  summary: "Purge a proxy's cached responses",
  description:
    'Removes cached responses of the proxy in every service process: all of them without parameters, those whose ' +
    'path starts with `path`, those the origin tagged with one of `tag` (`Cache-Tag` or `Surrogate-Key` response ' +
    'headers), or with both parameters those matching both. With `soft=true` they are marked stale instead of ' +
    'removed: the next request for each is answered from it at once (`X-Cache: STALE`) while one request per ' +
    'response and process fetches it again (revalidating with its `ETag` or `Last-Modified`). The process that ' +
    'answers is purged before it answers, the others within a second (through PostgreSQL notifications).',
  tag: 'Edge proxies',
  security: 'bearer',
  scopes: ['proxies:write'],
  params: z.object({ key: z.string().openapi({ description: 'Key of the proxy.' }) }),
  query: z
    .object({
      path: z
        .string()
        .min(1, 'must not be empty (leave it out to purge every path)')
        .max(1024)
        .regex(/^\//, 'must start with "/"')
        .optional()
        .openapi({
          description: 'Only purge responses whose proxy-relative path starts with this prefix, e.g. `/images/`.',
        }),
      tag: tagList.optional().openapi({
        description:
          `Only purge responses carrying one of these tags, separated by commas or spaces, e.g. \`product-1,home\`: ` +
          `at most ${MAX_TAGS} tags of at most ${MAX_TAG_BYTES} bytes each, without control characters.`,
        example: 'product-1,home',
      }),
      soft: z
        .enum(['true', 'false'])
        .optional()
        .openapi({
          description:
            'With `true`, mark the responses stale rather than removing them: they are served (`X-Cache: STALE`) ' +
            `for up to ${SOFT_PURGE_STALE_MS / 1000} seconds, or their stale-while-revalidate window when longer, ` +
            'while they are fetched again once. Default `false`.',
        }),
    })
    .strict(),
  responses: { 204: { description: 'Purged.' } },
  errors: ['BAD_REQUEST', 'FORBIDDEN', 'NOT_FOUND'],
  async handler({ params, query, principal, services }) {
    await services.edge.purgeCache(principal, params.key, {
      path: query.path,
      tags: query.tag === undefined ? undefined : splitTags(query.tag),
      soft: query.soft === 'true',
    });
    return { status: 204 };
  },
});

// Declared beside the rest of the analytics; exported here, where the operations of the module are listed.
export { getProxyAnalytics };

export const edgeOperations = [purgeProxyCache, getProxyAnalytics];
