import { useGraphQlJit } from '@envelop/graphql-jit';
import { EnvelopArmor } from '@escape.tech/graphql-armor';
import { LRUCache } from 'lru-cache';
import { NoSchemaIntrospectionCustomRule, type GraphQLError, type GraphQLSchema } from 'graphql';
import { createYoga, type Plugin, type YogaInitialContext } from 'graphql-yoga';
import { activeTracer } from '../tracing/spans';
import { useTracing } from '../tracing/graphql';
import { documentDepthLimit } from './document-depth';
import { createErrorMask } from './errors';

/** Limits every operation must stay within; documented in docs/reference/limits.md. */
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
 * graphql-yoga as this service runs it: operation limits, no introspection, every error mapped to
 * our codes. `context` turns the server's request context into the resolvers' context.
 */
export function createGraphQLServer<ServerContext extends Record<string, unknown>, TContext extends object>(options: {
  schema: GraphQLSchema;
  context: (initial: YogaInitialContext & ServerContext) => TContext;
  logError: (error: unknown) => void;
}) {
  const armor = new EnvelopArmor({
    maxDepth: { n: GRAPHQL_LIMITS.maxDepth },
    maxAliases: { n: GRAPHQL_LIMITS.maxAliases },
    costLimit: { maxCost: GRAPHQL_LIMITS.maxCost },
    maxTokens: { n: GRAPHQL_LIMITS.maxTokens },
    maxDirectives: { n: GRAPHQL_LIMITS.maxDirectives },
    blockFieldSuggestion: { enabled: true },
  }).protect();
  const maskError = createErrorMask(options.logError);
  return createYoga<ServerContext, TContext>({
    schema: options.schema,
    graphqlEndpoint: '/graphql',
    graphiql: false,
    landingPage: false,
    logging: false,
    maskedErrors: { maskError },
    // graphql-jit compiles each operation once into a function; the compiled operations are kept
    // per document, bounded like yoga's own parse and validation caches.
    plugins: [
      documentDepthLimit,
      ...armor.plugins,
      noIntrospection,
      maskValidationErrors(maskError),
      useGraphQlJit({}, { cache: new LRUCache({ max: 1_000 }) }),
      ...(activeTracer() ? [useTracing()] : []),
    ],
    context: options.context,
  });
}
