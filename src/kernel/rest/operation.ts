import type { FastifyRequest } from 'fastify';
import type { z } from 'zod';
import type { Principal, Scope } from '../../modules/auth/scopes';
import type { Services } from '../../services';
import type { ErrorKey } from '../errors';

export type HttpMethod = 'get' | 'post' | 'put' | 'patch' | 'delete';

/** How a caller authenticates: a tenant credential, the operator's master key, or not at all. */
export type Security = 'bearer' | 'master' | 'none';

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
}

export interface OperationInput<P, Q, B> {
  params: P;
  query: Q;
  body: B;
  /** Present for `bearer` operations. */
  principal: Principal;
  request: FastifyRequest;
  services: Services;
}

type Out<T> = T extends z.ZodType ? z.output<T> : undefined;

/**
 * One REST operation, declared once: its OpenAPI description (from the zod schemas), its
 * validation and its handler. `operationId` equals the handler's name.
 */
export interface RestOperation<
  P extends z.ZodType | undefined = z.ZodType | undefined,
  Q extends z.ZodType | undefined = z.ZodType | undefined,
  B extends z.ZodType | undefined = z.ZodType | undefined,
> {
  operationId: string;
  method: HttpMethod;
  path: string;
  summary: string;
  description?: string;
  tag: string;
  security: Security;
  /** Scopes the operation needs, documented on the operation; the service enforces them. */
  scopes?: Scope[];
  params?: P;
  query?: Q;
  body?: B;
  responses: Record<number, ResponseSpec>;
  errors: ErrorKey[];
  handler(input: OperationInput<Out<P>, Out<Q>, Out<B>>): Promise<HttpResult>;
}

export function defineOperation<
  P extends z.ZodType | undefined = undefined,
  Q extends z.ZodType | undefined = undefined,
  B extends z.ZodType | undefined = undefined,
>(operation: RestOperation<P, Q, B>): RestOperation {
  return operation as unknown as RestOperation;
}
