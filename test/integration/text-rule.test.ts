/**
 * The one text rule, proven against the contracts rather than a hand-made list: every string field
 * of every REST operation in openapi.yaml (path, query and body) and of every GraphQL mutation and
 * query argument in the SDL is sent U+0000 and an unpaired surrogate, each answer must be a 400
 * (GraphQL: VALIDATION_ERROR) naming that field, and the database must be exactly as before.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import {
  buildSchema,
  getNamedType,
  isEnumType,
  isInputObjectType,
  isListType,
  isNonNullType,
  isObjectType,
  isScalarType,
  type GraphQLArgument,
  type GraphQLInputType,
} from 'graphql';
import { beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { OPENAPI_FILE } from '../../src/kernel/rest/openapi-yaml';
import { BASE_SCHEMA_FILE, readTypeDefs, SCHEMA_DIR } from '../../src/kernel/graphql/schema';
import { UNSTORABLE_TEXT_MESSAGE } from '../../src/kernel/validation';
import { createTenant, startTestApp, TEST_MASTER_KEY, type Tenant } from '../helpers/app';
import { sql } from '../helpers/db';

// Registrations are limited per address; these tests send many, and the limit has tests of its own.
const t = await startTestApp({ env: { OAUTH_REGISTRATIONS_PER_MINUTE: '1000000' } });
let tenant: Tenant;

/** Text PostgreSQL cannot store: NUL, and a high surrogate with no low one after it. */
const BAD_TEXTS = { nul: 'a\u0000b', surrogate: 'a\ud800b' };

type Path = (string | number)[];
type JsonSchema = Record<string, any>;

const contract = parse(readFileSync(OPENAPI_FILE, 'utf8'));

/** Follows `$ref`s into components. */
function deref(schema: JsonSchema | undefined): JsonSchema {
  let current = schema ?? {};
  while (current.$ref) {
    current = (current.$ref as string)
      .slice(2)
      .split('/')
      .reduce((node: any, part: string) => node[part], contract);
  }
  return current;
}

const typesOf = (schema: JsonSchema): string[] =>
  Array.isArray(schema.type) ? schema.type : schema.type ? [schema.type] : [];

/** A plausible value of a schema: enough for a request to reach validation with one field made bad. */
function sample(raw: JsonSchema | undefined, depth = 0): unknown {
  const schema = deref(raw);
  if (schema.const !== undefined) return schema.const;
  if (schema.enum) return schema.enum.find((value: unknown) => value !== null);
  const union = schema.oneOf ?? schema.anyOf;
  if (union)
    return sample(
      union.find((branch: JsonSchema) => !typesOf(deref(branch)).includes('null')),
      depth + 1,
    );
  const types = typesOf(schema).filter((type) => type !== 'null');
  switch (types[0]) {
    case 'string':
      if (schema.format === 'uuid') return randomUUID();
      if (schema.format === 'date-time') return new Date(Date.now() + 3_600_000).toISOString();
      if (schema.format === 'uri') return 'https://shop.example.com/x';
      if (schema.format === 'email') return 'someone@example.com';
      return 'x';
    case 'integer':
    case 'number':
      return schema.minimum ?? 1;
    case 'boolean':
      return true;
    case 'array':
      return depth > 6 || !schema.minItems ? [] : [sample(schema.items, depth + 1)];
    case 'object':
    default:
      if (depth > 6 || !schema.properties) return {};
      return Object.fromEntries(
        (schema.required ?? []).map((name: string) => [name, sample(schema.properties[name], depth + 1)]),
      );
  }
}

/** Every way to put `bad` into a value of the schema: at each string field, and as a member name. */
function variants(raw: JsonSchema | undefined, bad: string, depth = 0): { value: unknown; path: Path }[] {
  const schema = deref(raw);
  if (depth > 6 || schema.const !== undefined || schema.enum) return [];
  const union = schema.oneOf ?? schema.anyOf;
  if (union) return union.flatMap((branch: JsonSchema) => variants(branch, bad, depth + 1));
  const types = typesOf(schema);
  const found: { value: unknown; path: Path }[] = [];
  if (types.includes('string')) found.push({ value: bad, path: [] });
  if (types.includes('array')) {
    for (const inner of variants(schema.items, bad, depth + 1))
      found.push({ value: [inner.value], path: [0, ...inner.path] });
  }
  if (types.includes('object') || (types.length === 0 && !schema.properties && depth > 0)) {
    const base = sample(schema, depth) as Record<string, unknown>;
    for (const [name, property] of Object.entries<JsonSchema>(schema.properties ?? {})) {
      for (const inner of variants(property, bad, depth + 1))
        found.push({ value: { ...base, [name]: inner.value }, path: [name, ...inner.path] });
    }
    if (!schema.properties || schema.additionalProperties) found.push({ value: { ...base, [bad]: 'x' }, path: [bad] });
  }
  return found;
}

/** How the API names a place in its input: `body.data[0].name`. */
const fieldName = (prefix: string, path: Path) =>
  path.reduce<string>((field, part) => (typeof part === 'number' ? `${field}[${part}]` : `${field}.${part}`), prefix);

interface Case {
  title: string;
  method: string;
  url: string;
  token: string;
  body?: unknown;
  field: string;
}

/** Existing entities for path parameters, so a request that slipped through would really change something. */
const pathValues = (): Record<string, string> => ({
  tenant_id: tenant.id,
  key: 'shop',
  alias: 'products',
  key_id: randomUUID(),
  code: 'x',
});

function restCases(): Case[] {
  const cases: Case[] = [];
  for (const [template, item] of Object.entries<Record<string, any>>(contract.paths)) {
    for (const [method, operation] of Object.entries<Record<string, any>>(item)) {
      if (!['get', 'post', 'put', 'patch', 'delete'].includes(method)) continue;
      const token = JSON.stringify(operation.security ?? []).includes('masterKey') ? TEST_MASTER_KEY : tenant.key;
      const parameters: JsonSchema[] = (operation.parameters ?? []).map(deref);
      const path = (values: Record<string, string>) =>
        template.replace(/\{(\w+)\}/g, (_, name: string) => encodeURIComponent(values[name] ?? 'x'));
      const required = new URLSearchParams();
      for (const parameter of parameters.filter((p) => p.in === 'query' && p.required))
        required.set(parameter.name, String(sample(parameter.schema)));
      const query = (extra?: [string, string]) => {
        const search = new URLSearchParams(required);
        if (extra) search.set(...extra);
        const text = search.toString();
        return text ? `?${text}` : '';
      };
      const jsonBody = deref(operation.requestBody)?.content?.['application/json']?.schema;
      const body = jsonBody ? sample(jsonBody) : undefined;
      const title = `${method.toUpperCase()} ${template}`;
      // NUL reaches path and query as %00; an unpaired surrogate cannot be percent-encoded as UTF-8.
      for (const parameter of parameters.filter((p) => p.in === 'path')) {
        cases.push({
          title: `${title} path ${parameter.name}`,
          method,
          url: path({ ...pathValues(), [parameter.name]: BAD_TEXTS.nul }) + query(),
          token,
          body,
          field: `path.${parameter.name}`,
        });
      }
      for (const parameter of parameters.filter(
        (p) => p.in === 'query' && typesOf(deref(p.schema)).includes('string'),
      )) {
        cases.push({
          title: `${title} query ${parameter.name}`,
          method,
          url: path(pathValues()) + query([parameter.name, BAD_TEXTS.nul]),
          token,
          body,
          field: `query.${parameter.name}`,
        });
      }
      for (const [kind, bad] of Object.entries(BAD_TEXTS)) {
        for (const variant of variants(jsonBody, bad)) {
          cases.push({
            title: `${title} body ${fieldName('', variant.path)} (${kind})`,
            method,
            url: path(pathValues()) + query(),
            token,
            body: variant.value,
            field: fieldName('body', variant.path),
          });
        }
      }
    }
  }
  return cases;
}

/**
 * Every row of every table, as text: equal snapshots mean nothing changed. Except the rate limit
 * counters: a refused request counts against its caller's limit like any other (the public search
 * events are limited per address before their body is read).
 */
async function snapshot(): Promise<Record<string, string>> {
  const tables = await sql<{ name: string }>(
    t.databaseUrl,
    `SELECT table_name AS name FROM information_schema.tables
      WHERE table_schema = 'public' AND table_type = 'BASE TABLE' AND table_name <> 'rate_limits'
      ORDER BY table_name`,
  );
  const result: Record<string, string> = {};
  for (const { name } of tables) {
    const [row] = await sql<{ digest: string }>(
      t.databaseUrl,
      `SELECT md5(coalesce(string_agg(r::text, '|' ORDER BY r::text), '')) AS digest FROM "${name}" r`,
    );
    result[name] = row!.digest;
  }
  return result;
}

beforeAll(async () => {
  tenant = await createTenant(t.rest, 'Text rule');
  const proxy = await t.rest.post('/api/storage/edge/proxies', {
    token: tenant.key,
    body: { data: { key: 'shop', routes: { path: '*', origin: { uri: 'https://shop.example.com' } } } },
  });
  expect(proxy.status).toBe(201);
  const index = await t.rest.post('/api/instant/indexes', {
    token: tenant.key,
    body: { data: { name: 'Products', alias: 'products', fields: [{ from: 'title', type: 'STRING' }] } },
  });
  expect(index.status).toBe(201);
});

describe('the text rule over every REST operation', () => {
  it('refuses U+0000 and unpaired surrogates in every path, query and body string with a 400 naming the field', async () => {
    const cases = restCases();
    expect(cases.length).toBeGreaterThan(100);
    const before = await snapshot();
    const failures: string[] = [];
    for (const testCase of cases) {
      const response = await t.app.inject({
        method: testCase.method.toUpperCase() as 'GET',
        url: testCase.url,
        headers: {
          authorization: `Bearer ${testCase.token}`,
          ...(testCase.body !== undefined ? { 'content-type': 'application/json' } : {}),
        },
        payload: testCase.body !== undefined ? JSON.stringify(testCase.body) : undefined,
      });
      const body = response.body ? response.json() : null;
      const named = body?.error?.details?.some(
        (detail: { field: string; message: string }) =>
          detail.field === testCase.field && detail.message === UNSTORABLE_TEXT_MESSAGE,
      );
      if (response.statusCode !== 400 || !named || !response.headers['x-request-id'])
        failures.push(`${testCase.title}: ${response.statusCode} ${response.body.slice(0, 300)}`);
    }
    expect(failures).toEqual([]);
    expect(await snapshot()).toEqual(before);
  });

  it('refuses the same characters in a CSV upload, naming the row and column', async () => {
    const csvIndex = await t.rest.post('/api/instant/indexes', {
      token: tenant.key,
      body: { data: { name: 'Feed', alias: 'feed', source: { id: 'feed-1', type: 'CSV_INTEGRATION' } } },
    });
    expect(csvIndex.status).toBe(201);
    const before = await snapshot();
    for (const [csv, field] of [
      ['id,title\n1,ok\n2,a\u0000b\n', '[1].title'],
      // A UTF-8 body cannot carry an unpaired surrogate (it decodes to U+FFFD), so NUL in a column name.
      ['id,ti\u0000tle\n1,ok\n', '[0].ti\u0000tle'],
    ] as const) {
      const response = await t.rest.put('/api/instant/indexes/feed/documents', {
        token: tenant.key,
        rawBody: Buffer.from(csv, 'utf8'),
        headers: { 'content-type': 'text/csv' },
      });
      expect(response.status).toBe(400);
      expect(response.body.error.details).toContainEqual({ field: `body${field}`, message: UNSTORABLE_TEXT_MESSAGE });
    }
    expect(await snapshot()).toEqual(before);
  });

  it('refuses U+0000 in the edge key and in what the sign-in pages are sent, before any lookup', async () => {
    const before = await snapshot();
    const edge = await t.app.inject({ method: 'GET', url: '/edge/sh%00op/index.html' });
    expect(edge.statusCode).toBe(400);
    expect(edge.json().error.details).toEqual([{ field: 'path.key', message: UNSTORABLE_TEXT_MESSAGE }]);
    for (const request of [
      { method: 'GET', url: '/oauth/authorize?client_id=a%00b&response_type=code' },
      { method: 'GET', url: `/oauth/sessions/${randomUUID()}%00` },
      {
        method: 'POST',
        url: `/oauth/sessions/${randomUUID()}/login`,
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        payload: 'email=a%00b%40example.com&password=x&csrf_token=x',
      },
    ] as const) {
      const page = await t.app.inject(request);
      expect(page.statusCode, request.url).toBe(400);
      expect(page.headers['content-type']).toContain('text/html');
      expect(page.body).toContain('must not contain U+0000');
    }
    expect(await snapshot()).toEqual(before);
  });

  it('refuses control characters other than tab, CR and LF in names', async () => {
    const before = await snapshot();
    const tenantName = await t.rest.post('/api/admin/tenants', {
      token: TEST_MASTER_KEY,
      body: { data: { name: 'Shop\u0007' } },
    });
    expect(tenantName.status).toBe(400);
    expect(tenantName.body.error.details[0].field).toBe('body.data.name');
    const indexName = await t.rest.post('/api/instant/indexes', {
      token: tenant.key,
      body: { data: { name: 'Prod\u001bucts' } },
    });
    expect(indexName.status).toBe(400);
    expect(await snapshot()).toEqual(before);
    const withTab = await t.rest.post('/api/admin/tenants', {
      token: TEST_MASTER_KEY,
      body: { data: { name: 'A\tB' } },
    });
    expect(withTab.status).toBe(201);
  });
});

const sdl = buildSchema(
  readTypeDefs(
    readdirSync(SCHEMA_DIR)
      .filter((file) => file.endsWith('.graphql') && file !== BASE_SCHEMA_FILE)
      .sort(),
  ).join('\n'),
);

/** A plausible GraphQL input value: required fields only. */
function sampleInput(type: GraphQLInputType, depth = 0): unknown {
  if (isNonNullType(type)) return sampleInput(type.ofType, depth);
  if (isListType(type)) return [sampleInput(type.ofType, depth + 1)];
  if (isEnumType(type)) return type.getValues()[0]!.value;
  if (isInputObjectType(type)) {
    if (depth > 5) return {};
    return Object.fromEntries(
      Object.values(type.getFields())
        .filter((field) => isNonNullType(field.type))
        .map((field) => [field.name, sampleInput(field.type, depth + 1)]),
    );
  }
  switch (type.name) {
    case 'ID':
      return randomUUID();
    case 'Int':
    case 'Int64':
    case 'Float':
      return 1;
    case 'Boolean':
      return true;
    case 'DateTime':
      return new Date(Date.now() + 3_600_000).toISOString();
    default:
      return 'x';
  }
}

/** Every way to put `bad` into a GraphQL input: at each String, ID or text scalar field. */
function inputVariants(type: GraphQLInputType, bad: string, depth = 0): { value: unknown; path: Path }[] {
  if (isNonNullType(type)) return inputVariants(type.ofType, bad, depth);
  if (isListType(type))
    return inputVariants(type.ofType, bad, depth + 1).map((inner) => ({
      value: [inner.value],
      path: [0, ...inner.path],
    }));
  if (isEnumType(type)) return [];
  if (isInputObjectType(type)) {
    if (depth > 5) return [];
    const base = sampleInput(type, depth) as Record<string, unknown>;
    return Object.values(type.getFields()).flatMap((field) =>
      inputVariants(field.type, bad, depth + 1).map((inner) => ({
        value: { ...base, [field.name]: inner.value },
        path: [field.name, ...inner.path],
      })),
    );
  }
  return isScalarType(type) && ['String', 'ID', 'QueryFilter', 'DateTime'].includes(type.name)
    ? [{ value: bad, path: [] }]
    : [];
}

function graphqlCases() {
  const cases: { title: string; query: string; variables: Record<string, unknown>; field: string }[] = [];
  for (const [operation, root] of [
    ['mutation', sdl.getMutationType()!],
    ['query', sdl.getQueryType()!],
  ] as const) {
    for (const field of Object.values(root.getFields())) {
      const selection = isObjectType(getNamedType(field.type)) ? ' { __typename }' : '';
      const declared = (args: readonly GraphQLArgument[]) => args.map((arg) => `$${arg.name}: ${String(arg.type)}`);
      const passed = field.args.map((arg) => `${arg.name}: $${arg.name}`);
      const query = field.args.length
        ? `${operation}(${declared(field.args).join(', ')}) { ${field.name}(${passed.join(', ')})${selection} }`
        : '';
      const required = Object.fromEntries(
        field.args.filter((arg) => isNonNullType(arg.type)).map((arg) => [arg.name, sampleInput(arg.type)]),
      );
      for (const arg of field.args) {
        for (const [kind, bad] of Object.entries(BAD_TEXTS)) {
          for (const variant of inputVariants(arg.type, bad)) {
            cases.push({
              title: `${field.name} ${fieldName(arg.name, variant.path)} (${kind})`,
              query,
              variables: { ...required, [arg.name]: variant.value },
              field: fieldName(arg.name, variant.path),
            });
          }
        }
      }
    }
  }
  return cases;
}

describe('the text rule over every GraphQL argument', () => {
  it('answers VALIDATION_ERROR naming the field for U+0000 and unpaired surrogates, and changes nothing', async () => {
    const cases = graphqlCases();
    expect(cases.length).toBeGreaterThan(100);
    const before = await snapshot();
    const failures: string[] = [];
    for (const testCase of cases) {
      const response = await t.app.inject({
        method: 'POST',
        url: '/graphql',
        headers: { authorization: `Bearer ${tenant.key}`, 'content-type': 'application/json' },
        payload: JSON.stringify({ query: testCase.query, variables: testCase.variables }),
      });
      const error = response.json().errors?.[0];
      if (error?.extensions?.code !== 'VALIDATION_ERROR' || error.extensions.field !== testCase.field)
        failures.push(`${testCase.title}: ${response.statusCode} ${response.body.slice(0, 300)}`);
    }
    expect(failures).toEqual([]);
    expect(await snapshot()).toEqual(before);
  });
});
