import type { FastifyBaseLogger, FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { errorBody } from './envelope';
import type { Socket } from 'node:net';
import { STATUS_CODES, type ServerResponse } from 'node:http';
import { AppError, badRequest, errorRegistry } from './errors';
import { uuidv7 } from './ids';
import { allowedMethodsAt } from './rest/path-methods';

/**
 * The longest path segment the router takes (signed click codes carry a whole URL); the default of
 * 100 characters would refuse those.
 */
export const MAX_PATH_SEGMENT_LENGTH = 16_384;

/** Maps Fastify's own request errors (body parsing, limits) onto the error registry. */
export function toAppError(error: unknown): AppError | null {
  if (error instanceof AppError) return error;
  const e = error as FastifyError;
  switch (e?.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new AppError('PAYLOAD_TOO_LARGE');
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new AppError('UNSUPPORTED_MEDIA_TYPE');
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return badRequest('the request body is empty', [{ field: 'body', message: 'is empty' }]);
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return badRequest('the request body is not valid JSON', [{ field: 'body', message: 'is not valid JSON' }]);
    case 'FST_ERR_BAD_URL':
      return badRequest('the path is not valid percent-encoded UTF-8', [
        { field: 'path', message: 'is not valid percent-encoded UTF-8' },
      ]);
    case 'FST_ERR_MAX_PARAM_LENGTH':
      return badRequest(`a path segment is longer than ${MAX_PATH_SEGMENT_LENGTH} characters`, [
        { field: 'path', message: `has a segment longer than ${MAX_PATH_SEGMENT_LENGTH} characters` },
      ]);
  }
  if (error instanceof SyntaxError && e.statusCode === 400) {
    return badRequest('the request body is not valid JSON', [{ field: 'body', message: 'is not valid JSON' }]);
  }
  if (typeof e?.statusCode === 'number' && e.statusCode >= 400 && e.statusCode < 500) {
    return badRequest(e.message);
  }
  return null;
}

const isGraphQLPath = (request: FastifyRequest) => request.url === '/graphql' || request.url.startsWith('/graphql?');

/**
 * The single place where errors become responses: the REST envelope everywhere, or a GraphQL
 * `errors` array on /graphql. Unknown errors are logged with the request id and masked.
 */
export function sendError(error: unknown, request: FastifyRequest, reply: FastifyReply) {
  let appError = toAppError(error);
  if (!appError) {
    request.log.error({ err: error, requestId: request.id }, 'unhandled error');
    appError = new AppError('INTERNAL');
  }
  for (const [name, value] of Object.entries(appError.headers)) reply.header(name, value);
  reply.status(appError.status);
  if (isGraphQLPath(request)) {
    return reply.send({
      errors: [{ message: appError.message, extensions: { code: errorRegistry[appError.key].graphqlCode } }],
    });
  }
  return reply.send(errorBody(appError.status, appError.message, appError.details));
}

/**
 * `sendError` for a request answered on the raw node:http server, outside Fastify: the same
 * envelope, status and headers. Returns the status sent.
 */
export function sendRawError(
  log: FastifyBaseLogger,
  response: ServerResponse,
  error: unknown,
  requestId: string,
  headers: Record<string, string> = {},
): number {
  let appError = toAppError(error);
  if (!appError) {
    log.error({ err: error, requestId }, 'unhandled error');
    appError = new AppError('INTERNAL');
  }
  if (response.headersSent) {
    // The answer had begun (a body streaming through): all that is left is to cut it short.
    response.destroy();
    return appError.status;
  }
  const body = JSON.stringify(errorBody(appError.status, appError.message, appError.details));
  response.writeHead(appError.status, {
    ...headers,
    ...appError.headers,
    'content-type': 'application/json; charset=utf-8',
    'content-length': String(Buffer.byteLength(body)),
    'x-request-id': requestId,
  });
  response.end(body);
  return appError.status;
}

/**
 * Fastify's `frameworkErrors`: errors of the router, before any route or hook runs (a path that is
 * not valid percent-encoding, a segment over the limit), in the envelope like any other.
 */
export function sendFrameworkError(error: FastifyError, request: FastifyRequest, reply: FastifyReply) {
  reply.header('X-Request-Id', request.id);
  return sendError(error, request, reply);
}

/**
 * Fastify's `clientErrorHandler`: a request Node's HTTP parser refuses (malformed request line or
 * headers, headers over the size limit, a request not received in time) never reaches Fastify, so
 * its answer is written on the socket here, in the envelope, with a request id of its own.
 */
export function answerClientError(error: Error & { code?: string; rawPacket?: unknown }, socket: Socket) {
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  const allow = error.code === 'HPE_INVALID_METHOD' ? allowOfUnknownMethod(error.rawPacket, socket) : undefined;
  const [status, message] =
    error.code === 'HPE_HEADER_OVERFLOW'
      ? [431, 'Request header fields too large: the request line and headers exceed 16 KiB']
      : error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? [408, 'Request timeout: the request was not received in time']
        : allow
          ? [405, errorRegistry.METHOD_NOT_ALLOWED.message]
          : [400, 'Bad request: the request is not valid HTTP/1.1'];
  const body = JSON.stringify(errorBody(status, message));
  if (socket.writable) {
    socket.write(
      `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: application/json\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\nX-Request-Id: ${uuidv7()}\r\n` +
        `${allow ? `Allow: ${allow}\r\n` : ''}Connection: close\r\n\r\n${body}`,
    );
  }
  socket.destroy(error);
}

/**
 * The `Allow` of the documented path in a request line whose method Node's parser does not know
 * (`FOO /api/x HTTP/1.1`): such a method is a 405 there as any other method the path lacks.
 */
function allowOfUnknownMethod(rawPacket: unknown, socket: Socket): string | undefined {
  if (!Buffer.isBuffer(rawPacket)) return undefined;
  const line = rawPacket
    .subarray(0, Math.min(rawPacket.length, 16 * 1024))
    .toString('latin1')
    .split('\r\n', 1)[0]!;
  const match = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+ (\S+) HTTP\/1\.[01]$/.exec(line);
  return match ? allowedMethodsAt((socket as Socket & { server?: object }).server, match[1]!) : undefined;
}

export function installErrorHandling(app: FastifyInstance) {
  app.setErrorHandler((error, request, reply) => sendError(error, request, reply));
  app.setNotFoundHandler((request, reply) => sendError(new AppError('NOT_FOUND', 'no such path'), request, reply));
  // A documented path asked with a method it has no route for (TRACE, QUERY, HEAD without GET) is a
  // 405, answered before any body is read (Fastify would refuse a QUERY without a body first).
  app.addHook('onRequest', async (request) => {
    if (!request.is404) return;
    const allow = allowedMethodsAt(app.server, request.url);
    if (allow) throw new AppError('METHOD_NOT_ALLOWED', undefined, { headers: { Allow: allow } });
    // Anywhere else a 404 as for any method (not Fastify's 400 for a QUERY without a media type).
    if (request.method === 'QUERY') throw new AppError('NOT_FOUND', 'no such path');
  });
}
