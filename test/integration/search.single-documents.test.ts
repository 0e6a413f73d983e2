/**
 * Documents one by one (`/api/instant/indexes/{alias}/documents/{id}`), deleting by ids or by a
 * filter on index fields, and PATCH merging fields into stored documents: all or none, refusals
 * that change nothing (the index version stays), and every process's in-memory copy following
 * each change.
 */
import { beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { EmbeddedEngine } from '../../src/modules/search/engine/embedded-engine';
import { createKey, createTenant, startTestApp, type Tenant, startSecondProcess } from '../helpers/app';
import { sql } from '../helpers/db';
import { type RestClient, expectRestError } from '../helpers/rest';

const { rest, databaseUrl } = await startTestApp();

const INDEXES = '/api/instant/indexes';
const DOCUMENTS = `${INDEXES}/shop/documents`;

/** The index's version and its stored documents: what a refused request must leave as it was. */
const state = async () => ({
  version: (await sql(databaseUrl, "SELECT version FROM search_indexes WHERE alias = 'shop'"))[0]!.version,
  documents: await sql(
    databaseUrl,
    "SELECT d.id, d.data FROM search_documents d JOIN search_indexes i ON i.id = d.index_id WHERE i.alias = 'shop' ORDER BY d.id",
  ),
});

const PRODUCTS = [
  { id: 'p1', name: 'Red shirt', brand: 'Acme', price: 20, in_stock: true, metadata: { url: 'https://x.test/p1' } },
  { id: 'p2', name: 'Blue shirt', brand: 'Acme', price: 35, in_stock: false },
  { id: 'p3', name: 'Green shirt', brand: 'Globex', price: 15, in_stock: true },
  { id: 4, name: 'Yellow shirt', brand: 'Initech', price: 50, in_stock: true },
];

let a: Tenant;
let b: Tenant;
/** A key of tenant A that may read indexes and search, not write. */
let readerKey: string;

beforeAll(async () => {
  a = await createTenant(rest, 'A');
  b = await createTenant(rest, 'B');
  readerKey = await createKey(rest, a.id, ['indexes:read', 'search']);
  const index = {
    name: 'Shop',
    alias: 'shop',
    fields: [
      { from: 'name', type: 'STRING' },
      { from: 'brand', type: 'STRING' },
      { from: 'price', type: 'NUMBER' },
      { from: 'in_stock', type: 'BOOLEAN' },
    ],
    filters: [{ key: 'brand' }, { key: 'price' }],
  };
  expect((await rest.post(INDEXES, { token: a.key, body: { data: index } })).status).toBe(201);
});

beforeEach(async () => {
  expect((await rest.delete(DOCUMENTS, { token: a.key })).status).toBe(204);
  expect((await rest.put(DOCUMENTS, { token: a.key, body: { data: PRODUCTS } })).status).toBe(204);
});

const search = async (client: RestClient, context: object = {}) => {
  const response = await client.post('/api/instant/search/indexes/shop', { token: a.key, body: { data: [context] } });
  expect(response.status, response.rawBody).toBe(201);
  return response.body.data[0].results[0];
};
const ids = async (client: RestClient = rest, context: object = {}) =>
  (await search(client, { limit: 100, ...context })).hits.map((hit: { id: string }) => hit.id).sort();

describe('GET a document', () => {
  it('answers the stored document with its metadata; an integer id by its digits', async () => {
    const response = await rest.get(`${DOCUMENTS}/p1`, { token: readerKey });
    expect(response.status, response.rawBody).toBe(200);
    expect(response.body).toEqual({ data: PRODUCTS[0], page: null, meta: null });
    expect((await rest.get(`${DOCUMENTS}/4`, { token: a.key })).body.data).toEqual(PRODUCTS[3]);
  });

  it('an unknown id, alias or another tenant: 404; no token: 401', async () => {
    expectRestError(await rest.get(`${DOCUMENTS}/nope`, { token: a.key }), 404);
    expectRestError(await rest.get(`${INDEXES}/nope/documents/p1`, { token: a.key }), 404);
    expectRestError(await rest.get(`${DOCUMENTS}/p1`, { token: b.key }), 404);
    expectRestError(await rest.get(`${DOCUMENTS}/p1`), 401);
  });
});

describe('DELETE a document', () => {
  it('deletes it (204) in one version; searches no longer find it; again: 404', async () => {
    const before = await state();
    expect((await rest.delete(`${DOCUMENTS}/p2`, { token: a.key })).status).toBe(204);
    expect(await ids()).toEqual(['4', 'p1', 'p3']);
    const after = await state();
    expect(Number(after.version)).toBe(Number(before.version) + 1);
    expectRestError(await rest.get(`${DOCUMENTS}/p2`, { token: a.key }), 404);
    expectRestError(await rest.delete(`${DOCUMENTS}/p2`, { token: a.key }), 404);
    expect(await state()).toEqual(after);
  });

  it('another tenant: 404; a token without indexes:write: 403; both change nothing', async () => {
    const before = await state();
    expectRestError(await rest.delete(`${DOCUMENTS}/p1`, { token: b.key }), 404);
    expectRestError(await rest.delete(`${DOCUMENTS}/p1`, { token: readerKey }), 403);
    expect(await state()).toEqual(before);
  });
});

describe('DELETE documents by filter', () => {
  const deleteWhere = (query: string) => rest.delete(`${DOCUMENTS}?${query}`, { token: a.key });

  it('by ids: 200 with how many existed', async () => {
    const response = await deleteWhere('filter[id][in]=p1,4,unknown');
    expect(response.status, response.rawBody).toBe(200);
    expect(response.body).toEqual({ data: { deleted: 2 }, page: null, meta: null });
    expect(await ids()).toEqual(['p2', 'p3']);
    expect((await deleteWhere('filter[id][eq]=p3')).body.data).toEqual({ deleted: 1 });
    expect(await ids()).toEqual(['p2']);
  });

  it('by a filter on index fields, the filters ANDed and with the ids', async () => {
    expect((await deleteWhere('filter[brand][eq]=Acme&filter[price][gt]=30')).body.data).toEqual({ deleted: 1 });
    expect(await ids()).toEqual(['4', 'p1', 'p3']);
    expect((await deleteWhere('filter[in_stock][eq]=true&filter[id][in]=p1,p3')).body.data).toEqual({ deleted: 2 });
    expect(await ids()).toEqual(['4']);
    expect((await deleteWhere('filter[brand][in]=Globex,Initech')).body.data).toEqual({ deleted: 1 });
    expect(await ids()).toEqual([]);
  });

  it('nothing matching: 200 with 0, and the version stays', async () => {
    const before = await state();
    expect((await deleteWhere('filter[brand][eq]=Nobody')).body.data).toEqual({ deleted: 0 });
    expect(await state()).toEqual(before);
  });

  const refused: [string, string, string][] = [
    ['an unknown field', 'filter[colour][eq]=red', 'query.filter[colour][eq]'],
    ['a value of the wrong type', 'filter[price][lt]=cheap', 'query.filter[price][lt]'],
    ['a range on a STRING field', 'filter[brand][gt]=A', 'query.filter[brand][gt]'],
    ['an unknown operator', 'filter[brand][like]=A', 'query.filter[brand][like]'],
    ['a parameter that is no filter', 'brand=Acme', 'query.brand'],
    ['a range on ids', 'filter[id][gt]=p1', 'query.filter[id][gt]'],
    ['both id forms', 'filter[id][eq]=p1&filter[id][in]=p2', 'query.filter[id][eq]'],
  ];
  for (const [what, query, field] of refused) {
    it(`${what}: 400 naming ${field}, even beside a good filter, and nothing is deleted`, async () => {
      const before = await state();
      const response = await deleteWhere(`filter[brand][eq]=Acme&${query}`);
      expectRestError(response, 400);
      expect(response.body.error.details).toEqual([expect.objectContaining({ field })]);
      expect(await state()).toEqual(before);
    });
  }

  it('without a filter the whole index is still cleared: 204', async () => {
    expect((await rest.delete(DOCUMENTS, { token: a.key })).status).toBe(204);
    expect(await ids()).toEqual([]);
  });
});

describe('PATCH documents', () => {
  const patch = (data: unknown) => rest.patch(DOCUMENTS, { token: a.key, body: { data } });

  it('merges the given fields, removes those set to null, keeps the rest; searches see the change', async () => {
    const response = await patch([
      { id: 'p1', price: 12, metadata: null },
      { id: 4, name: 'Yellow tee', in_stock: null },
    ]);
    expect(response.status, response.rawBody).toBe(204);
    expect((await rest.get(`${DOCUMENTS}/p1`, { token: a.key })).body.data).toEqual({
      id: 'p1',
      name: 'Red shirt',
      brand: 'Acme',
      price: 12,
      in_stock: true,
    });
    expect((await rest.get(`${DOCUMENTS}/4`, { token: a.key })).body.data).toEqual({
      id: 4,
      name: 'Yellow tee',
      brand: 'Initech',
      price: 50,
    });
    expect(await ids(rest, { filters: [{ key: 'price', operator: 'lt', values: [13] }] })).toEqual(['p1']);
    expect(await ids(rest, { q: 'tee' })).toEqual(['4']);
  });

  const refused: [string, unknown[], number, string | null][] = [
    [
      'an unknown id, beside a good change',
      [
        { id: 'p1', price: 1 },
        { id: 'ghost', price: 2 },
      ],
      404,
      null,
    ],
    [
      'a value of the wrong type',
      [
        { id: 'p1', price: 1 },
        { id: 'p2', price: 'cheap' },
      ],
      400,
      'body.data[1].price',
    ],
    ['a missing id', [{ price: 1 }], 400, 'body.data[0].id'],
    [
      'the same id twice',
      [
        { id: 'p1', price: 1 },
        { id: 'p1', price: 2 },
      ],
      400,
      'body.data[1].id',
    ],
    ['an empty list', [], 400, 'body.data'],
    ['1001 documents', Array.from({ length: 1001 }, (_, i) => ({ id: `p${i}` })), 400, 'body.data'],
  ];
  for (const [what, data, status, field] of refused) {
    it(`${what}: ${status}${field ? ` naming ${field}` : ''}, and nothing changes`, async () => {
      const before = await state();
      const response = await patch(data);
      expectRestError(response, status);
      if (field)
        expect(response.body.error.details).toEqual(expect.arrayContaining([expect.objectContaining({ field })]));
      expect(await state()).toEqual(before);
    });
  }

  it('another tenant: 404; a token without indexes:write: 403', async () => {
    const before = await state();
    expectRestError(await rest.patch(DOCUMENTS, { token: b.key, body: { data: [{ id: 'p1', price: 1 }] } }), 404);
    expectRestError(await rest.patch(DOCUMENTS, { token: readerKey, body: { data: [{ id: 'p1', price: 1 }] } }), 403);
    expect(await state()).toEqual(before);
  });
});

describe('every process follows', () => {
  it("another process's copy drops deleted documents and takes patched ones without a rebuild", async () => {
    const other = await startSecondProcess({ databaseUrl });
    expect(await ids(other.rest)).toEqual(['4', 'p1', 'p2', 'p3']);
    const [row] = await sql<{ id: string }>(databaseUrl, "SELECT id FROM search_indexes WHERE alias = 'shop'");
    const engine = other.services.search.engine as EmbeddedEngine;

    expect((await rest.delete(`${DOCUMENTS}/p1`, { token: a.key })).status).toBe(204);
    expect((await rest.delete(`${DOCUMENTS}?filter[brand][eq]=Globex`, { token: a.key })).status).toBe(200);
    expect((await rest.patch(DOCUMENTS, { token: a.key, body: { data: [{ id: 'p2', price: 5 }] } })).status).toBe(204);
    expect(await ids(other.rest)).toEqual(['4', 'p2']);
    expect(engine.documentCount(row!.id)).toBe(2);
    const [p2] = (await search(other.rest, { q: 'blue' })).hits;
    expect(p2).toMatchObject({ id: 'p2', price: 5 });

    // Deleted, then written again: the copy holds the new document.
    expect((await rest.delete(`${DOCUMENTS}/4`, { token: a.key })).status).toBe(204);
    expect((await rest.put(DOCUMENTS, { token: a.key, body: { data: [PRODUCTS[3]] } })).status).toBe(204);
    expect(await ids(other.rest)).toEqual(['4', 'p2']);
  });
});
