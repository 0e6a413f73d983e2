/**
 * Spans of a GraphQL operation: `graphql.parse`, `graphql.validate`, and the execution named
 * `<type> <name>` (`mutation addStock`) as the semantic conventions name it, parent of the database
 * spans of its resolvers. An envelop `instrumentation` (envelop 5), so that it wraps the phases
 * for yoga's handler and for the direct execution alike, and sets the context of each.
 * (@envelop/opentelemetry needs the 1.x SDK and adds a span per resolver.)
 */
import { context, trace, type Span } from '@opentelemetry/api';
import { getOperationAST } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { activeTracer, endWhenSettled, recordFailure } from './spans';

const ATTR_GRAPHQL_OPERATION_TYPE = 'graphql.operation.type';
const ATTR_GRAPHQL_OPERATION_NAME = 'graphql.operation.name';

function inSyncSpan(name: string, wrapped: () => void): void {
  const tracer = activeTracer();
  if (!tracer) return wrapped();
  tracer.startActiveSpan(name, (span: Span) => {
    try {
      wrapped();
    } catch (error) {
      recordFailure(span, error);
      throw error;
    } finally {
      span.end();
    }
  });
}

/** The tracing plugin of the GraphQL server (add it only while tracing is on). */
export function useTracing(): Plugin {
  return {
    instrumentation: {
      parse: (_payload, wrapped) => inSyncSpan('graphql.parse', wrapped),
      validate: (_payload, wrapped) => inSyncSpan('graphql.validate', wrapped),
      execute: (_payload, wrapped) => {
        const tracer = activeTracer();
        if (!tracer) return wrapped();
        return tracer.startActiveSpan('graphql.execute', (span) =>
          endWhenSettled(span, new Promise<void>((resolve) => resolve(wrapped()))),
        );
      },
    },
    // Runs inside the execution's span: names it after the operation.
    onExecute({ args }) {
      const span = trace.getSpan(context.active());
      if (!span) return;
      const operation = getOperationAST(args.document, args.operationName);
      const type = operation?.operation ?? 'query';
      const name = operation?.name?.value;
      span.updateName(name ? `${type} ${name}` : type);
      span.setAttribute(ATTR_GRAPHQL_OPERATION_TYPE, type);
      if (name) span.setAttribute(ATTR_GRAPHQL_OPERATION_NAME, name);
    },
  };
}
