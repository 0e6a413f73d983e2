import { GraphQLError, GraphQLScalarType, Kind, print } from 'graphql';

const invalid = (description: string) =>
  new GraphQLError(`Int64 cannot represent ${description}: expected an integer within ±(2^53 - 1)`, {
    extensions: { code: 'VALIDATION_ERROR' },
  });

/** How a rejected runtime value reads in the message (JSON.stringify throws on a bigint). */
function describeValue(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value);
  if (value === null || typeof value !== 'object') return String(value);
  return Array.isArray(value) ? 'a list' : 'an object';
}

function toSafeInteger(value: unknown): number {
  const number = typeof value === 'bigint' ? Number(value) : value;
  if (typeof number !== 'number' || !Number.isSafeInteger(number)) throw invalid(describeValue(value));
  return number;
}

/** 64-bit integers carried as JSON numbers while exactly representable; rejected beyond. */
export const Int64 = new GraphQLScalarType({
  name: 'Int64',
  serialize: toSafeInteger,
  parseValue: toSafeInteger,
  parseLiteral(ast) {
    // The literal's own text in the message: beyond 2^53 its Number() is already rounded.
    if (ast.kind !== Kind.INT || !Number.isSafeInteger(Number(ast.value))) throw invalid(print(ast));
    return Number(ast.value);
  },
});
