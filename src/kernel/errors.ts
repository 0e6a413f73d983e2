/**
 * The one registry of error codes: HTTP status, GraphQL `extensions.code` and the fixed message
 * prefix from the specification. Services throw `AppError`; the REST and GraphQL layers map it.
 */
export const errorRegistry = {
  BAD_REQUEST: {
    status: 400,
    graphqlCode: 'VALIDATION_ERROR',
    message: 'Bad request: invalid filter, pagination or request body',
  },
  UNAUTHORIZED: {
    status: 401,
    graphqlCode: 'UNAUTHORIZED',
    message: 'Unauthorized: invalid or expired authorization header',
  },
  FORBIDDEN: {
    status: 403,
    graphqlCode: 'FORBIDDEN',
    message: 'Forbidden: insufficient scopes for resource',
  },
  NOT_FOUND: {
    status: 404,
    graphqlCode: 'NOT_FOUND',
    message: 'Not found: could not find requested entity',
  },
  METHOD_NOT_ALLOWED: {
    status: 405,
    graphqlCode: 'VALIDATION_ERROR',
    message: 'Method not allowed: the path does not support this method',
  },
  CONFLICT: {
    status: 409,
    graphqlCode: 'CONFLICT',
    message: 'Conflict: the resource already exists or was changed concurrently',
  },
  OUT_OF_STOCK: {
    status: 409,
    graphqlCode: 'OUT_OF_STOCK',
    message: 'Conflict: not enough stock is available for the request',
  },
  ID_TAKEN: {
    status: 409,
    graphqlCode: 'ID_TAKEN',
    message: 'Conflict: an id, key or other unique value the request sets is already taken',
  },
  INVALID_STATE: {
    status: 409,
    graphqlCode: 'INVALID_STATE',
    message: 'Conflict: the entity is not in a state that allows this operation',
  },
  PAYLOAD_TOO_LARGE: {
    status: 413,
    graphqlCode: 'VALIDATION_ERROR',
    message: 'Payload too large: the request body exceeds 1 MiB',
  },
  EDGE_PAYLOAD_TOO_LARGE: {
    status: 413,
    graphqlCode: 'VALIDATION_ERROR',
    message: 'Payload too large: the request body exceeds EDGE_MAX_REQUEST_BYTES',
  },
  UNSUPPORTED_MEDIA_TYPE: {
    status: 415,
    graphqlCode: 'VALIDATION_ERROR',
    message: 'Unsupported media type: the request body must be application/json',
  },
  UNPROCESSABLE_ENTITY: {
    status: 422,
    graphqlCode: 'CONFLICT',
    message: 'Unprocessable entity: the request cannot be applied as sent',
  },
  TOO_MANY_REQUESTS: {
    status: 429,
    graphqlCode: 'RATE_LIMITED',
    message: 'Too many requests: slow down and retry after the time given in Retry-After',
  },
  INTERNAL: {
    status: 500,
    graphqlCode: 'INTERNAL_SERVER_ERROR',
    message: 'Internal server error: something went wrong on our side',
  },
  WRITE_INTERRUPTED: {
    status: 503,
    graphqlCode: 'WRITE_INTERRUPTED',
    message: 'Service unavailable: the write was interrupted before it committed and changed nothing',
  },
  SERVICE_UNAVAILABLE: {
    status: 503,
    graphqlCode: 'SERVICE_UNAVAILABLE',
    message: 'Service unavailable: this process is shutting down; send the request again',
  },
  EDGE_SIGNATURE_INVALID: {
    status: 403,
    graphqlCode: 'FORBIDDEN',
    message: 'Forbidden: the URL signature is missing, malformed, expired or wrong',
  },
  BAD_GATEWAY: {
    status: 502,
    graphqlCode: 'INTERNAL_SERVER_ERROR',
    message: 'Bad gateway: the origin could not be reached or its answer could not be passed on',
  },
  GATEWAY_TIMEOUT: {
    status: 504,
    graphqlCode: 'INTERNAL_SERVER_ERROR',
    message: 'Gateway timeout: the origin did not answer in time',
  },
} as const;

export type ErrorKey = keyof typeof errorRegistry;

/** Errors that only the edge data plane (`/edge/...`) answers: no REST operation returns them. */
export const DATA_PLANE_ONLY_ERRORS: readonly ErrorKey[] = [
  'BAD_GATEWAY',
  'GATEWAY_TIMEOUT',
  'EDGE_PAYLOAD_TOO_LARGE',
  'EDGE_SIGNATURE_INVALID',
];

/**
 * Headers an error always carries: RFC 6750's challenge on a 401, and on a retryable write the
 * hint that client libraries use to retry at once.
 */
const DEFAULT_HEADERS: Partial<Record<ErrorKey, Record<string, string>>> = {
  UNAUTHORIZED: { 'WWW-Authenticate': 'Bearer' },
  WRITE_INTERRUPTED: { 'Retry-After': '0' },
  SERVICE_UNAVAILABLE: { 'Retry-After': '0', Connection: 'close' },
};

export interface FieldProblem {
  field: string;
  message: string;
  /** A compare-and-set conflict: the entity whose value changed, the value expected and the one found. */
  id?: string;
  expected?: number;
  actual?: number;
}

export class AppError extends Error {
  readonly key: ErrorKey;
  readonly status: number;
  readonly details: FieldProblem[] | null;
  /** What the request did wrong, after the code's message. */
  readonly reason: string | undefined;
  /** Extra response headers, for example `Allow` on a 405. */
  readonly headers: Record<string, string>;

  constructor(
    key: ErrorKey,
    reason?: string,
    options: { details?: FieldProblem[]; headers?: Record<string, string> } = {},
  ) {
    const entry = errorRegistry[key];
    super(reason ? `${entry.message}; ${reason}` : entry.message);
    this.key = key;
    this.status = entry.status;
    this.details = options.details ?? null;
    this.reason = reason;
    this.headers = { ...DEFAULT_HEADERS[key], ...options.headers };
  }

  /** The field a VALIDATION_ERROR is about, for GraphQL `extensions.field`. */
  get field(): string | undefined {
    return this.details?.[0]?.field;
  }
}

export const badRequest = (reason: string, details?: FieldProblem[]) =>
  new AppError('BAD_REQUEST', reason, { details });
export const notFound = (reason?: string) => new AppError('NOT_FOUND', reason);
export const conflict = (reason: string) => new AppError('CONFLICT', reason);
/** An error about one input field (named in the message and in `details`), or about the whole request. */
const errorAt = (key: ErrorKey, reason: string, field?: string) =>
  field
    ? new AppError(key, `${field} ${reason}`, { details: [{ field, message: reason }] })
    : new AppError(key, reason);
/** An id (or key, SKU, e-mail) the request sets that another entity already has. */
export const idTaken = (reason: string, field?: string) => errorAt('ID_TAKEN', reason, field);
/** An operation the entity's current state does not allow. */
export const invalidState = (reason: string, field?: string) => errorAt('INVALID_STATE', reason, field);
