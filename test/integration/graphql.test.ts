import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { errorRegistry } from '../../src/kernel/errors';
import { GRAPHQL_LIMITS } from '../../src/kernel/graphql/yoga';
import { uuidv7 } from '../../src/kernel/ids';
import { createKey, createTenant, startTestApp, TEST_MASTER_KEY, type Tenant, type TestApp } from '../helpers/app';
import { sql } from '../helpers/db';

interface GraphQLErrorBody {
  message: string;
  path?: (string | number)[];
  locations?: unknown;
  extensions?: { code?: string; field?: string; [name: string]: unknown };
}

interface GraphQLResponse {
  status: number;
  headers: Record<string, string>;
  body: { data?: any; errors?: GraphQLErrorBody[] };
  rawBody: string;
}

interface ProductNode {
  id: string;
  name: string;
  sku: string;
  gtin?: string[];
}

let t: TestApp;
let tenantA: Tenant;
let tenantB: Tenant;
let emptyTenant: Tenant;
/** Tenant A's products in creation order. */
let productsA: ProductNode[];
let productsB: ProductNode[];

/** POST /graphql (not part of openapi.yaml, so not through the REST contract client). */
async function graphql(
  query: string,
  options: {
    token?: string | null;
    variables?: Record<string, unknown>;
    headers?: Record<string, string>;
    body?: unknown;
  } = {},
): Promise<GraphQLResponse> {
  const token = options.token === undefined ? tenantA.key : options.token;
  const response = await t.app.inject({
    method: 'POST',
    url: '/graphql',
    headers: {
      'content-type': 'application/json',
      ...(token !== null ? { authorization: `Bearer ${token}` } : {}),
      ...options.headers,
    },
    payload: JSON.stringify(options.body ?? { query, variables: options.variables }),
  });
  return {
    status: response.statusCode,
    headers: Object.fromEntries(Object.entries(response.headers).map(([name, value]) => [name, String(value)])),
    body: JSON.parse(response.body),
    rawBody: response.body,
  };
}

/** Asserts one GraphQL error with the given code, answered with HTTP 200; returns it. */
function expectError(response: GraphQLResponse, code: string): GraphQLErrorBody {
  expect(response.status, response.rawBody).toBe(200);
  expect(response.body.errors, response.rawBody).toBeDefined();
  const [error] = response.body.errors!;
  expect(error!.extensions?.code, response.rawBody).toBe(code);
  return error!;
}

/** Asserts a request refused before execution (parse, validation or limits): an error and no `data` key at all. */
function expectRefused(response: GraphQLResponse): GraphQLErrorBody {
  const error = expectError(response, 'VALIDATION_ERROR');
  expect(response.body).not.toHaveProperty('data');
  return error;
}

const PRODUCT_PAGE = `query Products($first: Int, $after: String, $last: Int, $before: String) {
  products(first: $first, after: $after, last: $last, before: $before) {
    edges { cursor node { id name sku gtin } }
    pageInfo { hasNextPage hasPreviousPage startCursor endCursor }
  }
}`;

interface ProductPage {
  edges: { cursor: string; node: ProductNode }[];
  pageInfo: { hasNextPage: boolean; hasPreviousPage: boolean; startCursor: string | null; endCursor: string | null };
}

async function productPage(variables: Record<string, unknown>, token = tenantA.key): Promise<ProductPage> {
  const response = await graphql(PRODUCT_PAGE, { token, variables });
  expect(response.status, response.rawBody).toBe(200);
  expect(response.body.errors, response.rawBody).toBeUndefined();
  return response.body.data.products;
}

/** Inserts products straight into the database, with UUIDv7 ids that increase in creation order. */
async function insertProducts(tenantId: string, count: number, prefix: string): Promise<ProductNode[]> {
  const start = Date.now() - 60_000;
  const products = Array.from({ length: count }, (_, index) => ({
    id: uuidv7(start + index),
    name: `${prefix} product ${index}`,
    sku: `${prefix}-SKU-${String(index).padStart(3, '0')}`,
    gtin: index % 3 === 0 ? null : [`${8_700_000_000_000 + index}`],
  }));
  const values = products.map(
    (_, index) => `($${index * 5 + 1}, $${index * 5 + 2}, $${index * 5 + 3}, $${index * 5 + 4}, $${index * 5 + 5})`,
  );
  await sql(
    t.databaseUrl,
    `INSERT INTO products (id, tenant_id, sku, name, gtin) VALUES ${values.join(', ')}`,
    products.flatMap((product) => [product.id, tenantId, product.sku, product.name, product.gtin]),
  );
  return products.map((product) => ({ ...product, gtin: product.gtin ?? [] }));
}

beforeAll(async () => {
  t = await startTestApp();
  tenantA = await createTenant(t.rest, 'Tenant A');
  tenantB = await createTenant(t.rest, 'Tenant B');
  emptyTenant = await createTenant(t.rest, 'Empty tenant');
  productsA = await insertProducts(tenantA.id, 25, 'A');
  productsB = await insertProducts(tenantB.id, 3, 'B');
});

afterEach(() => {
  vi.restoreAllMocks();
});

describe('products connection', () => {
  it('answers the example of the specification', async () => {
    const response = await graphql(
      '{ products(first: 2) { edges { cursor node { id name sku } } pageInfo { hasNextPage hasPreviousPage startCursor endCursor } } }',
    );
    expect(response.status).toBe(200);
    expect(response.body.errors).toBeUndefined();
    const { edges, pageInfo } = response.body.data.products as ProductPage;
    expect(edges.map((edge) => edge.node)).toEqual(
      productsA.slice(0, 2).map(({ id, name, sku }) => ({ id, name, sku })),
    );
    expect(edges.every((edge) => typeof edge.cursor === 'string' && edge.cursor.length > 0)).toBe(true);
    expect(edges[0]!.cursor).not.toBe(edges[1]!.cursor);
    expect(pageInfo).toEqual({
      hasNextPage: true,
      hasPreviousPage: false,
      startCursor: edges[0]!.cursor,
      endCursor: edges[1]!.cursor,
    });
  });

  it('returns the product fields, gtin as an empty list when none is stored', async () => {
    const page = await productPage({ first: 3 });
    expect(page.edges.map((edge) => edge.node)).toEqual(productsA.slice(0, 3));
    expect(page.edges[0]!.node.gtin).toEqual([]);
    expect(page.edges[1]!.node.gtin).toHaveLength(1);
  });

  it('walks every page forwards with first/after, in creation order', async () => {
    const seen: ProductNode[] = [];
    const pages: ProductPage[] = [];
    let after: string | null = null;
    do {
      const page = await productPage({ first: 7, after });
      pages.push(page);
      seen.push(...page.edges.map((edge) => edge.node));
      expect(page.pageInfo.startCursor).toBe(page.edges[0]!.cursor);
      expect(page.pageInfo.endCursor).toBe(page.edges.at(-1)!.cursor);
      after = page.pageInfo.hasNextPage ? page.pageInfo.endCursor : null;
    } while (after !== null && pages.length < 10);

    expect(pages.map((page) => page.edges.length)).toEqual([7, 7, 7, 4]);
    expect(pages.map((page) => page.pageInfo.hasPreviousPage)).toEqual([false, true, true, true]);
    expect(pages.map((page) => page.pageInfo.hasNextPage)).toEqual([true, true, true, false]);
    expect(seen).toEqual(productsA);

    // After the last edge: an empty page that knows what lies before it.
    const beyond = await productPage({ first: 7, after: pages.at(-1)!.pageInfo.endCursor });
    expect(beyond).toEqual({
      edges: [],
      pageInfo: { hasNextPage: false, hasPreviousPage: true, startCursor: null, endCursor: null },
    });
  });

  it('walks every page backwards with last/before, starting from the end of the list', async () => {
    const pages: ProductPage[] = [];
    let before: string | null | undefined;
    do {
      const page = await productPage({ last: 7, before });
      pages.push(page);
      before = page.pageInfo.hasPreviousPage ? page.pageInfo.startCursor : null;
    } while (before !== null && pages.length < 10);

    expect(pages.map((page) => page.edges.length)).toEqual([7, 7, 7, 4]);
    expect(pages.map((page) => page.pageInfo.hasNextPage)).toEqual([false, true, true, true]);
    expect(pages.map((page) => page.pageInfo.hasPreviousPage)).toEqual([true, true, true, false]);
    // Each page is in list order; the pages come last first.
    expect(pages[0]!.edges.map((edge) => edge.node)).toEqual(productsA.slice(18));
    expect(pages.reverse().flatMap((page) => page.edges.map((edge) => edge.node))).toEqual(productsA);
  });

  it('pages back and forth over the same cursors', async () => {
    const second = await productPage({ first: 5, after: (await productPage({ first: 5 })).pageInfo.endCursor });
    expect(second.edges.map((edge) => edge.node)).toEqual(productsA.slice(5, 10));
    const backToFirst = await productPage({ last: 5, before: second.pageInfo.startCursor });
    expect(backToFirst.edges.map((edge) => edge.node)).toEqual(productsA.slice(0, 5));
    expect(backToFirst.pageInfo).toMatchObject({ hasPreviousPage: false, hasNextPage: true });
    // A cursor is the position of its edge: paging forwards from an edge starts right after it.
    const fromMiddle = await productPage({ first: 2, after: second.edges[2]!.cursor });
    expect(fromMiddle.edges.map((edge) => edge.node)).toEqual(productsA.slice(8, 10));
  });

  it('returns 10 products when no page size is given, and up to 100 when asked', async () => {
    const page = await productPage({});
    expect(page.edges.map((edge) => edge.node)).toEqual(productsA.slice(0, 10));
    expect(page.pageInfo.hasNextPage).toBe(true);
    const all = await productPage({ first: 100 });
    expect(all.edges).toHaveLength(25);
    expect(all.pageInfo).toMatchObject({ hasNextPage: false, hasPreviousPage: false });
    const lastOne = await productPage({ last: 1 });
    expect(lastOne.edges.map((edge) => edge.node)).toEqual([productsA[24]]);
  });

  it.each([
    ['first: 0', { first: 0 }, 'first'],
    ['first: 101', { first: 101 }, 'first'],
    ['first: -1', { first: -1 }, 'first'],
    ['last: 0', { last: 0 }, 'last'],
    ['last: 101', { last: 101 }, 'last'],
  ])('refuses %s with VALIDATION_ERROR and HTTP 200', async (_name, variables, field) => {
    const response = await graphql(PRODUCT_PAGE, { variables });
    const error = expectError(response, 'VALIDATION_ERROR');
    expect(error.extensions?.field).toBe(field);
    expect(error.path).toEqual(['products']);
    expect(error.message).toMatch(/^Bad request: /);
    expect(response.body.data).toBeNull();
  });

  it('refuses page sizes written as literals too', async () => {
    for (const size of ['0', '101', '-1']) {
      const response = await graphql(`{ products(first: ${size}) { edges { cursor } } }`);
      expect(expectError(response, 'VALIDATION_ERROR').extensions?.field).toBe('first');
      expect(response.body.data).toBeNull();
    }
  });

  it('refuses argument combinations that have no single meaning', async () => {
    const { endCursor } = (await productPage({ first: 3 })).pageInfo;
    for (const variables of [
      { first: 2, last: 2 },
      { after: endCursor, before: endCursor },
      { first: 2, before: endCursor },
      { last: 2, after: endCursor },
    ]) {
      const response = await graphql(PRODUCT_PAGE, { variables });
      expectError(response, 'VALIDATION_ERROR');
      expect(response.body.data).toBeNull();
    }
  });

  it('refuses forged and tampered cursors', async () => {
    const real = (await productPage({ first: 3 })).edges[1]!.cursor;
    const [payload, signature] = real.split('.') as [string, string];
    const otherKeyPayload = Buffer.from(JSON.stringify({ s: `products:${tenantA.id}`, k: productsA[20]!.id })).toString(
      'base64url',
    );
    const forged = [
      'abc',
      Buffer.from(productsA[5]!.id).toString('base64url'),
      `${otherKeyPayload}.${signature}`,
      `${payload}.${Buffer.alloc(16).toString('base64url')}`,
      `${payload}.${signature}.extra`,
      `${payload}x.${signature}`,
      'x'.repeat(2000),
    ];
    for (const cursor of forged) {
      for (const variables of [
        { first: 2, after: cursor },
        { last: 2, before: cursor },
      ]) {
        const response = await graphql(PRODUCT_PAGE, { variables });
        const error = expectError(response, 'VALIDATION_ERROR');
        expect(error.extensions?.field).toBe('after' in variables ? 'after' : 'before');
        expect(response.body.data).toBeNull();
      }
    }
  });

  it("refuses another tenant's cursor", async () => {
    const cursorOfB = (await productPage({ first: 1 }, tenantB.key)).pageInfo.endCursor;
    expect(cursorOfB).toBeTruthy();
    const response = await graphql(PRODUCT_PAGE, { variables: { first: 2, after: cursorOfB } });
    expect(expectError(response, 'VALIDATION_ERROR').extensions?.field).toBe('after');
    expect(response.body.data).toBeNull();
  });

  it('shows each tenant only its own products', async () => {
    const pageB = await productPage({ first: 100 }, tenantB.key);
    expect(pageB.edges.map((edge) => edge.node)).toEqual(productsB);
    const idsOfA = new Set(productsA.map((product) => product.id));
    expect(pageB.edges.some((edge) => idsOfA.has(edge.node.id))).toBe(false);

    const emptyForward = await productPage({ first: 10 }, emptyTenant.key);
    const emptyBackward = await productPage({ last: 10 }, emptyTenant.key);
    for (const page of [emptyForward, emptyBackward]) {
      expect(page).toEqual({
        edges: [],
        pageInfo: { hasNextPage: false, hasPreviousPage: false, startCursor: null, endCursor: null },
      });
    }
  });
});

describe('authentication and scopes', () => {
  it('answers HTTP 401 before execution when the bearer token is missing or invalid', async () => {
    const revoked = (
      await t.rest.post(`/api/admin/tenants/${tenantA.id}/api-keys`, {
        token: TEST_MASTER_KEY,
        body: { data: { name: 'revoked', scopes: ['*'] } },
      })
    ).body.data as { id: string; key: string };
    expect((await graphql('{ ping }', { token: revoked.key })).status).toBe(200);
    expect(
      (await t.rest.delete(`/api/admin/tenants/${tenantA.id}/api-keys/${revoked.id}`, { token: TEST_MASTER_KEY }))
        .status,
    ).toBe(204);
    const listProducts = vi.spyOn(t.services.catalog, 'listProducts');
    const [, idHex] = /^cpk_([0-9a-f]{32})_/.exec(tenantA.key)!;
    const cases: [string, Record<string, string>][] = [
      ['no header', {}],
      ['empty bearer', { authorization: 'Bearer' }],
      ['basic scheme', { authorization: 'Basic dXNlcjpwYXNz' }],
      ['malformed token', { authorization: 'Bearer not-a-key' }],
      ['unknown key', { authorization: `Bearer cpk_${'0'.repeat(32)}_${'A'.repeat(43)}` }],
      ['wrong secret', { authorization: `Bearer cpk_${idHex}_${'B'.repeat(43)}` }],
      ['master key', { authorization: `Bearer ${TEST_MASTER_KEY}` }],
      ['revoked key', { authorization: `Bearer ${revoked.key}` }],
    ];
    for (const [name, headers] of cases) {
      const response = await graphql('{ products { edges { cursor } } }', { token: null, headers });
      expect(response.status, name).toBe(401);
      expect(response.body.errors?.[0]?.extensions?.code, name).toBe('UNAUTHORIZED');
      expect(response.body.errors?.[0]?.message, name).toMatch(/^Unauthorized: /);
      expect(response.body, name).not.toHaveProperty('data');
    }
    expect(listProducts).not.toHaveBeenCalled();
  });

  it('answers FORBIDDEN with HTTP 200 and data null for a key without catalog:read', async () => {
    const key = await createKey(t.rest, tenantA.id, ['proxies:read', 'catalog:write']);
    const response = await graphql('{ products { edges { node { id } } } }', { token: key });
    const error = expectError(response, 'FORBIDDEN');
    expect(error.message).toMatch(/^Forbidden: /);
    expect(error.path).toEqual(['products']);
    expect(response.body.data).toBeNull();
  });

  it('reads products with catalog:read alone', async () => {
    const key = await createKey(t.rest, tenantA.id, ['catalog:read']);
    const page = await productPage({ first: 1 }, key);
    expect(page.edges.map((edge) => edge.node)).toEqual([productsA[0]]);
  });

  it('answers { ping } for any valid key, whatever its scopes', async () => {
    for (const scopes of [['proxies:read'], ['catalog:read'], ['*']]) {
      const key = await createKey(t.rest, tenantA.id, scopes);
      const response = await graphql('{ ping }', { token: key });
      expect(response.status).toBe(200);
      expect(response.body).toEqual({ data: { ping: true } });
    }
  });
});

describe('introspection', () => {
  it('refuses introspection in POSTed operations', async () => {
    for (const query of ['{ __schema { types { name } } }', '{ __type(name: "Product") { name fields { name } } }']) {
      const response = await graphql(query);
      const error = expectRefused(response);
      expect(error.message).toMatch(/introspection/i);
      expect(response.rawBody).not.toContain('ProductConnection');
    }
  });

  it('still answers __typename', async () => {
    const response = await graphql('{ __typename products(first: 1) { __typename edges { node { __typename } } } }');
    expect(response.status).toBe(200);
    expect(response.body).toEqual({
      data: {
        __typename: 'Query',
        products: { __typename: 'ProductConnection', edges: [{ node: { __typename: 'Product' } }] },
      },
    });
  });

  it('returns the introspection at GET /graphql?private=1 to an authenticated caller', async () => {
    const key = await createKey(t.rest, tenantA.id, ['proxies:read']);
    const response = await t.app.inject({
      method: 'GET',
      url: '/graphql?private=1',
      headers: { authorization: `Bearer ${key}` },
    });
    expect(response.statusCode).toBe(200);
    const body = JSON.parse(response.body);
    const types = body.data.__schema.types as { name: string; description: string | null }[];
    expect(types.map((type) => type.name)).toEqual(
      expect.arrayContaining(['Query', 'Product', 'ProductConnection', 'PageInfo', 'Int64']),
    );
    expect(types.find((type) => type.name === 'Product')?.description).toBe(
      "A sellable product of the tenant's catalog.",
    );
  });

  it('answers 401 at GET /graphql?private=1 without a valid key', async () => {
    for (const headers of [{}, { authorization: 'Bearer not-a-key' }]) {
      const response = await t.app.inject({ method: 'GET', url: '/graphql?private=1', headers });
      expect(response.statusCode).toBe(401);
      const body = JSON.parse(response.body);
      expect(body.errors[0].extensions.code).toBe('UNAUTHORIZED');
      expect(body).not.toHaveProperty('data');
    }
  });

  it('answers 405 with Allow: POST to other GET requests', async () => {
    for (const url of ['/graphql', '/graphql?private=0', '/graphql?query=%7Bping%7D']) {
      const response = await t.app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${tenantA.key}` } });
      expect(response.statusCode, url).toBe(405);
      expect(response.headers.allow, url).toBe('POST');
      const body = JSON.parse(response.body);
      expect(body.errors[0].message, url).toMatch(/^Method not allowed: /);
      expect(body).not.toHaveProperty('data');
    }
  });

  it("gives an error on /graphql the registry's GraphQL code for its status, not VALIDATION_ERROR for all", async () => {
    const put = await t.app.inject({
      method: 'PUT',
      url: '/graphql',
      headers: { authorization: `Bearer ${tenantA.key}` },
    });
    expect(put.statusCode).toBe(404);
    expect(JSON.parse(put.body).errors[0].extensions.code).toBe('NOT_FOUND');
    const big = await t.app.inject({
      method: 'POST',
      url: '/graphql',
      headers: { authorization: `Bearer ${tenantA.key}`, 'content-type': 'application/json' },
      payload: JSON.stringify({ query: `{ ping }`, variables: { padding: 'x'.repeat(1_100_000) } }),
    });
    expect(big.statusCode).toBe(413);
    expect(JSON.parse(big.body).errors[0].extensions.code).toBe('VALIDATION_ERROR');
  });
});

describe('operation limits', () => {
  const nestedFragments = (levels: number) => `{ ${'... on Query { '.repeat(levels)}ping${' }'.repeat(levels)} }`;
  const aliasedPings = (count: number) =>
    `{ ${Array.from({ length: count }, (_, index) => `p${index}: ping`).join(' ')} }`;

  it(`refuses operations deeper than ${GRAPHQL_LIMITS.maxDepth}`, async () => {
    // The schema is shallow; nested inline fragments count as levels too.
    const atLimit = await graphql(nestedFragments(GRAPHQL_LIMITS.maxDepth - 1));
    expect(atLimit.body).toEqual({ data: { ping: true } });
    const tooDeep = await graphql(nestedFragments(GRAPHQL_LIMITS.maxDepth));
    expect(expectRefused(tooDeep).message).toMatch(/depth/i);
  });

  it(`refuses more than ${GRAPHQL_LIMITS.maxAliases} aliases`, async () => {
    const atLimit = await graphql(aliasedPings(GRAPHQL_LIMITS.maxAliases));
    expect(atLimit.status).toBe(200);
    expect(Object.keys(atLimit.body.data)).toHaveLength(GRAPHQL_LIMITS.maxAliases);
    const tooMany = await graphql(aliasedPings(GRAPHQL_LIMITS.maxAliases + 1));
    expect(expectRefused(tooMany).message).toMatch(/alias/i);
  });

  it(`refuses operations of more than ${GRAPHQL_LIMITS.maxTokens} tokens`, async () => {
    // Many small operations (5 tokens each): repeating one field instead would trip graphql-js's
    // own budget for comparing overlapping fields first.
    const operations = (tokens: number) => ({
      query: Array.from({ length: Math.ceil(tokens / 5) }, (_, index) => `query Q${index} { ping }`).join('\n'),
      operationName: 'Q0',
    });
    const underLimit = await graphql('', { body: operations(GRAPHQL_LIMITS.maxTokens - 10) });
    expect(underLimit.body).toEqual({ data: { ping: true } });
    const tooLong = await graphql('', { body: operations(GRAPHQL_LIMITS.maxTokens + 5) });
    expect(expectRefused(tooLong).message).toMatch(/token/i);
  });

  it(`refuses more than ${GRAPHQL_LIMITS.maxDirectives} directives`, async () => {
    const directives = (count: number) => `{ ${'ping @include(if: true) '.repeat(count)}}`;
    expect((await graphql(directives(GRAPHQL_LIMITS.maxDirectives))).body).toEqual({ data: { ping: true } });
    expect(expectRefused(await graphql(directives(GRAPHQL_LIMITS.maxDirectives + 1))).message).toMatch(/directive/i);
  });

  it(`refuses operations costing more than ${GRAPHQL_LIMITS.maxCost}`, async () => {
    const fullPage =
      'products(first: 100) { edges { cursor node { id name sku gtin } } pageInfo { hasNextPage hasPreviousPage startCursor endCursor } }';
    const one = await graphql(`{ ${fullPage} }`);
    expect(one.body.errors).toBeUndefined();
    expect(one.body.data.products.edges).toHaveLength(25);
    const two = await graphql(`{ a: ${fullPage} b: ${fullPage} }`);
    expect(expectRefused(two).message).toMatch(/cost/i);
  });
});

describe('errors', () => {
  it.each([
    ['no Accept header', {}],
    ['Accept: application/json', { accept: 'application/json' }],
    ['Accept: application/graphql-response+json', { accept: 'application/graphql-response+json' }],
  ])('answers a syntax error with VALIDATION_ERROR and HTTP 200 (%s)', async (_name, headers) => {
    const response = await graphql('{ products(first: 2) { edges { node { id }', { headers });
    expect(expectRefused(response).message).toMatch(/^Syntax Error/);
  });

  it.each([
    ['an unknown field', '{ nope }'],
    ['a literal of the wrong type', '{ products(first: "two") { edges { cursor } } }'],
    ['a missing selection', '{ products }'],
    ['an unknown argument', '{ products(size: 2) { edges { cursor } } }'],
    ['a mutation (the schema has none)', 'mutation { ping }'],
  ])('answers %s with VALIDATION_ERROR and HTTP 200', async (_name, query) => {
    const response = await graphql(query, { headers: { accept: 'application/graphql-response+json' } });
    const error = expectError(response, 'VALIDATION_ERROR');
    expect(response.body.data ?? null).toBeNull();
    expect(Object.keys(error.extensions ?? {})).toEqual(['code']);
  });

  it('does not suggest field names', async () => {
    const response = await graphql('{ pin }');
    expect(expectRefused(response).message).not.toMatch(/did you mean/i);
    expect(response.rawBody).not.toContain('"ping"');
  });

  it('answers bad variables and request parameters with VALIDATION_ERROR and HTTP 200', async () => {
    const badVariable = await graphql(PRODUCT_PAGE, { variables: { first: 'two' } });
    expectRefused(badVariable);
    const requests = [
      { variables: {} },
      { query: '{ ping }', variables: 'not an object' },
      { query: 'query A { ping } query B { ping }' },
      { query: '{ ping }', operationName: 'Missing' },
    ];
    for (const body of requests) {
      const response = await graphql('', { body, headers: { accept: 'application/graphql-response+json' } });
      const error = expectRefused(response);
      expect(Object.keys(error.extensions ?? {}), JSON.stringify(body)).toEqual(['code']);
    }
  });

  it.each(['text/plain', 'application/graphql', 'application/x-www-form-urlencoded'])(
    'answers a %s body with 415 and errors',
    async (contentType) => {
      const response = await t.app.inject({
        method: 'POST',
        url: '/graphql',
        headers: { authorization: `Bearer ${tenantA.key}`, 'content-type': contentType },
        payload: '{ ping }',
      });
      expect(response.statusCode).toBe(415);
      const body = JSON.parse(response.body);
      expect(body.errors[0].message).toMatch(/^Unsupported media type: /);
      expect(body.errors[0].extensions.code).toBe('VALIDATION_ERROR');
      expect(body).not.toHaveProperty('data');
    },
  );

  it('masks unexpected errors as INTERNAL_SERVER_ERROR', async () => {
    vi.spyOn(t.services.catalog, 'listProducts').mockRejectedValueOnce(
      new Error('connect ECONNREFUSED 10.1.2.3:5432 while reading "products"'),
    );
    const response = await graphql('{ ping products { edges { cursor } } }');
    const error = expectError(response, 'INTERNAL_SERVER_ERROR');
    expect(error.message).toBe(errorRegistry.INTERNAL.message);
    expect(error.path).toEqual(['products']);
    expect(Object.keys(error.extensions ?? {})).toEqual(['code']);
    expect(response.rawBody).not.toContain('ECONNREFUSED');
    expect(response.body.data).toBeNull();
  });
});

describe("plain JSON operations, executed without yoga's Fetch API layer", () => {
  // `extensions: {}` sends the same operation through yoga's full handler: both must answer alike.
  const throughYoga = (query: string, variables?: Record<string, unknown>) =>
    graphql(query, { body: { query, variables, extensions: {} } });
  const cases: [string, string, Record<string, unknown>?][] = [
    [
      'a page of products',
      '{ products(first: 2) { edges { cursor node { id name sku } } pageInfo { hasNextPage endCursor } } }',
    ],
    ['a field error beside data', '{ ping product(id: "00000000-0000-7000-8000-000000000000") { id } }'],
    ['a variable of the wrong type', 'query ($n: Int) { products(first: $n) { edges { cursor } } }', { n: 'two' }],
    ['an invalid argument', '{ products(first: 1000) { edges { cursor } } }'],
    ['a mutation refused by validation', 'mutation { createBusiness(input: { name: "" }) { business { id } } }'],
  ];
  it.each(cases)("answers %s exactly as yoga's handler does", async (_name, query, variables) => {
    const direct = await graphql(query, { variables });
    const viaYoga = await throughYoga(query, variables);
    expect(direct.status).toBe(viaYoga.status);
    expect(direct.headers['content-type']).toBe(viaYoga.headers['content-type']);
    expect(direct.body).toEqual(viaYoga.body);
  });

  it('leaves what it does not handle to yoga: a parse error, a batch, another media type', async () => {
    expectError(await graphql('{ products( }'), 'VALIDATION_ERROR');
    const batch = await graphql('', { body: [{ query: '{ ping }' }] });
    expect(batch.status).toBe(200);
    expect(batch.body.errors?.[0]?.extensions?.code).toBe('VALIDATION_ERROR');
    const strict = await graphql('{ ping }', { headers: { accept: 'application/graphql-response+json' } });
    expect(strict.headers['content-type']).toContain('application/graphql-response+json');
    expect(strict.body).toEqual({ data: { ping: true } });
  });
});
