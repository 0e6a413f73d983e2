import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import addFormats from 'ajv-formats';
import { OpenAPIBackend, type Context } from 'openapi-backend';
import { precompileRouting } from './operation-matcher';
import type { ZodType } from 'zod';
import type { Principal } from '../principal';
import { AppError, badRequest } from '../errors';
import { isFormRequest, parseFormBody } from './form-body';
import { buildOpenApiDocument } from './openapi';
import type { HttpMethod, HttpResult, RestOperation } from './operation';
import { requestValidationError, zodValidationError } from './validation-errors';

const METHODS: HttpMethod[] = ['get', 'post', 'put', 'patch', 'delete'];

const CORS_PREFLIGHT_HEADERS = {
  'Access-Control-Allow-Origin': '*',
  'Access-Control-Allow-Headers': 'Authorization, Content-Type, Accept',
  'Access-Control-Max-Age': '600',
};

const mediaTypeOf = (request: FastifyRequest) =>
  String(request.headers['content-type'] ?? '')
    .split(';')[0]!
    .trim()
    .toLowerCase();

/** Media types whose bodies arrive as strings, for operations that declare them (`bodyMediaTypes`). */
const TEXT_MEDIA_TYPES = ['text/plain', 'text/csv'];
const isTextRequest = (request: FastifyRequest) => TEXT_MEDIA_TYPES.includes(mediaTypeOf(request));

/** A bearer-optional operation's caller: the principal, null without a credential, a 401 for a bad one. */
function optionalPrincipal(c: Context, request: FastifyRequest) {
  const result = c.security?.bearerAuth as { error?: unknown } | undefined;
  if (result && typeof result === 'object' && 'error' in result) {
    if (request.headers.authorization !== undefined)
      throw result.error instanceof AppError ? result.error : new AppError('UNAUTHORIZED');
    return null;
  }
  return result ?? null;
}

function parseWith(schema: ZodType | undefined, value: unknown, section: string, code?: string) {
  if (!schema) return undefined;
  const result = schema.safeParse(value ?? {});
  if (!result.success) throw zodValidationError(result.error, section, code);
  return result.data;
}

/**
 * Mounts every REST operation under /api: openapi-backend routes by `operationId`, authenticates
 * and validates against the generated OpenAPI document, then the zod schemas parse the request
 * into the handler's typed input.
 */
export interface RestSecurity {
  /** Verifies a tenant credential: the caller, or an UNAUTHORIZED AppError. */
  authenticate(authorization: string | undefined): Promise<Principal>;
  isMasterKey(authorization: string | undefined): boolean;
}

export async function mountRestApi<TServices>(
  app: FastifyInstance,
  operations: RestOperation<TServices>[],
  services: TServices,
  security: RestSecurity,
) {
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
    const methods = METHODS.filter((method) => api.matchOperation({ method, path, headers: {} })).map((m) =>
      m.toUpperCase(),
    );
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
      const code = operations.find(
        (operation) => operation.operationId === c.operation?.operationId,
      )?.validationErrorCode;
      throw requestValidationError(c.validation.errors as never, code);
    },
  });
  api.registerSecurityHandler('bearerAuth', (_c: Context, request: FastifyRequest) =>
    security.authenticate(request.headers.authorization),
  );
  api.registerSecurityHandler('masterKey', (_c: Context, request: FastifyRequest) => {
    if (!security.isMasterKey(request.headers.authorization)) {
      throw new AppError('UNAUTHORIZED', 'the admin API needs the master key');
    }
    return true;
  });
  for (const operation of operations) {
    api.register(operation.operationId, (c: Context, request: FastifyRequest) => {
      const text =
        typeof c.request.requestBody === 'string' && isTextRequest(request)
          ? { mediaType: mediaTypeOf(request), text: c.request.requestBody }
          : undefined;
      return operation.handler({
        params: parseWith(operation.params, c.request.params, 'path', operation.validationErrorCode),
        query: parseWith(operation.query, c.request.query, 'query', operation.validationErrorCode),
        body: text
          ? undefined
          : parseWith(operation.body, c.request.requestBody, 'body', operation.validationErrorCode),
        textBody: text,
        principal: c.security?.bearerAuth,
        optionalPrincipal: operation.security === 'bearer-optional' ? optionalPrincipal(c, request) : null,
        request,
        services,
      } as never);
    });
  }
  await api.init();
  precompileRouting(api);

  const byId = new Map(operations.map((operation) => [operation.operationId, operation]));
  const operationOf = (method: string, path: string) => {
    const matched = api.matchOperation({ method, path, headers: {} }) as { operationId?: string } | undefined;
    return matched?.operationId ? byId.get(matched.operationId) : undefined;
  };
  const hasCors = operations.some((operation) => operation.cors);
  const corsMethods = (path: string) =>
    METHODS.filter((method) => operationOf(method, path)?.cors).map((m) => m.toUpperCase());

  const handle = async (request: FastifyRequest, reply: FastifyReply) => {
    const queryStart = request.url.indexOf('?');
    // HEAD is GET without the body (Node drops it), as HTTP requires wherever GET works.
    const method = request.method === 'HEAD' ? 'GET' : request.method;
    const path = queryStart === -1 ? request.url : request.url.slice(0, queryStart);
    if (hasCors) {
      if (method === 'OPTIONS') {
        const allowed = corsMethods(path);
        if (allowed.length > 0) {
          const methods = allowed.includes('GET') ? [...allowed, 'HEAD'] : allowed;
          return reply
            .status(204)
            .headers({ ...CORS_PREFLIGHT_HEADERS, 'Access-Control-Allow-Methods': methods.join(', ') })
            .send();
        }
      } else if (operationOf(method, path)?.cors) {
        // Set before the operation runs, so that error responses carry it too.
        reply.header('Access-Control-Allow-Origin', '*');
      }
    }
    let body = request.body;
    if (typeof body === 'string' && isTextRequest(request))
      body = decodeTextBody(operationOf(method, path), request, body);
    // A form body carries the members of `data`: validated and parsed as the JSON body would be.
    if (isFormRequest(request)) body = { data: body };
    const result: HttpResult = await api.handleRequest(
      {
        method,
        path,
        query: request.query as Record<string, string | string[]>,
        headers: request.headers as Record<string, string | string[]>,
        body,
      },
      request,
      reply,
    );
    reply.status(result.status);
    if (result.headers) reply.headers(result.headers);
    return result.body === undefined ? reply.send() : reply.send(result.body);
  };
  // Text bodies are accepted only where an operation declares their media type; encapsulated so the
  // parser applies to /api alone.
  await app.register(async (scope) => {
    scope.addContentTypeParser(TEXT_MEDIA_TYPES, { parseAs: 'string' }, (request, body, done) => {
      const queryStart = request.url.indexOf('?');
      const operation = operationOf(request.method, queryStart === -1 ? request.url : request.url.slice(0, queryStart));
      if (!operation?.bodyMediaTypes?.[mediaTypeOf(request)])
        return done(new AppError('UNSUPPORTED_MEDIA_TYPE'), undefined);
      done(null, body);
    });
    scope.route({
      method: ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'],
      url: '/api/*',
      handler: handle,
    });
  });
  // Operations that also take a form body get their own route in a scope that parses forms; every
  // other route keeps answering such bodies with 415.
  const formOperations = operations.filter((operation) => operation.acceptsForm);
  if (formOperations.length > 0) {
    await app.register(async (scope) => {
      scope.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, parseFormBody);
      for (const operation of formOperations) {
        scope.route({
          method: operation.method.toUpperCase() as 'POST',
          url: operation.path.replace(/\{([^}]+)\}/g, ':$1'),
          handler: handle,
        });
      }
    });
  }
}

/** A text body of a declared media type: JSON under another name is parsed, true text passes as is. */
function decodeTextBody(operation: RestOperation<unknown> | undefined, request: FastifyRequest, body: string): unknown {
  const media = operation?.bodyMediaTypes?.[mediaTypeOf(request)];
  if (!media) throw new AppError('UNSUPPORTED_MEDIA_TYPE');
  if (media.kind === 'text') return body;
  try {
    return JSON.parse(body);
  } catch {
    throw badRequest('the request body is not valid JSON', [{ field: 'body', message: 'is not valid JSON' }]);
  }
}
