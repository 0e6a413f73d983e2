/**
 * Mounts the data plane on the HTTP server: `/edge/{key}/{path}` and, with EDGE_DOMAIN, any path
 * on host `{key}.{EDGE_DOMAIN}`, for GET and HEAD and the methods that pass through to the origin.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Readable } from 'node:stream';
import { AppError } from '../../kernel/errors';
import { MAX_PATH_SEGMENT_LENGTH } from '../../kernel/http-errors';
import { requestIdOf } from '../../kernel/ids';
import type { RawAnswerer, RawServerKit } from '../../kernel/module';
import { invalidInput, unstorableTextProblems } from '../../kernel/validation';
import type { Services } from '../context';
import { PROXY_KEY_PATTERN } from '../proxies';
import { PASSED_METHODS, type EdgeRequest, type EdgeResponse } from './edge.types';

export const EDGE_PATH_PREFIX = '/edge/';

/**
 * Fastify's `rewriteUrl`: a request for host `{key}.{domain}` becomes `/edge/{key}{url}`, so that
 * every path on a proxy's own host name reaches the proxy (the API's paths included). Requests for
 * other hosts are not claimed (undefined).
 */
export function rewriteEdgeHost(
  domain: string | undefined,
): ((request: IncomingMessage) => string | undefined) | undefined {
  if (domain === undefined) return undefined;
  const suffix = `.${domain}`;
  return (request) => {
    const url = request.url ?? '/';
    const host = (request.headers.host ?? '').toLowerCase().replace(/:\d+$/, '');
    if (!host.endsWith(suffix)) return undefined;
    const key = host.slice(0, -suffix.length);
    if (!PROXY_KEY_PATTERN.test(key)) return undefined;
    // The proxy's UCP profile is the service's own document, not the origin's.
    if (url.split('?')[0] === '/.well-known/ucp') return `/ucp/${key}/.well-known/ucp`;
    return `${EDGE_PATH_PREFIX}${key}${url.startsWith('/') ? url : `/${url}`}`;
  };
}

/** The proxy-relative path and the raw query of a data-plane URL (`/edge/{key}/{path}?{query}`). */
export function splitEdgeUrl(url: string): { path: string; query: string } {
  const queryStart = url.indexOf('?');
  const pathPart = queryStart === -1 ? url : url.slice(0, queryStart);
  const slash = pathPart.indexOf('/', EDGE_PATH_PREFIX.length);
  return {
    path: slash === -1 ? '/' : pathPart.slice(slash),
    query: queryStart === -1 ? '' : url.slice(queryStart + 1),
  };
}

/** GET or HEAD with a body: Fastify's route bounds and refuses those (413), as for the other methods. */
const hasBody = (request: IncomingMessage) =>
  request.headers['transfer-encoding'] !== undefined ||
  (request.headers['content-length'] !== undefined && request.headers['content-length'] !== '0');

/** Whether the path's percent-escapes decode; Fastify's router refuses the others with a 400. */
function decodes(path: string): boolean {
  if (!path.includes('%')) return true;
  try {
    decodeURIComponent(path);
    return true;
  } catch {
    return false;
  }
}

/** The request as the service takes it, from what the HTTP layer knows. */
function edgeRequestOf(
  request: IncomingMessage,
  parts: { key: string; method: string; url: string; requestId: string; body?: Readable },
): EdgeRequest {
  return {
    key: parts.key,
    method: parts.method,
    body: parts.body,
    ...splitEdgeUrl(parts.url),
    headers: request.headers,
    originalUrl: request.url ?? '/',
    clientAddress: request.socket.remoteAddress ?? '',
    protocol: (request.socket as { encrypted?: boolean }).encrypted === true ? 'https' : 'http',
    host: request.headers.host ?? '',
    requestId: parts.requestId,
  };
}

/** Writes an answer of the service on the raw response. */
function writeAnswer(response: ServerResponse, method: string, answer: EdgeResponse, requestId: string): void {
  const { headers, body } = answer;
  headers['x-request-id'] = requestId;
  if (Buffer.isBuffer(body)) {
    headers['content-length'] = String(body.length);
    response.writeHead(answer.status, headers);
    response.end(method === 'HEAD' ? undefined : body);
    return;
  }
  response.writeHead(answer.status, headers);
  if (body === undefined) return void response.end();
  // A failure on either side ends both: the client's answer is cut short, the origin's body stops.
  // (pipe and two listeners: stream.pipeline's AbortController costs a DOMException per request.)
  body.once('error', () => response.destroy());
  response.once('close', () => body.readableEnded || body.destroy());
  body.pipe(response);
}

/**
 * Serves GET and HEAD of `/edge/{key}/...` and `{key}.{EDGE_DOMAIN}` on the raw server, before
 * Fastify routes the request: a cached hit is answered at once from memory, anything else
 * (misses, tokens, signatures, errors) by the service, with errors in the envelope. Requests the
 * router would refuse (bodies, undecodable or overlong paths, keys that cannot be a proxy's) go on
 * to the Fastify routes below, which answer them as for the other methods.
 */
export function answerOnRawServer(services: Services, kit: RawServerKit): RawAnswerer {
  const onHost = rewriteEdgeHost(services.config.edge.domain);
  const { edge } = services;
  return (request, response) => {
    const method = request.method!;
    if (method !== 'GET' && method !== 'HEAD') return false;
    const url = onHost?.(request) ?? request.url ?? '/';
    if (!url.startsWith(EDGE_PATH_PREFIX) || url.length > MAX_PATH_SEGMENT_LENGTH || hasBody(request)) return false;
    const keyEnd = url.slice(EDGE_PATH_PREFIX.length).search(/[/?]/);
    const key = url.slice(EDGE_PATH_PREFIX.length, keyEnd === -1 ? undefined : EDGE_PATH_PREFIX.length + keyEnd);
    if (!PROXY_KEY_PATTERN.test(key)) return false;
    const { path, query } = splitEdgeUrl(url);
    if (!decodes(path)) return false;
    const start = performance.now();
    const requestId = requestIdOf(request.headers['x-request-id']);
    const hit = edge.answerFromCache({ key, method, url, path, query, headers: request.headers });
    if (hit) {
      hit.headers.push('x-request-id', requestId);
      response.writeHead(hit.status, hit.headers);
      response.end(method === 'HEAD' ? undefined : hit.body);
      edge.stats.record('HIT', hit.body);
      kit.recordAnswer('edge', hit.status, (performance.now() - start) / 1000);
      return true;
    }
    kit.trackInFlight(response);
    response.once('close', () => kit.recordAnswer('edge', response.statusCode, (performance.now() - start) / 1000));
    edge.serve(edgeRequestOf(request, { key, method, url, requestId })).then(
      (answer) => {
        edge.stats.record(String(answer.headers['x-cache'] ?? 'MISS'), answer.body);
        writeAnswer(response, method, answer, requestId);
      },
      (error: unknown) => {
        edge.stats.record('MISS', undefined);
        kit.sendError(response, error, requestId, { 'x-cache': 'MISS' });
      },
    );
    return true;
  };
}

/** What the data plane answers: GET and HEAD (cached), and the methods that pass through. */
const SERVED_METHODS = ['GET', 'HEAD', ...PASSED_METHODS];

export async function mountEdgeDataPlane(app: FastifyInstance, services: Services) {
  const { maxRequestBytes } = services.config.edge;
  const serve = async (request: FastifyRequest<{ Params: { key: string } }>, reply: FastifyReply) => {
    // Every data-plane answer says how the cache took part, errors included.
    reply.header('x-cache', 'MISS');
    // The key is looked up in the database: the text rule holds for it as for every API input.
    const problems = unstorableTextProblems({ key: request.params.key }, 'path');
    if (problems.length > 0) throw invalidInput(problems);
    const declared = Number(request.headers['content-length'] ?? 0);
    if (declared > maxRequestBytes) {
      throw new AppError('EDGE_PAYLOAD_TOO_LARGE', `the edge takes request bodies of up to ${maxRequestBytes} bytes`);
    }
    const result = await services.edge.serve(
      edgeRequestOf(request.raw, {
        key: request.params.key,
        method: request.method,
        url: request.url,
        requestId: request.id,
        body: request.method === 'GET' || request.method === 'HEAD' ? undefined : request.raw,
      }),
    );
    reply.status(result.status).headers(result.headers);
    services.edge.stats.record(String(result.headers['x-cache'] ?? 'MISS'), result.body);
    return result.body === undefined ? reply.send() : reply.send(result.body);
  };
  const refuseMethod = async () => {
    throw new AppError('METHOD_NOT_ALLOWED', `the edge serves ${SERVED_METHODS.join(', ')}`, {
      headers: { Allow: SERVED_METHODS.join(', ') },
    });
  };
  const otherMethods = app.supportedMethods.filter((method) => !SERVED_METHODS.includes(method));
  await app.register(async (edge) => {
    // Request bodies are the origin's to read: they stream through as they arrive, whatever their type.
    edge.removeAllContentTypeParsers();
    edge.addContentTypeParser('*', (_request, _payload, done) => done(null));
    for (const url of ['/edge/:key', '/edge/:key/*']) {
      edge.route({ method: SERVED_METHODS, url, handler: serve, config: { metricsLabel: 'edge' } });
      edge.route({ method: otherMethods, url, handler: refuseMethod, config: { metricsLabel: 'edge' } });
    }
  });
}
