import { readFileSync } from 'node:fs';
import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import type { FastifyInstance } from 'fastify';
import { OpenAPIBackend } from 'openapi-backend';
import { expect } from 'vitest';
import { parse } from 'yaml';
import { errorRegistry } from '../../src/kernel/errors';
import { OPENAPI_FILE } from '../../src/kernel/rest/openapi-yaml';

export interface RestResponse<T = any> {
  status: number;
  headers: Record<string, string>;
  body: T;
  rawBody: string;
}

export interface RequestOptions {
  token?: string;
  body?: unknown;
  /** Sent as-is instead of JSON-encoding `body`. */
  rawBody?: string | Buffer;
  headers?: Record<string, string>;
  /** The client address the request comes from (default 127.0.0.1). */
  remoteAddress?: string;
}

type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE' | 'HEAD' | 'OPTIONS';

export interface RestClient {
  request(method: Method, url: string, options?: RequestOptions): Promise<RestResponse>;
  get(url: string, options?: RequestOptions): Promise<RestResponse>;
  post(url: string, options?: RequestOptions): Promise<RestResponse>;
  put(url: string, options?: RequestOptions): Promise<RestResponse>;
  patch(url: string, options?: RequestOptions): Promise<RestResponse>;
  delete(url: string, options?: RequestOptions): Promise<RestResponse>;
}

const document = parse(readFileSync(OPENAPI_FILE, 'utf8'));
const contract = new OpenAPIBackend({
  definition: document,
  quick: true,
  validate: true,
  ajvOpts: { strict: false },
  customizeAjv: (instance) => {
    addFormats(instance as never);
    return instance;
  },
});
const ready = contract.init();
const ajv = new Ajv2020({ strict: false });
addFormats(ajv);
ajv.addSchema(document, 'openapi.yaml');
const validateErrorEnvelope = ajv.compile({ $ref: 'openapi.yaml#/components/schemas/ErrorEnvelope' });

/**
 * Checks one response against openapi.yaml: the status is documented for the operation, the body
 * matches its schema (an empty body where none is documented), and documented headers are present.
 * Responses of paths or methods that the contract does not have must be error envelopes.
 */
export async function assertMatchesContract(method: string, url: string, response: RestResponse) {
  await ready;
  const path = url.split('?')[0]!;
  const where = `${method} ${url} → ${response.status}`;
  if (!response.headers['x-request-id']) throw new Error(`${where}: no X-Request-Id header`);
  const operation = contract.matchOperation({ method, path, headers: {} });
  if (!operation) {
    if (!validateErrorEnvelope(response.body)) {
      throw new Error(`${where}: not an error envelope: ${ajv.errorsText(validateErrorEnvelope.errors)}`);
    }
    return;
  }
  const documented = operation.responses?.[String(response.status)] as { content?: unknown } | undefined;
  if (!documented) throw new Error(`${where}: status not documented for ${operation.operationId}`);
  const resolved = contract.definition.paths[operation.path]![operation.method as 'get']!.responses![
    String(response.status)
  ] as {
    content?: Record<string, unknown>;
  };
  const mediaType = response.headers['content-type']?.split(';')[0]?.trim();
  if (resolved.content && mediaType && mediaType !== 'application/json' && resolved.content[mediaType]) {
    // A documented alternative media type (chosen by Accept): validate against its own schema.
    const pointer = [
      'paths',
      operation.path,
      operation.method,
      'responses',
      String(response.status),
      'content',
      mediaType,
      'schema',
    ]
      .map((part) => part.replaceAll('~', '~0').replaceAll('/', '~1'))
      .join('/');
    const validate = ajv.compile({ $ref: `openapi.yaml#/${pointer}` });
    if (!validate(response.body))
      throw new Error(`${where}: body does not match the contract: ${ajv.errorsText(validate.errors)}`);
  } else if (resolved.content) {
    if (!response.headers['content-type']?.startsWith('application/json')) {
      throw new Error(`${where}: content-type ${response.headers['content-type']} is not application/json`);
    }
    const result = contract.validateResponse(response.body, operation, response.status);
    if (result.errors?.length)
      throw new Error(`${where}: body does not match the contract: ${JSON.stringify(result.errors)}`);
  } else if (response.rawBody !== '') {
    throw new Error(`${where}: expected an empty body, got ${response.rawBody.slice(0, 200)}`);
  }
  // openapi-backend's "superset" check requires every documented header; the contract marks some
  // `required: false` (present on some answers of a status only), so presence is checked here.
  const headers = contract.validateResponseHeaders(response.headers, operation, {
    statusCode: response.status,
    setMatchType: 'any' as never,
  });
  if (headers.errors?.length)
    throw new Error(`${where}: headers do not match the contract: ${JSON.stringify(headers.errors)}`);
  const declared = (resolved as { headers?: Record<string, { required?: boolean }> }).headers ?? {};
  const missing = Object.entries(declared)
    .filter(([name, header]) => header.required !== false && response.headers[name.toLowerCase()] === undefined)
    .map(([name]) => name);
  if (missing.length > 0) throw new Error(`${where}: headers the contract requires are missing: ${missing.join(', ')}`);
}

export function createRestClient(app: FastifyInstance): RestClient {
  const request = async (method: Method, url: string, options: RequestOptions = {}): Promise<RestResponse> => {
    const headers: Record<string, string> = { ...options.headers };
    if (options.token) headers.authorization = `Bearer ${options.token}`;
    let payload: string | Buffer | undefined = options.rawBody;
    if (payload === undefined && options.body !== undefined) {
      payload = JSON.stringify(options.body);
      headers['content-type'] ??= 'application/json';
    }
    const response = await app.inject({ method, url, headers, payload, remoteAddress: options.remoteAddress });
    const rawBody = response.body;
    let body: unknown = rawBody;
    if (response.headers['content-type']?.toString().includes('json') && rawBody !== '') body = JSON.parse(rawBody);
    const result: RestResponse = {
      status: response.statusCode,
      headers: Object.fromEntries(Object.entries(response.headers).map(([k, v]) => [k, String(v)])),
      body,
      rawBody,
    };
    await assertMatchesContract(method, url, result);
    return result;
  };
  return {
    request,
    get: (url, options) => request('GET', url, options),
    post: (url, options) => request('POST', url, options),
    put: (url, options) => request('PUT', url, options),
    patch: (url, options) => request('PATCH', url, options),
    delete: (url, options) => request('DELETE', url, options),
  };
}

/** What an error answer must say beyond its status: see `expectRestError`. */
export interface RestErrorExpectation {
  /** A validation error whose `details` name this field (among others). */
  field?: string;
  /** The message starts with this string, or matches this pattern. */
  message?: string | RegExp;
}

/**
 * The one assertion of a REST error answer of `status`: a JSON error envelope with its code and the
 * message prefix the registry gives that status; with `field` (or `{ field }`), a validation error
 * whose `details` name that field (among others); with `{ message }`, the message it starts with
 * (a string) or matches (a pattern).
 */
export function expectRestError(response: RestResponse, status: number, expected: string | RestErrorExpectation = {}) {
  const { field, message } = typeof expected === 'string' ? { field: expected, message: undefined } : expected;
  expect(response.status, response.rawBody).toBe(status);
  expect(response.headers['content-type']).toMatch(/^application\/json/);
  expect(response.body.meta).toBeNull();
  expect(response.body.error.code).toBe(status);
  const prefixes = Object.values(errorRegistry)
    .filter((entry) => entry.status === status)
    .map((entry) => entry.message.slice(0, entry.message.indexOf(':') + 1));
  expect(prefixes.length, `no error of status ${status} in the registry`).toBeGreaterThan(0);
  expect(
    prefixes.some((prefix) => response.body.error.message.startsWith(prefix)),
    response.body.error.message,
  ).toBe(true);
  if (typeof message === 'string') {
    expect(response.body.error.message.startsWith(message), response.body.error.message).toBe(true);
  } else if (message) {
    expect(response.body.error.message).toMatch(message);
  }
  if (field !== undefined) {
    expect(response.body.error.details, JSON.stringify(response.body.error.details)).toEqual(
      expect.arrayContaining([expect.objectContaining({ field })]),
    );
  }
}
