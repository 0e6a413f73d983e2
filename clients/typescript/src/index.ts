import type { DocumentTypeDecoration } from '@graphql-typed-document-node/core';
import createFetchClient, { type Client } from 'openapi-fetch';
import type { paths } from './__generated__/openapi.js';

export type { components, operations, paths } from './__generated__/openapi.js';

export interface ClientOptions {
  /** Origin of the service, e.g. `http://127.0.0.1:3000`. */
  baseUrl: string;
  /** An API key or OAuth access token, sent as `Authorization: Bearer <token>`. */
  token?: string;
  /** A fetch implementation other than the global one (tests, proxies, retries). */
  fetch?: typeof fetch;
  /** Headers sent with every request besides the authorization. */
  headers?: Record<string, string>;
}

/**
 * A GraphQL operation typed by `@graphql-codegen/client-preset` with `documentMode: 'string'`: its
 * text, and the types of its result and variables.
 */
export type TypedDocument<TResult, TVariables> = DocumentTypeDecoration<TResult, TVariables> & { toString(): string };

export interface GraphQLError {
  message: string;
  path?: (string | number)[];
  extensions?: { code?: string; field?: string; [key: string]: unknown };
}

export interface GraphQLResponse<TResult> {
  /** The HTTP status: 200 for executed operations, 401 and 429 before execution. */
  status: number;
  data?: TResult | null;
  errors?: GraphQLError[];
}

/** Variables are optional exactly when the operation declares none that are required. */
type VariablesArgument<TVariables> =
  Record<string, never> extends TVariables ? [variables?: TVariables] : [variables: TVariables];

export interface CommerceClient {
  /** REST, typed from openapi.yaml: `rest.GET('/api/storage/edge/proxies/{key}', {params: {path: {key}}})`. */
  rest: Client<paths>;
  /** Runs a typed GraphQL operation with `POST /graphql`. */
  graphql<TResult, TVariables>(
    document: TypedDocument<TResult, TVariables>,
    ...variables: VariablesArgument<TVariables>
  ): Promise<GraphQLResponse<TResult>>;
}

/** One client for both interfaces of the service, sharing its base URL, token and fetch. */
export function createClient(options: ClientOptions): CommerceClient {
  const baseUrl = options.baseUrl.replace(/\/+$/, '');
  const headers: Record<string, string> = { ...options.headers };
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  const fetchImpl = options.fetch ?? globalThis.fetch;
  const rest = createFetchClient<paths>({ baseUrl, headers, fetch: fetchImpl });
  return {
    rest,
    async graphql(document, ...[variables]) {
      const response = await fetchImpl(`${baseUrl}/graphql`, {
        method: 'POST',
        headers: { ...headers, 'content-type': 'application/json', accept: 'application/json' },
        body: JSON.stringify({ query: document.toString(), variables: variables ?? {} }),
      });
      const body = (await response.json()) as Omit<GraphQLResponse<never>, 'status'>;
      return { status: response.status, ...body };
    },
  };
}
