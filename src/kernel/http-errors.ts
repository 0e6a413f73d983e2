import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { errorBody } from './envelope';
import { AppError, badRequest, errorRegistry } from './errors';

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

export function installErrorHandling(app: FastifyInstance) {
  app.setErrorHandler((error, request, reply) => sendError(error, request, reply));
  app.setNotFoundHandler((request, reply) => sendError(new AppError('NOT_FOUND', 'no such path'), request, reply));
}
