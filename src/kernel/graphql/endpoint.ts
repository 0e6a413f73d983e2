import { EnvelopArmor } from '@escape.tech/graphql-armor';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { getIntrospectionQuery, graphqlSync, NoSchemaIntrospectionCustomRule, type GraphQLError } from 'graphql';
import { createYoga, type Plugin } from 'graphql-yoga';
import type { Principal } from '../../modules/auth/scopes';
import type { Services } from '../../services';
import { AppError } from '../errors';
import type { GraphQLContext } from './context';
import { createErrorMask } from './errors';
import { buildSchema } from './schema';

declare module 'fastify' {
  interface FastifyRequest {
    principal: Principal | null;
  }
}

/** Limits every operation must stay within; documented in the README. */
export const GRAPHQL_LIMITS = { maxDepth: 10, maxAliases: 15, maxCost: 5000, maxTokens: 2000, maxDirectives: 20 };

/** Introspection is answered only at GET /graphql?private=1; POSTed operations may not introspect. */
const noIntrospection: Plugin = {
  onValidate({ addValidationRule }) {
    addValidationRule(NoSchemaIntrospectionCustomRule);
  },
};

/**
 * Yoga's error mask sees thrown errors and execution errors, but not the errors that validation
 * returns (unknown fields, introspection, wrong literal types): map those through it too, so every
 * error carries one of our codes and answers HTTP 200.
 */
const maskValidationErrors = (mask: (error: unknown) => GraphQLError): Plugin => ({
  onValidate() {
    return ({ valid, result, setResult }) => {
      if (!valid) setResult(result.map(mask));
    };
  },
});

/**
 * Mounts graphql-yoga at POST /graphql inside Fastify (measured faster than yoga's own node:http
 * adapter; see bench/). The bearer credential is verified before yoga runs, so a bad token is an
 * HTTP 401 and never reaches execution.
 */
export function mountGraphQL(app: FastifyInstance, services: Services) {
  const schema = buildSchema();
  const armor = new EnvelopArmor({
    maxDepth: { n: GRAPHQL_LIMITS.maxDepth },
    maxAliases: { n: GRAPHQL_LIMITS.maxAliases },
    costLimit: { maxCost: GRAPHQL_LIMITS.maxCost },
    maxTokens: { n: GRAPHQL_LIMITS.maxTokens },
    maxDirectives: { n: GRAPHQL_LIMITS.maxDirectives },
    blockFieldSuggestion: { enabled: true },
  }).protect();

  const maskError = createErrorMask((error) => app.log.error({ err: error }, 'graphql resolver error'));
  const yoga = createYoga<{ req: FastifyRequest; reply: FastifyReply }, GraphQLContext>({
    schema,
    graphqlEndpoint: '/graphql',
    graphiql: false,
    landingPage: false,
    logging: false,
    maskedErrors: { maskError },
    plugins: [...armor.plugins, noIntrospection, maskValidationErrors(maskError)],
    context: ({ req }) => ({ principal: req.principal!, services, requestId: req.id }),
  });

  let introspection: unknown;
  const authenticate = async (request: FastifyRequest) => {
    request.principal = await services.authenticator.authenticate(request.headers.authorization);
  };

  app.decorateRequest('principal', null);
  app.route({
    method: 'POST',
    url: '/graphql',
    preHandler: authenticate,
    handler: async (request, reply) => {
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
    preHandler: authenticate,
    handler: async (request, reply) => {
      if ((request.query as Record<string, unknown>).private !== '1') {
        throw new AppError('METHOD_NOT_ALLOWED', 'operations use POST; GET /graphql?private=1 returns the introspection', {
          headers: { Allow: 'POST' },
        });
      }
      introspection ??= graphqlSync({ schema, source: getIntrospectionQuery({ descriptions: true }) });
      return reply.send(introspection);
    },
  });
}
