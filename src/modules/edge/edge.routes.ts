import { defineOperation } from '../context';
import { z } from '../../kernel/rest/schemas';

export const purgeProxyCache = defineOperation({
  operationId: 'purgeProxyCache',
  method: 'delete',
  path: '/api/storage/edge/proxies/{key}/cache',
  summary: "Purge a proxy's cached responses",
  description:
    'Removes the cached responses of the proxy, or only those whose path starts with `path`. ' +
    'Each service process keeps its own cache: this purges the cache of the process that answers, and the others ' +
    'drop their copies when they expire (see the README on running several processes).',
  tag: 'Edge proxies',
  security: 'bearer',
  scopes: ['proxies:write'],
  params: z.object({ key: z.string().openapi({ description: 'Key of the proxy.' }) }),
  query: z
    .object({
      path: z.string().min(1).max(1024).regex(/^\//, 'must start with "/"').optional().openapi({
        description: 'Only purge responses whose proxy-relative path starts with this prefix, e.g. `/images/`.',
      }),
    })
    .strict(),
  responses: { 204: { description: 'Purged.' } },
  errors: ['BAD_REQUEST', 'FORBIDDEN', 'NOT_FOUND'],
  async handler({ params, query, principal, services }) {
    await services.edge.purgeCache(principal, params.key, query.path);
    return { status: 204 };
  },
});

export const edgeOperations = [purgeProxyCache];
