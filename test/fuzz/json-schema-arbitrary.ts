/**
 * fast-check arbitraries derived from the JSON Schemas of openapi.yaml: values a schema accepts
 * (as far as JSON Schema can say; the API's own rules may still refuse some), and invalid variants
 * of them, each made by one mutation at one place of a valid value.
 */
import fc from 'fast-check';

export type JsonSchema = Record<string, any>;

/** Follows `$ref`s (`#/components/...`) within `root`. */
export function deref(schema: JsonSchema | undefined, root: JsonSchema): JsonSchema {
  let current = schema ?? {};
  for (let hops = 0; current.$ref && hops < 20; hops++) {
    current = (current.$ref as string)
      .slice(2)
      .split('/')
      .reduce((node: any, part: string) => node?.[part.replaceAll('~1', '/').replaceAll('~0', '~')], root);
  }
  return current ?? {};
}

export const typesOf = (schema: JsonSchema): string[] =>
  Array.isArray(schema.type) ? schema.type : schema.type ? [schema.type] : [];

const MAX_DEPTH = 6;
const MAX_ITEMS = 3;

function stringArbitrary(schema: JsonSchema): fc.Arbitrary<string> {
  switch (schema.format) {
    case 'uuid':
      return fc.uuid();
    case 'date-time':
      return fc
        .date({ min: new Date('2020-01-01'), max: new Date('2035-01-01'), noInvalidDate: true })
        .map((date) => date.toISOString());
    case 'uri':
    case 'url':
      return fc.webUrl();
    case 'email':
      return fc.emailAddress();
  }
  const minLength = schema.minLength ?? 0;
  const maxLength = Math.min(schema.maxLength ?? 40, minLength + 40);
  if (schema.pattern) {
    return fc
      .stringMatching(new RegExp(schema.pattern))
      .filter((value) => value.length >= minLength && value.length <= (schema.maxLength ?? Infinity));
  }
  return fc.string({ minLength, maxLength, unit: 'grapheme' });
}

function numberArbitrary(schema: JsonSchema, integer: boolean): fc.Arbitrary<number> {
  const min = schema.minimum ?? (schema.exclusiveMinimum !== undefined ? schema.exclusiveMinimum + 1 : -1_000_000);
  const max = schema.maximum ?? (schema.exclusiveMaximum !== undefined ? schema.exclusiveMaximum - 1 : 1_000_000);
  return integer
    ? fc.integer({ min: Math.ceil(min), max: Math.floor(max) })
    : fc.double({ min, max, noNaN: true, noDefaultInfinity: true });
}

/** Values the schema accepts. */
export function valid(raw: JsonSchema | undefined, root: JsonSchema, depth = 0): fc.Arbitrary<unknown> {
  const schema = deref(raw, root);
  // The contract's example passes the API's own rules too (which JSON Schema cannot always say).
  if (schema.example !== undefined && typeof schema.example !== 'object') {
    const { example, ...rest } = schema;
    return fc.oneof(fc.constant(example), valid(rest, root, depth));
  }
  if (schema.const !== undefined) return fc.constant(schema.const);
  if (schema.enum) return fc.constantFrom(...(schema.enum as unknown[]));
  const union = schema.oneOf ?? schema.anyOf;
  if (union) return fc.oneof(...union.map((branch: JsonSchema) => valid(branch, root, depth + 1)));
  if (schema.allOf)
    return valid(
      schema.allOf.reduce((merged: JsonSchema, part: JsonSchema) => mergeObjects(merged, deref(part, root)), {}),
      root,
      depth,
    );
  const types = typesOf(schema);
  const options: fc.Arbitrary<unknown>[] = [];
  for (const type of types.length > 0 ? types : schema.properties ? ['object'] : ['string', 'integer']) {
    if (type === 'null') options.push(fc.constant(null));
    if (type === 'string') options.push(stringArbitrary(schema));
    if (type === 'integer') options.push(numberArbitrary(schema, true));
    if (type === 'number') options.push(numberArbitrary(schema, false));
    if (type === 'boolean') options.push(fc.boolean());
    if (type === 'array') {
      const minLength = schema.minItems ?? 0;
      const maxLength = Math.max(minLength, Math.min(schema.maxItems ?? MAX_ITEMS, MAX_ITEMS));
      options.push(
        depth >= MAX_DEPTH && minLength === 0
          ? fc.constant([])
          : fc.array(valid(schema.items, root, depth + 1), { minLength, maxLength }),
      );
    }
    if (type === 'object') options.push(objectArbitrary(schema, root, depth));
  }
  return options.length === 1 ? options[0]! : fc.oneof(...options);
}

function mergeObjects(a: JsonSchema, b: JsonSchema): JsonSchema {
  return {
    ...a,
    ...b,
    properties: { ...a.properties, ...b.properties },
    required: [...(a.required ?? []), ...(b.required ?? [])],
  };
}

function objectArbitrary(schema: JsonSchema, root: JsonSchema, depth: number): fc.Arbitrary<unknown> {
  const properties = Object.entries<JsonSchema>(schema.properties ?? {});
  const required: string[] = schema.required ?? [];
  if (properties.length === 0) {
    // A free-form object (documents, metadata): a few members of plain values.
    return fc.dictionary(
      fc.string({ minLength: 1, maxLength: 12 }),
      fc.oneof(fc.string({ maxLength: 20 }), fc.integer(), fc.boolean()),
      {
        maxKeys: 4,
      },
    );
  }
  const members = Object.fromEntries(
    properties
      .filter(([name]) => depth < MAX_DEPTH || required.includes(name))
      .map(([name, property]) => [name, valid(property, root, depth + 1)]),
  );
  return fc.record(members, { requiredKeys: required.filter((name) => name in members) });
}

/** Text an attacker sends: unstorable characters, SQL, script, a huge string, odd Unicode. */
export const hostileText = fc.constantFrom(
  'a\u0000b',
  'a\ud800b',
  '\udc00',
  "'; DROP TABLE products; --",
  "' OR '1'='1",
  '<script>alert(1)</script>',
  '{{7*7}}${7*7}',
  '../../etc/passwd',
  '\u202e\u200b\ufeff',
  'x'.repeat(100_000),
);

/** A value of another JSON type than `value`'s, or an extreme of its own. */
const wrongValue = fc.oneof(
  hostileText,
  fc.constantFrom<unknown>(
    null,
    true,
    0,
    -1,
    1e308,
    -1e308,
    2 ** 53,
    1.5,
    '',
    '1',
    [],
    {},
    [[[[[[[[[[]]]]]]]]]],
    { $gt: '' },
    Array.from({ length: 5_000 }, (_, i) => i),
  ),
  fc.constant(null).map(() => deeplyNested(2_000)),
);

function deeplyNested(depth: number): unknown {
  let value: unknown = 'bottom';
  for (let i = 0; i < depth; i++) value = i % 2 === 0 ? [value] : { a: value };
  return value;
}

/** The paths of every node of a JSON value (the root is []). */
function pathsOf(value: unknown, path: (string | number)[] = [], found: (string | number)[][] = []) {
  found.push(path);
  if (Array.isArray(value)) value.forEach((item, i) => pathsOf(item, [...path, i], found));
  else if (value !== null && typeof value === 'object')
    for (const [key, item] of Object.entries(value)) pathsOf(item, [...path, key], found);
  return found;
}

type Mutation = { kind: 'replace'; value: unknown } | { kind: 'remove' } | { kind: 'add'; key: string; value: unknown };

function applyMutation(value: unknown, path: (string | number)[], mutation: Mutation): unknown {
  if (path.length === 0) {
    if (mutation.kind === 'replace') return mutation.value;
    if (mutation.kind === 'add' && value !== null && typeof value === 'object' && !Array.isArray(value))
      return { ...value, [mutation.key]: mutation.value };
    return mutation.kind === 'remove' ? undefined : value;
  }
  const [head, ...rest] = path;
  if (Array.isArray(value)) {
    const copy = [...value];
    const next = applyMutation(copy[head as number], rest, mutation);
    if (next === undefined && rest.length === 0) copy.splice(head as number, 1);
    else copy[head as number] = next;
    return copy;
  }
  const copy = { ...(value as Record<string, unknown>) };
  const next = applyMutation(copy[head as string], rest, mutation);
  if (next === undefined && rest.length === 0) delete copy[head as string];
  else copy[head as string] = next;
  return copy;
}

const mutation: fc.Arbitrary<Mutation> = fc.oneof(
  wrongValue.map((value) => ({ kind: 'replace' as const, value })),
  fc.constant({ kind: 'remove' as const }),
  fc.record({
    kind: fc.constant('add' as const),
    key: fc.oneof(fc.constantFrom('unknown_field', '__proto__', 'constructor', 'a\u0000b'), fc.string()),
    value: wrongValue,
  }),
);

/** A value of `values` with one mutation (a wrong value, a removed or an unknown member) at one of its places. */
export function mutatedSomewhere(values: fc.Arbitrary<unknown>): fc.Arbitrary<unknown> {
  return fc.tuple(values, fc.nat(), mutation).map(([value, pick, change]) => {
    const paths = pathsOf(value);
    return applyMutation(value, paths[pick % paths.length]!, change);
  });
}

/** A valid value of the schema with one mutation at one of its places: the API must refuse it cleanly. */
export const invalid = (schema: JsonSchema | undefined, root: JsonSchema) => mutatedSomewhere(valid(schema, root));
