/**
 * The CLIENT span of a request the service sends (to an edge origin, to a webhook), whose trace
 * context goes with the request (`traceparent`, `tracestate`), so that the receiver's spans join
 * the trace.
 */
import type { OutgoingHttpHeaders } from 'node:http';
import { context, propagation, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import {
  ATTR_HTTP_REQUEST_METHOD,
  ATTR_HTTP_RESPONSE_STATUS_CODE,
  ATTR_SERVER_ADDRESS,
  ATTR_SERVER_PORT,
  ATTR_URL_FULL,
} from '@opentelemetry/semantic-conventions';
import { activeTracer, recordFailure } from './spans';

export interface ClientSpan {
  /** Records the status of the answer and ends the span. */
  answered(status: number): void;
  /** Records why no answer came and ends the span. */
  failed(error: unknown): void;
}

/**
 * Starts the span of one outgoing request and writes its trace context into `headers` (which the
 * request is then sent with). Undefined when tracing is off: the headers are left as they are.
 * The query string is left out of `url.full`: it may carry the client's secrets.
 */
export function startClientSpan(method: string, url: URL, headers: OutgoingHttpHeaders): ClientSpan | undefined {
  const tracer = activeTracer();
  if (!tracer) return undefined;
  const span = tracer.startSpan(method, {
    kind: SpanKind.CLIENT,
    attributes: {
      [ATTR_HTTP_REQUEST_METHOD]: method,
      [ATTR_URL_FULL]: `${url.origin}${url.pathname}`,
      [ATTR_SERVER_ADDRESS]: url.hostname,
      [ATTR_SERVER_PORT]: Number(url.port || (url.protocol === 'https:' ? 443 : 80)),
    },
  });
  propagation.inject(trace.setSpan(context.active(), span), headers);
  return {
    answered(status) {
      span.setAttribute(ATTR_HTTP_RESPONSE_STATUS_CODE, status);
      if (status >= 400) span.setStatus({ code: SpanStatusCode.ERROR });
      span.end();
    },
    failed(error) {
      recordFailure(span, error);
      span.end();
    },
  };
}
