/**
 * The console's only way to the service: the public REST API (`/api/...`) and GraphQL (`/graphql`)
 * with the signed-in user's bearer token. Failures keep the API's own message (the envelope's
 * `error.message`, or GraphQL's `errors[0].message`).
 */
export class ApiError extends Error {
  constructor(
    message: string,
    readonly status: number,
    readonly code?: string,
  ) {
    super(message);
  }
}

let currentToken = '';
export const setToken = (token: string) => {
  currentToken = token;
};

export async function rest<T = unknown>(method: string, path: string, body?: unknown): Promise<T> {
  const headers: Record<string, string> = { authorization: `Bearer ${currentToken}` };
  if (body !== undefined) headers['content-type'] = 'application/json';
  const response = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  if (response.status === 204) return undefined as T;
  const text = await response.text();
  const answer = text ? JSON.parse(text) : {};
  if (!response.ok) throw new ApiError(answer.error?.message ?? `HTTP ${response.status}`, response.status);
  return answer as T;
}

export async function gql<T = Record<string, unknown>>(query: string, variables?: Record<string, unknown>): Promise<T> {
  const response = await fetch('/graphql', {
    method: 'POST',
    headers: { authorization: `Bearer ${currentToken}`, 'content-type': 'application/json' },
    body: JSON.stringify({ query, variables }),
  });
  const answer = (await response.json()) as {
    data?: T;
    errors?: { message: string; extensions?: { code?: string } }[];
  };
  const error = answer.errors?.[0];
  if (error) throw new ApiError(error.message, response.status, error.extensions?.code);
  if (!response.ok || !answer.data) throw new ApiError(`HTTP ${response.status}`, response.status);
  return answer.data;
}

export interface PageInfo {
  hasNextPage: boolean;
  hasPreviousPage: boolean;
  startCursor: string | null;
  endCursor: string | null;
}

export const PAGE_INFO = 'pageInfo { hasNextPage hasPreviousPage startCursor endCursor }';

export const formatTime = (ms: number | null | undefined) => (ms ? new Date(ms).toLocaleString() : '—');
