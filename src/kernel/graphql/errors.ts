import { GraphQLError } from 'graphql';
import { AppError, errorRegistry } from '../errors';

type GraphQLErrorCode = (typeof errorRegistry)[keyof typeof errorRegistry]['graphqlCode'];

const knownCodes = new Set<string>(Object.values(errorRegistry).map((entry) => entry.graphqlCode));

/**
 * The extensions a client sees: our code (and field), nothing else, so that details of yoga's
 * internals (`originalError`) never reach the response. `http.status` is read and stripped by
 * yoga: only a bad bearer token is an HTTP error (401, answered before yoga runs); every other
 * error is HTTP 200, even where yoga would answer 400 (parse and validation errors, bad request
 * parameters) for clients that accept application/graphql-response+json.
 */
const extensionsOf = (code: GraphQLErrorCode, field?: string, challenge?: string) => ({
  code,
  ...(field ? { field } : {}),
  http: {
    status: code === 'UNAUTHORIZED' ? 401 : 200,
    // A missing scope's challenge (RFC 6750 `insufficient_scope`) reaches the response's headers,
    // the status staying 200: the other fields of the document may have been answered.
    ...(challenge ? { headers: { 'WWW-Authenticate': challenge } } : {}),
  },
});

/** The longest message of a parse or validation error; graphql-js quotes whole variable values in them. */
const MAX_MESSAGE_LENGTH = 1_000;

/** A message cut in the middle when too long: its start names the variable, its end what is wrong. */
const bounded = (message: string) =>
  message.length <= MAX_MESSAGE_LENGTH
    ? message
    : `${message.slice(0, MAX_MESSAGE_LENGTH / 2)} … ${message.slice(-MAX_MESSAGE_LENGTH / 2)}`;

/**
 * Yoga's error mask: AppErrors keep their message and get the registry's `extensions.code`
 * (plus `extensions.field` for validation errors); parse, validation and request errors become
 * VALIDATION_ERROR; anything else is logged and masked as INTERNAL_SERVER_ERROR.
 */
export function createErrorMask(log: (error: unknown) => void) {
  return (error: unknown): GraphQLError => {
    const graphqlError = error instanceof GraphQLError ? error : undefined;
    const original = graphqlError?.originalError ?? (graphqlError ? undefined : error);
    if (original instanceof AppError) {
      return new GraphQLError(original.message, {
        nodes: graphqlError?.nodes,
        path: graphqlError?.path,
        extensions: extensionsOf(
          errorRegistry[original.key].graphqlCode,
          original.field?.replace(/^(body|query|path)\./, ''),
          original.headers?.['WWW-Authenticate'],
        ),
      });
    }
    if (graphqlError && (original === undefined || original instanceof GraphQLError)) {
      const source = original instanceof GraphQLError ? original : graphqlError;
      const { code, field } = source.extensions ?? {};
      return new GraphQLError(bounded(source.message), {
        nodes: graphqlError.nodes,
        path: graphqlError.path,
        extensions: extensionsOf(
          typeof code === 'string' && knownCodes.has(code) ? (code as GraphQLErrorCode) : 'VALIDATION_ERROR',
          typeof field === 'string' ? field : undefined,
        ),
      });
    }
    log(original ?? error);
    return new GraphQLError(errorRegistry.INTERNAL.message, {
      nodes: graphqlError?.nodes,
      path: graphqlError?.path,
      extensions: extensionsOf('INTERNAL_SERVER_ERROR'),
    });
  };
}
