import type { FastifyRequest } from 'fastify';
import type { z } from 'zod';
import type { ErrorKey } from '../errors';
import type { Principal } from '../principal';
import type { RestTag } from './tags';

export type HttpMethod = 'get' | 'post' | 'put' | 'patch' | 'delete';

/**
 * How a caller authenticates: a tenant credential, the operator's master key, or not at all.
 * `bearer-optional`: a tenant credential when an Authorization header is sent (an invalid one is a
 * 401), none otherwise; the handler decides what an anonymous caller may do.
 */
export type Security = 'bearer' | 'master' | 'none' | 'bearer-optional';

export interface HttpResult {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
}

export interface ResponseSpec {
  description: string;
  /** Omitted for responses without a body (204, 307). */
  schema?: z.ZodType;
  headers?: Record<string, { description: string; required?: boolean }>;
  /** Bodies in other media types than application/json, chosen by the request's Accept header. */
  otherMediaTypes?: Record<string, z.ZodType>;
}

/**
 * A request media type besides application/json. `json`: JSON sent under another type (browsers
 * send text/plain to avoid a CORS preflight), parsed and validated like application/json.
 * `text`: the handler receives the body as a string in `textBody`.
 */
export interface BodyMediaType {
  kind: 'json' | 'text';
  description: string;
}

export interface OperationInput<TServices, P, Q, B, H = undefined> {
  params: P;
  query: Q;
  body: B;
  /** The request headers `headers` declares, by their documented names (e.g. `Idempotency-Key`). */
  headers: H;
  /** Present for `bearer` operations. */
  principal: Principal;
  /** For `bearer-optional` operations: the caller's principal, or null without an Authorization header. */
  optionalPrincipal: Principal | null;
  /** The body of a request sent in a `text` media type of `bodyMediaTypes`. */
  textBody?: { mediaType: string; text: string };
  request: FastifyRequest;
  services: TServices;
}

type Out<T> = T extends z.ZodType ? z.output<T> : undefined;

/**
 * One REST operation, declared once: its OpenAPI description (from the zod schemas), its
 * validation and its handler. `operationId` equals the handler's name.
 */
export interface RestOperation<
  TServices = unknown,
  P extends z.ZodType | undefined = z.ZodType | undefined,
  Q extends z.ZodType | undefined = z.ZodType | undefined,
  B extends z.ZodType | undefined = z.ZodType | undefined,
  H extends z.ZodObject | undefined = z.ZodObject | undefined,
> {
  operationId: string;
  method: HttpMethod;
  path: string;
  summary: string;
  description?: string;
  /** The group of the reference it is listed in (see tags.ts). */
  tag: RestTag;
  security: Security;
  /** Scopes the operation needs, documented on the operation; the service enforces them. */
  scopes?: readonly string[];
  params?: P;
  query?: Q;
  /** Request headers the operation reads, documented as header parameters and parsed into `headers`. */
  headers?: H;
  body?: B;
  bodyMediaTypes?: Record<string, BodyMediaType>;
  /**
   * Callable from browsers on any origin: CORS preflight answered, `Access-Control-Allow-Origin: *` on every response.
   */
  cors?: boolean;
  /**
   * Requests per minute each client address may send, for public operations that write: counted
   * after authentication and before the request is parsed, so a malformed request counts too.
   * `name` names the count (and the 429's reason); `perMinute` reads the limit from the services.
   */
  limitPerAddress?: { name: string; perMinute(services: TServices): number };
  /**
   * Also accept the members of `body.data` as an `application/x-www-form-urlencoded` body (what
   * OAuth 2.0 clients send); the handler receives them wrapped as `{data: {...}}` either way.
   */
  acceptsForm?: boolean;
  /** A code put before the reason of every validation 400, e.g. OAuth's `invalid_request`. */
  validationErrorCode?: string;
  responses: Record<number, ResponseSpec>;
  errors: ErrorKey[];
  handler(input: OperationInput<TServices, Out<P>, Out<Q>, Out<B>, Out<H>>): Promise<HttpResult>;
}

/**
 * The `defineOperation` of an application whose handlers receive `TServices`: it checks one
 * operation's handler against its own schemas and erases them for the list of all operations.
 */
export function operationDefiner<TServices, TScope extends string = string>() {
  return <
    P extends z.ZodType | undefined = undefined,
    Q extends z.ZodType | undefined = undefined,
    B extends z.ZodType | undefined = undefined,
    H extends z.ZodObject | undefined = undefined,
  >(
    operation: RestOperation<TServices, P, Q, B, H> & { scopes?: readonly TScope[] },
  ): RestOperation<TServices> => operation as unknown as RestOperation<TServices>;
}
