import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import addFormats from 'ajv-formats';
import { OpenAPIBackend, type Context } from 'openapi-backend';
import type { ZodType } from 'zod';
import type { Services } from '../../services';
import { AppError } from '../errors';
import { buildOpenApiDocument } from './openapi';
import type { HttpMethod, HttpResult, RestOperation } from './operation';
import { requestValidationError, zodValidationError } from './validation-errors';

const METHODS: HttpMethod[] = ['get', 'post', 'put', 'patch', 'delete'];

function parseWith(schema: ZodType | undefined, value: unknown, section: string) {
  if (!schema) return undefined;
  const result = schema.safeParse(value ?? {});
  if (!result.success) throw zodValidationError(result.error, section);
  return result.data;
}

/**
 * Mounts every REST operation under /api: openapi-backend routes by `operationId`, authenticates
 * and validates against the generated OpenAPI document, then the zod schemas parse the request
 * into the handler's typed input.
 */
export async function mountRestApi(app: FastifyInstance, operations: RestOperation[], services: Services) {
  const api = new OpenAPIBackend({
    definition: buildOpenApiDocument(operations) as never,
    strict: true,
    validate: true,
    ajvOpts: { strict: false },
    // quick: the document is 3.1, which openapi-backend's own definition check (3.0 only) rejects;
    // test/contract validates it against the 3.1 schema instead. Validators compile on first use.
    quick: true,
    customizeAjv: (ajv) => {
      addFormats(ajv as never);
      return ajv;
    },
  });

  const allowedMethods = (path: string) => {
    const methods = METHODS.filter((method) => api.matchOperation({ method, path, headers: {} })).map((m) => m.toUpperCase());
    return (methods.includes('GET') ? [...methods, 'HEAD'] : methods).join(', ');
  };

  api.register({
    notFound: () => {
      throw new AppError('NOT_FOUND', 'no such path');
    },
    methodNotAllowed: (c: Context) => {
      throw new AppError('METHOD_NOT_ALLOWED', undefined, { headers: { Allow: allowedMethods(c.request.path) } });
    },
    unauthorizedHandler: (c: Context) => {
      const failure = Object.values(c.security ?? {}).find(
        (result): result is { error: unknown } => typeof result === 'object' && result !== null && 'error' in result,
      );
      throw failure?.error instanceof AppError ? failure.error : new AppError('UNAUTHORIZED');
    },
    validationFail: (c: Context) => {
      throw requestValidationError(c.validation.errors as never);
    },
  });
  api.registerSecurityHandler('bearerAuth', (_c: Context, request: FastifyRequest) =>
    services.authenticator.authenticate(request.headers.authorization),
  );
  api.registerSecurityHandler('masterKey', (_c: Context, request: FastifyRequest) => {
    if (!services.authenticator.isMasterKey(request.headers.authorization)) {
      throw new AppError('UNAUTHORIZED', 'the admin API needs the master key');
    }
    return true;
  });
  for (const operation of operations) {
    api.register(operation.operationId, (c: Context, request: FastifyRequest) =>
      operation.handler({
        params: parseWith(operation.params, c.request.params, 'path'),
        query: parseWith(operation.query, c.request.query, 'query'),
        body: parseWith(operation.body, c.request.requestBody, 'body'),
        principal: c.security?.bearerAuth,
        request,
        services,
      } as never),
    );
  }
  await api.init();

  const handle = async (request: FastifyRequest, reply: FastifyReply) => {
    const queryStart = request.url.indexOf('?');
    const result: HttpResult = await api.handleRequest(
      {
        // HEAD is GET without the body (Node drops it), as HTTP requires wherever GET works.
        method: request.method === 'HEAD' ? 'GET' : request.method,
        path: queryStart === -1 ? request.url : request.url.slice(0, queryStart),
        query: request.query as Record<string, string | string[]>,
        headers: request.headers as Record<string, string | string[]>,
        body: request.body,
      },
      request,
      reply,
    );
    reply.status(result.status);
    if (result.headers) reply.headers(result.headers);
    return result.body === undefined ? reply.send() : reply.send(result.body);
  };
  app.route({ method: ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'], url: '/api/*', handler: handle });
}
