/**
 * What the rest of the service uses of tracing: whether it is on, and spans around work. Every
 * function here does nothing (or returns its argument) while tracing is off, so that code paths
 * pay one check for it.
 */
import {
  context,
  propagation,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  type Attributes,
  type Span,
  type Tracer,
} from '@opentelemetry/api';
import { ATTR_ERROR_TYPE } from '@opentelemetry/semantic-conventions';
import { AppError } from '../errors';

let current: Tracer | undefined;

/** The service's tracer while tracing is on (see setup.ts); undefined when it is off. */
export const activeTracer = (): Tracer | undefined => current;

/** Called by the setup only. */
export function setActiveTracer(tracer: Tracer | undefined): void {
  current = tracer;
}

/**
 * Marks `span` failed by `error`, unless the error is an expected answer (an AppError below 500,
 * such as OUT_OF_STOCK or NOT_FOUND), which only names its code.
 */
export function recordFailure(span: Span, error: unknown): void {
  if (error instanceof AppError && error.status < 500) {
    span.setAttribute(ATTR_ERROR_TYPE, error.key);
    return;
  }
  span.recordException(error instanceof Error ? error : String(error));
  span.setAttribute(ATTR_ERROR_TYPE, error instanceof AppError ? error.key : ((error as Error)?.name ?? 'Error'));
  span.setStatus({ code: SpanStatusCode.ERROR, message: error instanceof Error ? error.message : String(error) });
}

/** Ends `span` once `result` settles, recording a failure; resolves or rejects as `result` does. */
export function endWhenSettled<T>(span: Span, result: Promise<T>): Promise<T> {
  return result.then(
    (value) => {
      span.end();
      return value;
    },
    (error: unknown) => {
      recordFailure(span, error);
      span.end();
      throw error;
    },
  );
}

/**
 * `handler` run in a span of its own named `name` (a child of the span active when it is called),
 * or `handler` itself when tracing is off when this is called (at start-up).
 */
export function traced<A extends unknown[], R>(
  name: string,
  attributes: Attributes,
  handler: (...args: A) => Promise<R>,
): (...args: A) => Promise<R> {
  const tracer = current;
  if (!tracer) return handler;
  return (...args) => tracer.startActiveSpan(name, { attributes }, (span) => endWhenSettled(span, handler(...args)));
}

/**
 * Runs `work` in a span named `name`: a child of the trace context `parent` (a W3C `traceparent`
 * kept from an earlier request) when it is given, otherwise of the active span. Without tracing,
 * just runs `work`.
 */
export function inSpan<T>(
  name: string,
  options: { kind?: SpanKind; attributes?: Attributes; parent?: string | null },
  work: () => Promise<T>,
): Promise<T> {
  const tracer = current;
  if (!tracer) return work();
  const parent =
    typeof options.parent === 'string'
      ? propagation.extract(ROOT_CONTEXT, { traceparent: options.parent })
      : context.active();
  return tracer.startActiveSpan(name, { kind: options.kind, attributes: options.attributes }, parent, (span) =>
    endWhenSettled(span, work()),
  );
}

/** The W3C `traceparent` of a span (version 00). */
export function traceparentOf(span: Span): string {
  const { traceId, spanId, traceFlags } = span.spanContext();
  return `00-${traceId}-${spanId}-${traceFlags.toString(16).padStart(2, '0')}`;
}

/**
 * pino's `mixin` while tracing is on: every log line written in a span names its trace and span,
 * so that the lines of one request can be found from its trace and the other way round.
 */
export function traceLogMixin(): (() => object) | undefined {
  if (!current) return undefined;
  return () => {
    const span = trace.getSpan(context.active());
    // A new object each time: pino merges the line's own fields into it.
    if (!span) return {};
    const { traceId, spanId } = span.spanContext();
    return { trace_id: traceId, span_id: spanId };
  };
}
