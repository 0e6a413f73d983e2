import { GraphQLError } from 'graphql';
import { AppError, errorRegistry } from '../errors';

/**
 * Yoga's error mask: AppErrors keep their message and get the registry's `extensions.code`
 * (plus `extensions.field` for validation errors); parse and validation errors become
 * VALIDATION_ERROR; anything else is logged and masked as INTERNAL_SERVER_ERROR.
 */
export function createErrorMask(log: (error: unknown) => void) {
  return (error: unknown): Error => {
    const graphqlError = error instanceof GraphQLError ? error : undefined;
    const original = graphqlError?.originalError ?? (graphqlError ? undefined : error);
    if (original instanceof AppError) {
      return new GraphQLError(original.message, {
        nodes: graphqlError?.nodes,
        path: graphqlError?.path,
        extensions: {
          code: errorRegistry[original.key].graphqlCode,
          ...(original.field ? { field: original.field.replace(/^(body|query|path)\./, '') } : {}),
        },
      });
    }
    if (graphqlError && (original === undefined || original instanceof GraphQLError)) {
      const source = original instanceof GraphQLError ? original : graphqlError;
      const code = source.extensions?.code;
      return new GraphQLError(source.message, {
        nodes: graphqlError.nodes,
        path: graphqlError.path,
        extensions: {
          ...source.extensions,
          code: typeof code === 'string' && Object.values(errorRegistry).some((e) => e.graphqlCode === code) ? code : 'VALIDATION_ERROR',
        },
      });
    }
    log(original ?? error);
    return new GraphQLError(errorRegistry.INTERNAL.message, {
      nodes: graphqlError?.nodes,
      path: graphqlError?.path,
      extensions: { code: 'INTERNAL_SERVER_ERROR' },
    });
  };
}
