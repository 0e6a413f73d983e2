import { GraphQLError, GraphQLScalarType, Kind } from 'graphql';

const invalid = (value: unknown) =>
  new GraphQLError(`Int64 cannot represent ${JSON.stringify(value)}: expected an integer within ±(2^53 - 1)`, {
    extensions: { code: 'VALIDATION_ERROR' },
  });

function toSafeInteger(value: unknown): number {
  const number = typeof value === 'bigint' ? Number(value) : value;
  if (typeof number !== 'number' || !Number.isSafeInteger(number)) throw invalid(value);
  return number;
}

/** 64-bit integers carried as JSON numbers while exactly representable; rejected beyond. */
export const Int64 = new GraphQLScalarType({
  name: 'Int64',
  serialize: toSafeInteger,
  parseValue: toSafeInteger,
  parseLiteral(ast) {
    if (ast.kind !== Kind.INT) throw invalid(ast.kind === Kind.STRING || ast.kind === Kind.FLOAT ? ast.value : ast.kind);
    return toSafeInteger(Number(ast.value));
  },
});
