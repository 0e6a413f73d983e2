import { OpenAPIRegistry, OpenApiGeneratorV31 } from '@asteasolutions/zod-to-openapi';
import type { ZodObject, ZodType } from 'zod';
import { errorRegistry, type ErrorKey } from '../errors';
import { packageInfo } from '../package-info';
import type { RestOperation } from './operation';
import { REST_TAGS } from './tags';
import { withSchemaTypes } from './schema-types';
import { ErrorEnvelopeSchema } from './schemas';

export type OpenApiDocument = ReturnType<OpenApiGeneratorV31['generateDocument']>;

/** What the reference opens with: what REST covers, and that the rest of the API is GraphQL. */
const DESCRIPTION = [
  "REST interface of the commerce platform: edge proxies, search, inventory writes, OAuth, the agents' catalogs " +
    "and the operator's admin API. Every request carries `Authorization: Bearer <token>`, a tenant's API key or " +
    'OAuth access token (the Admin group: the master key). Every response carries the envelope ' +
    '`{data, page, meta}` or `{error: {code, message, details}, meta}`.',
  'The catalog (businesses, warehouses, positions, products, sales channels), stock, orders and reservations, ' +
    'transfers and supplies are GraphQL: [/graphql](/graphql) (GraphiQL in a browser, the schema at ' +
    '[/graphql/schema.graphql](/graphql/schema.graphql)).',
  'Guides, one per area, start from [the docs map](/README.md#where-to-find-what).',
].join('\n\n');

const responseName = (key: ErrorKey) =>
  key
    .toLowerCase()
    .split('_')
    .map((word) => word[0]!.toUpperCase() + word.slice(1))
    .join('');

const requestIdHeader = {
  'X-Request-Id': {
    description: 'Identifier of the request, also written to the server log.',
    required: true,
    schema: { type: 'string' as const },
  },
};

const extraErrorHeaders: Partial<Record<ErrorKey, Record<string, unknown>>> = {
  UNAUTHORIZED: {
    'WWW-Authenticate': {
      description: 'The authentication scheme to use: `Bearer`.',
      required: true,
      schema: { type: 'string' },
    },
  },
  METHOD_NOT_ALLOWED: {
    Allow: { description: 'The methods the path supports.', required: true, schema: { type: 'string' } },
  },
  TOO_MANY_REQUESTS: {
    'Retry-After': { description: 'Seconds to wait before trying again.', required: true, schema: { type: 'string' } },
  },
  WRITE_INTERRUPTED: {
    'Retry-After': {
      description: '`0`: the write may be sent again at once.',
      required: true,
      schema: { type: 'string' },
    },
  },
  SERVICE_UNAVAILABLE: {
    'Retry-After': {
      description: '`0`: the request may be sent again at once, on a new connection.',
      required: true,
      schema: { type: 'string' },
    },
  },
};

/**
 * The response of one status. Where an operation can fail in several ways with the same status
 * (409: `ID_TAKEN` or `CONFLICT`), the response lists each code with the message prefix that
 * tells them apart.
 */
function errorResponse(keys: ErrorKey[], errorSchemaRef: { $ref: string }) {
  if (keys.length === 1) return { $ref: `#/components/responses/${responseName(keys[0]!)}` };
  return {
    description: keys.map((key) => `\`${key}\`: ${errorRegistry[key].message}`).join('\n\n'),
    headers: { ...requestIdHeader, ...Object.assign({}, ...keys.map((key) => extraErrorHeaders[key] ?? {})) },
    content: { 'application/json': { schema: errorSchemaRef } },
  };
}

const securitySchemes = {
  bearerAuth: {
    type: 'http' as const,
    scheme: 'bearer',
    description: 'An API key (`cpk_...`) of a tenant. Operations list the scopes they need.',
  },
  masterKey: {
    type: 'http' as const,
    scheme: 'bearer',
    description: "The operator's `MASTER_KEY`; authorises the admin API only.",
  },
};

/** Builds the OpenAPI 3.1 document of every REST operation: the contract `openapi.yaml` holds. */
export function buildOpenApiDocument(operations: RestOperation[]): OpenApiDocument {
  const registry = new OpenAPIRegistry();
  registry.registerComponent('securitySchemes', 'bearerAuth', securitySchemes.bearerAuth);
  registry.registerComponent('securitySchemes', 'masterKey', securitySchemes.masterKey);
  const errorSchemaRef = { $ref: '#/components/schemas/ErrorEnvelope' };
  registry.register('ErrorEnvelope', ErrorEnvelopeSchema);
  for (const [key, entry] of Object.entries(errorRegistry) as [ErrorKey, (typeof errorRegistry)[ErrorKey]][]) {
    registry.registerComponent('responses', responseName(key), {
      description: entry.message,
      headers: { ...requestIdHeader, ...(extraErrorHeaders[key] ?? {}) },
      content: { 'application/json': { schema: errorSchemaRef } },
    });
  }

  for (const operation of operations) {
    const responses: Record<string, unknown> = {};
    for (const [status, spec] of Object.entries(operation.responses)) {
      responses[status] = {
        description: spec.description,
        headers: {
          ...requestIdHeader,
          ...Object.fromEntries(
            Object.entries(spec.headers ?? {}).map(([name, header]) => [
              name,
              { description: header.description, required: header.required ?? true, schema: { type: 'string' } },
            ]),
          ),
        },
        ...(spec.schema
          ? {
              content: {
                'application/json': { schema: spec.schema },
                ...Object.fromEntries(
                  Object.entries(spec.otherMediaTypes ?? {}).map(([type, schema]) => [type, { schema }]),
                ),
              },
            }
          : {}),
      };
    }
    // A process that is shutting down refuses requests arriving on connections it still has open.
    const errorKeys = new Set<ErrorKey>([...operation.errors, 'METHOD_NOT_ALLOWED', 'INTERNAL', 'SERVICE_UNAVAILABLE']);
    if (operation.security !== 'none') errorKeys.add('UNAUTHORIZED');
    // A tenant credential counts against its rate limit (when one applies).
    if (operation.security === 'bearer' || operation.security === 'bearer-optional') errorKeys.add('TOO_MANY_REQUESTS');
    if (operation.limitPerAddress) errorKeys.add('TOO_MANY_REQUESTS');
    // Any request can be malformed before the operation sees it: a broken percent-encoding in the
    // path, an undocumented query parameter.
    errorKeys.add('BAD_REQUEST');
    // A body is read (and may be too large or of a media type the API does not take) on every method
    // but GET and HEAD, whether the operation declares one or not; an undeclared one is then ignored.
    if (operation.body || !['get', 'head'].includes(operation.method)) {
      errorKeys.add('PAYLOAD_TOO_LARGE');
      errorKeys.add('UNSUPPORTED_MEDIA_TYPE');
    }
    const byStatus = new Map<number, ErrorKey[]>();
    for (const key of [...errorKeys].sort((a, b) => errorRegistry[a].status - errorRegistry[b].status)) {
      byStatus.set(errorRegistry[key].status, [...(byStatus.get(errorRegistry[key].status) ?? []), key]);
    }
    // An operation that documents a status of its own (an answer in a form a standard fixes) keeps it.
    for (const [status, keys] of byStatus)
      if (!(String(status) in operation.responses)) responses[String(status)] = errorResponse(keys, errorSchemaRef);
    const scopes = operation.scopes ?? [];
    registry.registerPath({
      operationId: operation.operationId,
      method: operation.method,
      path: operation.path,
      summary: operation.summary,
      description:
        (operation.description ?? '') +
        (scopes.length > 0
          ? `${operation.description ? '\n\n' : ''}Needs scope ${scopes.map((s) => `\`${s}\``).join(', ')}.`
          : ''),
      tags: [operation.tag],
      security:
        operation.security === 'bearer'
          ? [{ bearerAuth: [...scopes] }]
          : operation.security === 'bearer-optional'
            ? [{ bearerAuth: [...scopes] }, {}]
            : operation.security === 'master'
              ? [{ masterKey: [] }]
              : [],
      request: {
        ...(operation.params ? { params: operation.params as ZodObject } : {}),
        ...(operation.query ? { query: operation.query as ZodObject } : {}),
        ...(operation.headers ? { headers: operation.headers } : {}),
        ...(operation.body
          ? {
              body: {
                // A body in a text media type reaches the handler unvalidated, so only zod can require the JSON one.
                required: !Object.values(operation.bodyMediaTypes ?? {}).some((media) => media.kind === 'text'),
                content: {
                  'application/json': { schema: operation.body as ZodType },
                  ...(operation.acceptsForm
                    ? {
                        'application/x-www-form-urlencoded': {
                          schema: (operation.body as ZodObject).shape.data as ZodType,
                        },
                      }
                    : {}),
                  ...Object.fromEntries(
                    Object.entries(operation.bodyMediaTypes ?? {}).map(([type, media]) => [
                      type,
                      media.kind === 'json'
                        ? { schema: operation.body as ZodType }
                        : { schema: { type: 'string' as const, description: media.description } },
                    ]),
                  ),
                },
              },
            }
          : {}),
      },
      responses: responses as never,
    });
  }

  const used = new Set(operations.map((operation) => operation.tag));
  const document = new OpenApiGeneratorV31(registry.definitions).generateDocument({
    openapi: '3.1.0',
    info: {
      title: 'Commerce Platform API',
      version: packageInfo.version,
      description: DESCRIPTION,
    },
    servers: [{ url: '/' }],
    // In this order the reference lists its groups: a tenant's first, the operator's last.
    tags: REST_TAGS.filter((tag) => used.has(tag.name)).map(({ name, description }) => ({ name, description })),
  });
  // openapi-backend rejects the empty `webhooks` object that the 3.1 generator emits.
  delete (document as { webhooks?: unknown }).webhooks;
  return withSchemaTypes(document);
}

/**
 * The part of the document that routing reads: each operation's method, path and operationId, as
 * `buildOpenApiDocument` lists them. Building the whole document (every zod schema converted) took
 * about a tenth of a second of every start; the service serves the committed `openapi.yaml`, which a
 * test keeps equal to the whole document.
 */
export function routingDocument(operations: RestOperation[]) {
  const paths: Record<string, Record<string, { operationId: string; responses: object }>> = {};
  for (const { path, method, operationId } of operations) (paths[path] ??= {})[method] = { operationId, responses: {} };
  return { openapi: '3.1.0', info: { title: 'Commerce Platform API', version: packageInfo.version }, paths };
}
