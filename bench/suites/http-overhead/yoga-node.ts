import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { EnvelopArmor } from '@escape.tech/graphql-armor';
import { NoSchemaIntrospectionCustomRule } from 'graphql';
import { createYoga, type Plugin } from 'graphql-yoga';
import { GRAPHQL_LIMITS } from '../../../src/kernel/graphql/endpoint';
import type { GraphQLContext } from '../../../src/kernel/graphql/context';
import { createErrorMask } from '../../../src/kernel/graphql/errors';
import { buildSchema } from '../../../src/kernel/graphql/schema';
import { uuidv7 } from '../../../src/kernel/ids';
import type { Principal } from '../../../src/modules/auth/scopes';
import type { Services } from '../../../src/services';

/**
 * graphql-yoga served by its own node:http adapter (`createServer(yoga)`), configured like
 * mountGraphQL in src/kernel/graphql/endpoint.ts (same schema, armor limits, introspection rule
 * and error mask; kept in step by hand) so that comparing it with the Fastify-mounted endpoint
 * measures the mounting. The difference that remains: the principal is fixed here, whereas the
 * Fastify route authenticates each request (a cache hit after the first).
 */
export function createYogaNodeServer(services: Services, principal: Principal): Server {
  const armor = new EnvelopArmor({
    maxDepth: { n: GRAPHQL_LIMITS.maxDepth },
    maxAliases: { n: GRAPHQL_LIMITS.maxAliases },
    costLimit: { maxCost: GRAPHQL_LIMITS.maxCost },
    maxTokens: { n: GRAPHQL_LIMITS.maxTokens },
    maxDirectives: { n: GRAPHQL_LIMITS.maxDirectives },
    blockFieldSuggestion: { enabled: true },
  }).protect();
  const noIntrospection: Plugin = {
    onValidate({ addValidationRule }) {
      addValidationRule(NoSchemaIntrospectionCustomRule);
    },
  };

  const yoga = createYoga<{ req: IncomingMessage; res: ServerResponse }, GraphQLContext>({
    schema: buildSchema(),
    graphqlEndpoint: '/graphql',
    graphiql: false,
    landingPage: false,
    logging: false,
    maskedErrors: { maskError: createErrorMask((error) => console.error('yoga-node resolver error:', error)) },
    plugins: [...armor.plugins, noIntrospection],
    // A request id per request, as Fastify's genReqId gives the mounted endpoint.
    context: () => ({ principal, services, requestId: uuidv7() }),
  });
  return createServer(yoga);
}
