import { GraphQLError, Kind, parseValue, type ValueNode } from 'graphql';
import { describe, expect, it } from 'vitest';
import { Int64 } from '../../src/kernel/graphql/scalars';

const MAX = Number.MAX_SAFE_INTEGER; // 2^53 - 1
const MIN = Number.MIN_SAFE_INTEGER;

const accepted: [string, unknown, number][] = [
  ['zero', 0, 0],
  ['a small integer', 42, 42],
  ['a negative integer', -7, -7],
  ['2^53 - 1', MAX, MAX],
  ['-(2^53 - 1)', MIN, MIN],
  ['a timestamp in milliseconds', 1_795_238_806_803, 1_795_238_806_803],
  ['an integral float', 5.0, 5],
  ['a bigint', 123n, 123],
  ['the largest safe bigint', BigInt(MAX), MAX],
  ['the smallest safe bigint', BigInt(MIN), MIN],
];

const rejected: [string, unknown][] = [
  ['2^53', 2 ** 53],
  ['-(2^53)', -(2 ** 53)],
  ['2^53 as a bigint', 2n ** 53n],
  ['2^64 as a bigint', 2n ** 64n],
  ['-(2^53) as a bigint', -(2n ** 53n)],
  ['a fraction', 1.5],
  ['a tiny fraction', 0.1],
  ['NaN', Number.NaN],
  ['Infinity', Number.POSITIVE_INFINITY],
  ['a numeric string', '5'],
  ['an empty string', ''],
  ['a boolean', true],
  ['null', null],
  ['undefined', undefined],
  ['an object', { value: 1 }],
  ['an array', [1]],
];

const expectInvalid = (run: () => unknown) => {
  let thrown: unknown;
  try {
    run();
  } catch (error) {
    thrown = error;
  }
  expect(thrown).toBeInstanceOf(GraphQLError);
  expect((thrown as GraphQLError).message).toMatch(/^Int64 cannot represent /);
  expect((thrown as GraphQLError).extensions.code).toBe('VALIDATION_ERROR');
};

describe('Int64 serialize and parseValue', () => {
  it.each(accepted)('accept %s', (_name, input, output) => {
    expect(Int64.serialize(input)).toBe(output);
    expect(Int64.parseValue(input)).toBe(output);
    expect(typeof Int64.serialize(input)).toBe('number');
  });

  it.each(rejected)('reject %s', (_name, input) => {
    expectInvalid(() => Int64.serialize(input));
    expectInvalid(() => Int64.parseValue(input));
  });
});

describe('Int64 parseLiteral', () => {
  const literal = (source: string): ValueNode => parseValue(source);

  it.each([
    ['0', 0],
    ['-1', -1],
    ['9007199254740991', MAX],
    ['-9007199254740991', MIN],
  ])('accepts the integer literal %s', (source, expected) => {
    expect(literal(source).kind).toBe(Kind.INT);
    expect(Int64.parseLiteral(literal(source), undefined)).toBe(expected);
  });

  it.each([
    ['2^53', '9007199254740992'],
    ['-(2^53)', '-9007199254740992'],
    ['2^64', '18446744073709551616'],
    ['a float', '1.5'],
    ['an integral float', '5.0'],
    ['an exponent', '1e3'],
    ['a string', '"5"'],
    ['a boolean', 'true'],
    ['null', 'null'],
    ['a list', '[1]'],
    ['an object', '{ value: 1 }'],
    ['an enum value', 'FIVE'],
  ])('rejects %s', (_name, source) => {
    expectInvalid(() => Int64.parseLiteral(literal(source), undefined));
  });
});

describe('Int64 error messages', () => {
  it('name the rejected value exactly', () => {
    expect(() => Int64.serialize(2n ** 64n)).toThrow('Int64 cannot represent 18446744073709551616:');
    expect(() => Int64.parseValue('12')).toThrow('Int64 cannot represent "12":');
    expect(() => Int64.parseLiteral(parseValue('18446744073709551616'), undefined)).toThrow(
      'Int64 cannot represent 18446744073709551616:',
    );
    expect(() => Int64.parseLiteral(parseValue('"12"'), undefined)).toThrow('Int64 cannot represent "12":');
  });
});
