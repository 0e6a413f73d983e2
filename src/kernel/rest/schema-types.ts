/**
 * Every schema of the document states its `type`. The generator leaves it out of unions
 * (`anyOf` of a route and an array of routes), of a referenced schema with a description of its
 * own (`allOf: [{$ref}, {description}]`) and of `z.unknown()`; Scalar's reference rejects such
 * schemas in a referenced component ("document validation errors") and renders them empty. The
 * added keywords restate what the members already allow, so nothing accepted or answered changes.
 */

type Schema = Record<string, unknown>;

/** Every JSON value (`integer` is a `number`). */
const ANY_VALUE = ['object', 'array', 'string', 'number', 'boolean', 'null'];

/** Keywords that describe a schema without constraining its values. */
const ANNOTATIONS = new Set([
  'description',
  'title',
  'example',
  'examples',
  'default',
  'deprecated',
  'readOnly',
  'writeOnly',
]);

const isSchema = (value: unknown): value is Schema =>
  typeof value === 'object' && value !== null && !Array.isArray(value);
const onlyAnnotations = (schema: Schema, besides: string[] = []) =>
  Object.keys(schema).every((key) => ANNOTATIONS.has(key) || besides.includes(key));
const annotationsOf = (schema: Schema) =>
  Object.fromEntries(Object.entries(schema).filter(([key]) => ANNOTATIONS.has(key)));

/** The JSON types a schema allows, or undefined when it allows any value. */
function typesOf(schema: Schema, components: Record<string, Schema>, seen = new Set<string>()): string[] | undefined {
  if (typeof schema.$ref === 'string') {
    const name = schema.$ref.replace('#/components/schemas/', '');
    const target = components[name];
    if (!target || seen.has(name)) return undefined;
    return typesOf(target, components, new Set([...seen, name]));
  }
  if (typeof schema.type === 'string') return [schema.type];
  if (Array.isArray(schema.type)) return schema.type as string[];
  const alternatives = (schema.anyOf ?? schema.oneOf) as Schema[] | undefined;
  if (alternatives) {
    const types = alternatives.map((member) => typesOf(member, components, seen));
    if (types.some((memberTypes) => memberTypes === undefined)) return undefined;
    return [...new Set(types.flat() as string[])];
  }
  if (Array.isArray(schema.allOf)) {
    const constrained = (schema.allOf as Schema[])
      .map((member) => typesOf(member, components, seen))
      .filter((types): types is string[] => types !== undefined);
    if (constrained.length === 0) return undefined;
    return constrained.reduce((common, types) => common.filter((type) => types.includes(type)));
  }
  return undefined;
}

/** `allOf: [{$ref}, {description}]` as `{$ref, description}`: OpenAPI 3.1 allows annotations beside a `$ref`. */
function referenceWithAnnotations(schema: Schema): Schema | undefined {
  const allOf = schema.allOf;
  if (!Array.isArray(allOf) || !onlyAnnotations(schema, ['allOf'])) return undefined;
  const members = allOf as Schema[];
  const references = members.filter((member) => '$ref' in member);
  if (references.length !== 1) return undefined;
  const others = members.filter((member) => member !== references[0]);
  if (!others.every((member) => onlyAnnotations(member))) return undefined;
  return Object.assign({ $ref: references[0]!.$ref }, ...others.map(annotationsOf), annotationsOf(schema)) as Schema;
}

/** Gives one schema, and the schemas inside it, their `type`. Returns the schema to put in its place. */
function typed(schema: Schema, components: Record<string, Schema>): Schema {
  const reference = referenceWithAnnotations(schema);
  if (reference) return reference;
  for (const key of ['properties', 'patternProperties'] as const) {
    if (isSchema(schema[key])) {
      const members = schema[key];
      for (const [name, member] of Object.entries(members))
        if (isSchema(member)) members[name] = typed(member, components);
    }
  }
  for (const key of ['items', 'not'] as const) if (isSchema(schema[key])) schema[key] = typed(schema[key], components);
  if (isSchema(schema.additionalProperties)) {
    // `{}` (any value) is what `true` says.
    schema.additionalProperties =
      Object.keys(schema.additionalProperties).length === 0 ? true : typed(schema.additionalProperties, components);
  }
  for (const key of ['anyOf', 'oneOf', 'allOf', 'prefixItems'] as const) {
    if (Array.isArray(schema[key])) schema[key] = (schema[key] as Schema[]).map((member) => typed(member, components));
  }
  if ('type' in schema || '$ref' in schema) return schema;

  const types = typesOf(schema, components);
  if (types === undefined) {
    // Any value. Objects of any shape, which code generators otherwise read as `{}` with no keys.
    return { type: ANY_VALUE, additionalProperties: true, ...schema };
  }
  const alternatives = (schema.anyOf ?? schema.oneOf) as Schema[] | undefined;
  const arrays = alternatives?.filter((member) => member.type === 'array' && isSchema(member.items)) ?? [];
  return {
    type: types.length === 1 ? types[0] : types,
    // Beside other types, the items of the one array alternative: generators otherwise type them `unknown`.
    ...(types.length > 1 && arrays.length === 1 ? { items: arrays[0]!.items } : {}),
    ...schema,
  };
}

interface Content {
  content?: Record<string, { schema?: Schema }>;
  headers?: Record<string, { schema?: Schema }>;
}

/** The document with a `type` in every schema: components, parameters, bodies, responses and headers. */
export function withSchemaTypes<TDocument extends object>(document: TDocument): TDocument {
  const doc = document as {
    components?: {
      schemas?: Record<string, Schema>;
      responses?: Record<string, Content>;
      parameters?: Record<string, { schema?: Schema }>;
    };
    paths?: Record<
      string,
      Record<string, { parameters?: { schema?: Schema }[]; requestBody?: Content; responses?: Record<string, Content> }>
    >;
  };
  const components = doc.components?.schemas ?? {};
  const holders: { schema?: Schema }[] = [];
  const collect = (holder: Content | undefined) => {
    holders.push(...Object.values(holder?.content ?? {}), ...Object.values(holder?.headers ?? {}));
  };
  for (const name of Object.keys(components)) components[name] = typed(components[name]!, components);
  for (const response of Object.values(doc.components?.responses ?? {})) collect(response);
  holders.push(...Object.values(doc.components?.parameters ?? {}));
  for (const item of Object.values(doc.paths ?? {})) {
    for (const operation of Object.values(item)) {
      if (!isSchema(operation)) continue;
      holders.push(...(operation.parameters ?? []));
      collect(operation.requestBody);
      for (const response of Object.values(operation.responses ?? {})) collect(response);
    }
  }
  for (const holder of holders) if (isSchema(holder.schema)) holder.schema = typed(holder.schema, components);
  return document;
}
