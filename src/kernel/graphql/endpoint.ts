import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { getIntrospectionQuery, graphqlSync } from 'graphql';
import type { GraphQLSchema } from 'graphql';
import { AppError } from '../errors';
import type { Principal } from '../principal';
import { executeDirectly } from './direct-execution';
import { mountGraphiQLAssets, sendGraphiQL } from './graphiql';
import { createGraphQLServer } from './yoga';

declare module 'fastify' {
  interface FastifyRequest {
    principal: Principal | null;
  }
}

/** `graphql <type> <name>` of a request body, for the metrics: names the client chose only when they are names. */
function operationLabel(body: unknown): string {
  const { query, operationName } = (body ?? {}) as { query?: unknown; operationName?: unknown };
  if (typeof query !== 'string') return 'graphql invalid';
  const head = /^\s*(?:#[^\n]*\n\s*)*(query|mutation|subscription)?\s*([_A-Za-z][_0-9A-Za-z]{0,63})?/.exec(query);
  const name = typeof operationName === 'string' ? operationName : head?.[2];
  const valid = name === undefined || /^[_A-Za-z][_0-9A-Za-z]{0,63}$/.test(name);
  return `graphql ${head?.[1] ?? 'query'} ${valid ? (name ?? 'anonymous') : 'invalid'}`;
}

/**
 * Mounts graphql-yoga at POST /graphql inside Fastify (measured faster than yoga's own node:http
 * adapter; see bench/). The bearer credential is verified before yoga runs, so a bad token is an
 * HTTP 401 and never reaches execution.
 */
export async function mountGraphQL<TContext extends object>(
  app: FastifyInstance,
  options: {
    schema: GraphQLSchema;
    /** Verifies the Authorization header: the caller, or UNAUTHORIZED (TOO_MANY_REQUESTS beyond its limit). */
    authenticate(authorization: string | undefined, request: FastifyRequest): Promise<Principal>;
    /** The resolvers' context of one request. */
    context(principal: Principal, requestId: string): TContext;
  },
) {
  const { schema } = options;
  const yoga = createGraphQLServer<{ req: FastifyRequest; reply: FastifyReply }, TContext>({
    schema,
    context: ({ req }) => options.context(req.principal!, req.id),
    logError: (error) => app.log.error({ err: error }, 'graphql resolver error'),
  });

  let introspection: unknown;
  const authenticate = async (request: FastifyRequest) => {
    request.principal = await options.authenticate(request.headers.authorization, request);
  };

  app.decorateRequest('principal', null);
  await mountGraphiQLAssets(app);
  app.route({
    method: 'POST',
    url: '/graphql',
    preHandler: authenticate,
    handler: async (request, reply) => {
      request.graphqlOperation = operationLabel(request.body);
      const direct = await executeDirectly(
        yoga,
        { body: request.body, accept: request.headers.accept },
        { req: request, reply },
      );
      if (direct)
        return reply
          .status(direct.status)
          .headers(direct.headers)
          .type('application/json; charset=utf-8')
          .send(direct.json);
      const response = await yoga.handleNodeRequestAndResponse(request, reply, { req: request, reply });
      response.headers.forEach((value, name) => {
        reply.header(name, value);
      });
      reply.status(response.status);
      reply.send(response.body);
      return reply;
    },
  });
  app.route({
    method: 'GET',
    url: '/graphql',
    handler: async (request, reply) => {
      const isPrivate = (request.query as Record<string, unknown>).private === '1';
      // A browser opening /graphql gets GraphiQL, which asks for the schema with the key the user enters.
      if (!isPrivate && String(request.headers.accept ?? '').includes('text/html')) return sendGraphiQL(reply);
      await authenticate(request);
      if (!isPrivate) {
        throw new AppError(
          'METHOD_NOT_ALLOWED',
          'operations use POST; GET /graphql?private=1 returns the introspection',
          {
            headers: { Allow: 'POST' },
          },
        );
      }
      introspection ??= graphqlSync({ schema, source: getIntrospectionQuery({ descriptions: true }) });
      return reply.send(introspection);
    },
  });
}
