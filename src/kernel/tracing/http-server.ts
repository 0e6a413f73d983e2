/**
 * The SERVER span of every HTTP request, made where node:http hands the request over (before the
 * raw answerers and Fastify), continuing the client's W3C trace context (`traceparent`,
 * `tracestate`). Fastify names it by route once it has routed the request; a raw answerer is
 * named by the route it declares. (@fastify/otel is not used: it makes a span of every hook of
 * every request, and the edge's raw answers never reach Fastify.)
 */
import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import { context, propagation, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Span } from '@opentelemetry/api';
import {
  ATTR_CLIENT_ADDRESS,
  ATTR_HTTP_REQUEST_METHOD,
  ATTR_HTTP_RESPONSE_STATUS_CODE,
  ATTR_HTTP_ROUTE,
  ATTR_URL_PATH,
  ATTR_URL_SCHEME,
  ATTR_USER_AGENT_ORIGINAL,
} from '@opentelemetry/semantic-conventions';
import type { FastifyInstance } from 'fastify';
import type { RawAnswerer } from '../module';
import { activeTracer } from './spans';

const serverSpans = new WeakMap<IncomingMessage, Span>();

function endServerSpan(span: Span, response: ServerResponse): void {
  span.setAttribute(ATTR_HTTP_RESPONSE_STATUS_CODE, response.statusCode);
  // Answers below 500 are the client's affair; a client that leaves early is not a failure either.
  if (response.statusCode >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
  span.end();
}

/** Whether a body follows the request's head (Fastify then goes on from the request's 'end' event). */
const hasBody = (request: IncomingMessage) =>
  request.headers['transfer-encoding'] !== undefined ||
  (request.headers['content-length'] !== undefined && request.headers['content-length'] !== '0');

/**
 * `listener` with each request served in a span of its own (`listener` itself when tracing is off).
 * The events of a request with a body are bound to the span's context, so that what Fastify does
 * once the body has arrived (hooks, handler, database queries) stays in the request's trace; the
 * rest follows from the listener's call by promises, which keep their context by themselves.
 */
export function traceRequests(listener: RequestListener): RequestListener {
  const tracer = activeTracer();
  if (!tracer) return listener;
  return (request, response) => {
    const method = request.method ?? 'GET';
    const url = request.url ?? '/';
    const queryStart = url.indexOf('?');
    const parent = propagation.extract(ROOT_CONTEXT, request.headers);
    const span = tracer.startSpan(
      method,
      {
        kind: SpanKind.SERVER,
        attributes: {
          [ATTR_HTTP_REQUEST_METHOD]: method,
          [ATTR_URL_PATH]: queryStart === -1 ? url : url.slice(0, queryStart),
          [ATTR_URL_SCHEME]: (request.socket as { encrypted?: boolean }).encrypted === true ? 'https' : 'http',
          [ATTR_CLIENT_ADDRESS]: request.socket.remoteAddress,
          [ATTR_USER_AGENT_ORIGINAL]: request.headers['user-agent'],
        },
      },
      parent,
    );
    const active = trace.setSpan(parent, span);
    serverSpans.set(request, span);
    response.once('close', () => endServerSpan(span, response));
    if (hasBody(request)) context.bind(active, request);
    context.with(active, listener, undefined, request, response);
  };
}

function nameByRoute(request: IncomingMessage, route: string): void {
  const span = serverSpans.get(request);
  if (!span) return;
  span.updateName(`${request.method} ${route}`);
  span.setAttribute(ATTR_HTTP_ROUTE, route);
}

/** Names each request's span `METHOD route` as soon as Fastify has routed it (nothing when tracing is off). */
export function nameSpansByRoute(app: FastifyInstance): void {
  if (!activeTracer()) return;
  app.addHook('onRequest', (request, _reply, done) => {
    const route = request.routeOptions.url;
    if (route !== undefined) nameByRoute(request.raw, route);
    done();
  });
}

/** `answer`, naming the span of each request it answers by `route` (`answer` itself when tracing is off). */
export function tracedRawAnswerer(answer: RawAnswerer, route: string): RawAnswerer {
  if (!activeTracer()) return answer;
  return (request, response) => {
    if (!answer(request, response)) return false;
    nameByRoute(request, route);
    return true;
  };
}
