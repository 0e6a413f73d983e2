import fastifyCors, { type FastifyCorsOptions } from '@fastify/cors';
import fastifyFormbody from '@fastify/formbody';
import type { FastifyInstance, FastifyRequest, RouteHandlerMethod, RouteOptions } from 'fastify';
import { OpenAPIBackend } from 'openapi-backend';
import { z, type ZodType } from 'zod';
import { AppError, type FieldProblem } from '../errors';
import { parseClientJson } from '../request-limits';
import type { Principal } from '../principal';
import { fieldProblems, invalidInput, safeParseInput } from '../validation';
import { isFormRequest, parseFormFields } from './form-body';
import { routingDocument } from './openapi';
import { recordPathMethods } from './path-methods';
import type { RestOperation, Security } from './operation';
import { traced } from '../tracing/spans';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The REST operation a route serves, for the body parsers (they run before the handler). */
    restOperation?: RestOperation<unknown>;
    /** Per-route options of `@fastify/cors` (its types do not declare this member). */
    cors?: FastifyCorsOptions;
  }
}

export interface RestSecurity {
  /** Verifies a tenant credential: the caller, or an UNAUTHORIZED AppError (TOO_MANY_REQUESTS beyond its limit). */
  authenticate(authorization: string | undefined, request: FastifyRequest): Promise<Principal>;
  isMasterKey(authorization: string | undefined): boolean;
  /** Counts a request from the client address against an operation's `limitPerAddress`; TOO_MANY_REQUESTS beyond. */
  limitAddress(name: string, perMinute: number, request: FastifyRequest): Promise<void>;
}

type Method = 'GET' | 'HEAD' | 'POST' | 'PUT' | 'PATCH' | 'DELETE' | 'OPTIONS';

/** The methods a path answers 405 to when it lacks them (HEAD follows GET: Fastify adds it to every GET route). */
const METHODS: Method[] = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'];

/** Media types whose bodies arrive as strings, for operations that declare them (`bodyMediaTypes`). */
const TEXT_MEDIA_TYPES = ['text/plain', 'text/csv'];

/**
 * `@fastify/cors` for the whole API: off unless a route turns it on (browser-callable operations
 * do, with their path's methods), the preflight answered for any OPTIONS request of such a path.
 */
const CORS_DEFAULTS: FastifyCorsOptions = {
  origin: false,
  allowedHeaders: 'Authorization, Content-Type, Accept',
  maxAge: 600,
  strictPreflight: false,
};

const NO_QUERY = z.object({}).strict();

/** The span attribute naming the REST operation (its `operationId`). */
const ATTR_OPERATION_ID = 'rest.operation_id';

const mediaTypeOf = (request: FastifyRequest) =>
  String(request.headers['content-type'] ?? '')
    .split(';')[0]!
    .trim()
    .toLowerCase();

/** With HEAD after GET, as HTTP requires wherever GET works. */
const withHead = (methods: Method[]) => (methods.includes('GET') ? [...methods, 'HEAD'] : methods).join(', ');

/**
 * Mounts every REST operation of the contract: one Fastify route per operation (Fastify's router
 * matches in constant time per path segment), each authenticating its caller, then parsing path,
 * query, headers and body with the operation's zod schemas (the schemas `openapi.yaml` is
 * generated from) into the handler's typed input. Every other method of a documented path is a
 * 405 naming the allowed ones (those without a route of their own, TRACE, QUERY and methods Node
 * does not know among them, through `path-methods.ts`); an undocumented path is a 404.
 */
export async function mountRestApi<TServices>(
  app: FastifyInstance,
  operations: RestOperation<TServices>[],
  services: TServices,
  security: RestSecurity,
) {
  const routes = await contractRoutes(operations);
  const byPath = new Map<string, typeof routes>();
  for (const route of routes) byPath.set(route.path, [...(byPath.get(route.path) ?? []), route]);
  const mounted: MountedRoute[] = [];
  const add = (route: RouteOptions, { cors = false, form = false } = {}) => {
    // As openapi-backend routes, a trailing slash names the same path.
    for (const url of [route.url, `${route.url}/`]) mounted.push({ route: { ...route, url }, cors, form });
  };
  for (const [path, pathRoutes] of byPath) {
    const url = path.replace(/\{([^}]+)\}/g, ':$1');
    const methods = pathRoutes.map((route) => route.method);
    const corsMethods = pathRoutes.filter((route) => route.operation.cors).map((route) => route.method);
    const notAllowed: RouteHandlerMethod = async () => {
      throw new AppError('METHOD_NOT_ALLOWED', undefined, { headers: { Allow: withHead(methods) } });
    };
    recordPathMethods(app.server, path, withHead(methods));
    for (const { operation, method } of pathRoutes) {
      const cors = operation.cors ? { origin: '*' } : undefined;
      const config = { restOperation: operation as RestOperation<unknown>, ...(cors ? { cors } : {}) };
      add(
        { method, url, config, handler: serve(operation, services, security) },
        { cors: operation.cors, form: operation.acceptsForm },
      );
    }
    for (const method of METHODS.filter((method) => !methods.includes(method)))
      add({ method, url, handler: notAllowed });
    // A browser-callable path answers the preflight (`@fastify/cors` replies before the handler).
    if (corsMethods.length > 0)
      add(
        {
          method: 'OPTIONS',
          url,
          config: { cors: { origin: '*', methods: withHead(corsMethods) } },
          handler: notAllowed,
        },
        { cors: true },
      );
    else add({ method: 'OPTIONS', url, handler: notAllowed });
  }

  await app.register(async (rest) => {
    // Text bodies are accepted only where an operation declares their media type.
    rest.addContentTypeParser(TEXT_MEDIA_TYPES, { parseAs: 'string' }, (request, body, done) => {
      if (!request.routeOptions.config.restOperation?.bodyMediaTypes?.[mediaTypeOf(request)])
        return done(new AppError('UNSUPPORTED_MEDIA_TYPE'), undefined);
      done(null, body);
    });
    await mountAll(
      rest,
      mounted.filter((route) => !route.cors),
    );
    const corsRoutes = mounted.filter((route) => route.cors);
    if (corsRoutes.length > 0)
      await rest.register(async (scope) => {
        await scope.register(fastifyCors, CORS_DEFAULTS);
        await mountAll(scope, corsRoutes);
      });
  });
}

interface MountedRoute {
  route: RouteOptions;
  cors: boolean;
  form: boolean;
}

/** Adds the routes to `scope`; those that also take form bodies in a child scope that parses them. */
async function mountAll(scope: FastifyInstance, routes: MountedRoute[]) {
  for (const { route } of routes.filter((route) => !route.form)) scope.route(route);
  const formRoutes = routes.filter((route) => route.form);
  if (formRoutes.length === 0) return;
  // Every other route keeps answering form bodies with 415.
  await scope.register(async (forms) => {
    await forms.register(fastifyFormbody, { parser: parseFormFields });
    for (const { route } of formRoutes) forms.route(route);
  });
}

/**
 * The operations of the contract as openapi-backend reads them from the document's paths (method,
 * path, operationId), each joined with the operation that serves it: what is routed is exactly
 * what `openapi.yaml` documents.
 */
async function contractRoutes<TServices>(operations: RestOperation<TServices>[]) {
  const api = new OpenAPIBackend({
    definition: routingDocument(operations) as never,
    // quick: the document is 3.1, which openapi-backend's own definition check (3.0 only) rejects;
    // test/contract validates it against the 3.1 schema instead.
    quick: true,
    validate: false,
  });
  await api.init();
  const byId = new Map(operations.map((operation) => [operation.operationId, operation]));
  return api.getOperations().map(({ operationId, method, path }) => {
    const operation = byId.get(operationId ?? '');
    if (!operation) throw new Error(`the OpenAPI document has ${method} ${path} without an operation serving it`);
    return { operation, method: String(method).toUpperCase() as Method, path };
  });
}

/** Who may call: a tenant credential, the master key, anyone, or anyone with an optional credential. */
function authenticatorFor(kind: Security, security: RestSecurity) {
  switch (kind) {
    case 'bearer':
      return (request: FastifyRequest) => security.authenticate(request.headers.authorization, request);
    case 'bearer-optional':
      // Without an Authorization header the caller is anonymous; a bad one is still a 401.
      return (request: FastifyRequest) =>
        request.headers.authorization === undefined
          ? null
          : security.authenticate(request.headers.authorization, request);
    case 'master':
      return (request: FastifyRequest) => {
        if (!security.isMasterKey(request.headers.authorization))
          throw new AppError('UNAUTHORIZED', 'the admin API needs the master key');
        return null;
      };
    case 'none':
      return () => null;
  }
}

/** The handler of one operation's route: authenticate, parse the request once, run, reply. */
function serve<TServices>(
  operation: RestOperation<TServices>,
  services: TServices,
  security: RestSecurity,
): RouteHandlerMethod {
  const authenticate = authenticatorFor(operation.security, security);
  const headerNames = operation.headers ? Object.keys(operation.headers.shape) : [];
  // The contract documents every query parameter: an undocumented one is refused, not ignored. A query
  // that declares a catchall (parameters named by data, such as `filter[<field>][<op>]`) checks the rest itself.
  const querySchema =
    operation.query instanceof z.ZodObject && operation.query.def.catchall === undefined
      ? operation.query.strict()
      : (operation.query ?? NO_QUERY);
  // The operation is a span of its own (a child of the request's), parent of its database statements.
  return traced(operation.operationId, { [ATTR_OPERATION_ID]: operation.operationId }, async (request, reply) => {
    const principal = await authenticate(request);
    if (operation.limitPerAddress) {
      const { name, perMinute } = operation.limitPerAddress;
      await security.limitAddress(name, perMinute(services), request);
    }
    const problems: FieldProblem[] = [];
    const parse = (schema: ZodType | undefined, value: unknown, section: string) => {
      if (!schema) return undefined;
      // A missing body (or query) is parsed as an empty object, so the problem named is its first member.
      const result = safeParseInput(schema, value === undefined ? {} : value);
      if (result.success) return result.data;
      problems.push(...fieldProblems(result.error, section));
      return undefined;
    };
    const headers = Object.fromEntries(headerNames.map((name) => [name, request.headers[name.toLowerCase()]]));
    const textBody = textBodyOf(operation, request);
    const input = {
      params: parse(operation.params, request.params, 'path'),
      query: parse(querySchema, request.query, 'query'),
      headers: parse(operation.headers, headers, 'header'),
      body: textBody ? undefined : parse(operation.body, bodyOf(operation, request), 'body'),
    };
    if (problems.length > 0) throw invalidInput(problems, operation.validationErrorCode);
    const result = await operation.handler({
      ...input,
      textBody,
      principal,
      optionalPrincipal: operation.security === 'bearer-optional' ? principal : null,
      request,
      services,
    } as never);
    reply.status(result.status);
    if (result.headers) reply.headers(result.headers);
    return result.body === undefined ? reply.send() : reply.send(result.body);
  });
}

/** The body of a request in a declared `text` media type, handed to the handler as a string. */
function textBodyOf(operation: RestOperation<unknown>, request: FastifyRequest) {
  if (typeof request.body !== 'string') return undefined;
  const mediaType = mediaTypeOf(request);
  return operation.bodyMediaTypes?.[mediaType]?.kind === 'text' ? { mediaType, text: request.body } : undefined;
}

/**
 * The body to validate: JSON as parsed, JSON sent under a declared other media type parsed here,
 * a form's fields as the members of `data` (validated and parsed as the JSON body would be).
 */
function bodyOf(operation: RestOperation<unknown>, request: FastifyRequest): unknown {
  if (typeof request.body === 'string' && operation.bodyMediaTypes?.[mediaTypeOf(request)]?.kind === 'json') {
    return parseClientJson(request.body);
  }
  return isFormRequest(request) ? { data: request.body } : request.body;
}
