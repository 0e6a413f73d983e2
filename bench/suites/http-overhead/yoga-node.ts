import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createGraphQLServer } from '../../../src/kernel/graphql/yoga';
import { uuidv7 } from '../../../src/kernel/ids';
import type { Principal } from '../../../src/kernel/principal';
import { buildGraphQLSchema } from '../../../src/app';
import type { GraphQLContext, Services } from '../../../src/modules/context';

/**
 * graphql-yoga served by its own node:http adapter (`createServer(yoga)`), built by the same
 * createGraphQLServer as the Fastify-mounted endpoint, so that comparing the two measures the
 * mounting. The difference that remains: the principal is fixed here, whereas the
 * Fastify route authenticates each request (a cache hit after the first).
 */
export function createYogaNodeServer(services: Services, principal: Principal): Server {
  const yoga = createGraphQLServer<{ req: IncomingMessage; res: ServerResponse }, GraphQLContext>({
    schema: buildGraphQLSchema(),
    // A request id per request, as Fastify's genReqId gives the mounted endpoint.
    context: () => ({ principal, services, requestId: uuidv7() }),
    logError: (error) => console.error('yoga-node resolver error:', error),
  });
  return createServer(yoga);
}
