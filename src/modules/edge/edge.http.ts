/**
 * Mounts the data plane on the HTTP server: `/edge/{key}/{path}` and, with EDGE_DOMAIN, any path
 * on host `{key}.{EDGE_DOMAIN}`, for GET and HEAD and the methods that pass through to the origin.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { IncomingMessage } from 'node:http';
import { AppError } from '../../kernel/errors';
import { requestIdOf } from '../../kernel/ids';
import type { AnswerRecorder, RawAnswerer } from '../../kernel/module';
import { invalidInput, unstorableTextProblems } from '../../kernel/validation';
import type { Services } from '../context';
import { PROXY_KEY_PATTERN } from '../proxies/proxies.schemas';
import { PASSED_METHODS } from './edge.service';

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
    return PROXY_KEY_PATTERN.test(key)
      ? `${EDGE_PATH_PREFIX}${key}${url.startsWith('/') ? url : `/${url}`}`
      : undefined;
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

/**
 * Answers fresh cached hits of `/edge/{key}/...` and `{key}.{EDGE_DOMAIN}` straight from the raw
 * server: the configuration and the entry are in memory and a hit needs no routing, hooks or body
 * parsing. Everything else (misses, tokens, signatures, errors) goes on to the routes below.
 */
export function answerCachedHits(services: Services, recordAnswer: AnswerRecorder): RawAnswerer {
  const onHost = rewriteEdgeHost(services.config.edge.domain);
  const { edge } = services;
  return (request, response) => {
    const method = request.method;
    if (method !== 'GET' && method !== 'HEAD') return false;
    const start = performance.now();
    const url = onHost?.(request) ?? request.url ?? '/';
    if (!url.startsWith(EDGE_PATH_PREFIX)) return false;
    const keyEnd = url.slice(EDGE_PATH_PREFIX.length).search(/[/?]/);
    const key = url.slice(EDGE_PATH_PREFIX.length, keyEnd === -1 ? undefined : EDGE_PATH_PREFIX.length + keyEnd);
    const answer = edge.answerFromCache({ key, method, ...splitEdgeUrl(url), headers: request.headers });
    if (!answer) return false;
    const body = answer.body as Buffer | undefined;
    answer.headers['x-request-id'] = requestIdOf(request.headers['x-request-id']);
    if (body) answer.headers['content-length'] = String(body.length);
    response.writeHead(answer.status, answer.headers);
    response.end(method === 'HEAD' ? undefined : body);
    edge.stats.record('HIT', body);
    recordAnswer('edge', answer.status, (performance.now() - start) / 1000);
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
    const { path, query } = splitEdgeUrl(request.url);
    const result = await services.edge.serve({
      key: request.params.key,
      method: request.method,
      body: request.method === 'GET' || request.method === 'HEAD' ? undefined : request.raw,
      path,
      query,
      headers: request.headers,
      originalUrl: request.originalUrl,
      clientAddress: request.socket.remoteAddress ?? '',
      protocol: request.protocol === 'https' ? 'https' : 'http',
      host: request.headers.host ?? '',
      requestId: request.id,
    });
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
