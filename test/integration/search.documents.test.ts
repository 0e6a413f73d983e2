/**
 * Documents over REST (`/api/instant/indexes/{alias}/documents`): upsert by id, all or nothing,
 * metadata, the batch limit, clearing, CSV uploads; durability across a restart (a new process on
 * the same database rebuilds every document), and concurrent upserts and searches in two
 * processes never showing half a batch.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { EmbeddedEngine } from '../../src/modules/search/engine/embedded-engine';
import { createTenant, startTestApp, type Tenant, startSecondProcess } from '../helpers/app';
import { sql } from '../helpers/db';
import { expectRestError } from '../helpers/rest';

const { rest, databaseUrl } = await startTestApp();

const INDEXES = '/api/instant/indexes';

const storedDocuments = () =>
  sql(databaseUrl, 'SELECT index_id, id, data, version FROM search_documents ORDER BY index_id, id');

let a: Tenant;
let b: Tenant;

beforeAll(async () => {
  a = await createTenant(rest, 'A');
  b = await createTenant(rest, 'B');
  const typed = {
    name: 'Typed',
    alias: 'typed',
    fields: [
      { from: 'name', type: 'STRING' },
      { from: 'price', type: 'NUMBER' },
      { from: 'in_stock', type: 'BOOLEAN' },
    ],
    filters: [{ key: 'price' }],
  };
  expect((await rest.post(INDEXES, { token: a.key, body: { data: typed } })).status).toBe(201);
});

const upsert = (token: string, alias: string, documents: unknown[]) =>
  rest.put(`${INDEXES}/${alias}/documents`, { token, body: { data: documents } });
const search = async (token: string, alias: string, context: object = {}) => {
  const response = await rest.post(`/api/instant/search/indexes/${alias}`, { token, body: { data: [context] } });
  expect(response.status, response.rawBody).toBe(201);
  return response.body.data[0].results[0];
};

describe('upsert', () => {
  it('stores documents by id (string or integer): 204, searchable at once, metadata stored and returned', async () => {
    const response = await upsert(a.key, 'typed', [
      {
        id: 'lamp-1',
        name: 'Desk lamp',
        price: 25,
        in_stock: true,
        metadata: { url: 'https://shop.example.com/lamp-1', tags: ['x'] },
      },
      { id: 7, name: 'Office chair', price: '150.5', in_stock: 'false' },
    ]);
    expect(response.status, response.rawBody).toBe(204);
    expect(response.rawBody).toBe('');
    const result = await search(a.key, 'typed', { q: 'chair' });
    expect(result.hits).toEqual([
      expect.objectContaining({ id: '7', name: 'Office chair', price: 150.5, in_stock: false, metadata: null }),
    ]);
    const [lamp] = (await search(a.key, 'typed', { q: 'lamp' })).hits;
    expect(lamp.metadata).toEqual({ url: 'https://shop.example.com/lamp-1', tags: ['x'] });
    const rows = await sql(
      databaseUrl,
      "SELECT d.id, d.data FROM search_documents d JOIN search_indexes i ON i.id = d.index_id WHERE i.alias = 'typed' ORDER BY d.id",
    );
    expect(rows.map((row) => row.id)).toEqual(['7', 'lamp-1']);
    expect(rows[1]!.data).toMatchObject({ metadata: { url: 'https://shop.example.com/lamp-1' } });
  });

  it('replaces a document with the same id', async () => {
    await upsert(a.key, 'typed', [{ id: 'swap', name: 'Green sofa', price: 1 }]);
    await upsert(a.key, 'typed', [{ id: 'swap', name: 'Blue couch', price: 2 }]);
    expect((await search(a.key, 'typed', { q: 'sofa' })).count).toBe(0);
    expect((await search(a.key, 'typed', { q: 'couch' })).hits).toEqual([
      expect.objectContaining({ id: 'swap', price: 2 }),
    ]);
  });

  const refused: [string, unknown[], string][] = [
    [
      'a value of the wrong type, even beside good documents',
      [
        { id: 'ok-1', name: 'Fine' },
        { id: 'bad', name: 'Bad', price: 'cheap' },
      ],
      'body.data[1].price',
    ],
    ['a boolean that is not one', [{ id: 'bad', in_stock: 'maybe' }], 'body.data[0].in_stock'],
    ['a missing id', [{ name: 'No id' }], 'body.data[0].id'],
    ['an id that is neither a string nor an integer', [{ id: 1.5, name: 'x' }], 'body.data[0].id'],
    [
      'the same id twice',
      [
        { id: 'twice', name: 'a' },
        { id: 'twice', name: 'b' },
      ],
      'body.data[1].id',
    ],
    ['a document that is not an object', ['text'], 'body.data[0]'],
  ];
  for (const [what, documents, field] of refused) {
    it(`${what}: 400 naming ${field}, and nothing is stored`, async () => {
      const before = await storedDocuments();
      const response = await upsert(a.key, 'typed', documents);
      expectRestError(response, 400);
      expect(response.body.error.details).toEqual(expect.arrayContaining([expect.objectContaining({ field })]));
      expect(await storedDocuments()).toEqual(before);
    });
  }

  it("an object where an undeclared field's value belongs, or a type that differs from the one seen: 400", async () => {
    await rest.post(INDEXES, { token: a.key, body: { data: { name: 'Loose', alias: 'loose' } } });
    expect((await upsert(a.key, 'loose', [{ id: 1, price: 10 }])).status).toBe(204);
    const before = await storedDocuments();
    expectRestError(await upsert(a.key, 'loose', [{ id: 2, dimensions: { width: 1 } }]), 400);
    expectRestError(await upsert(a.key, 'loose', [{ id: 3, price: 'ten' }]), 400);
    expect(await storedDocuments()).toEqual(before);
  });

  it('up to 1000 documents per request; 1001 is a 400 and an empty list too', async () => {
    const before = await storedDocuments();
    const many = (n: number) => Array.from({ length: n }, (_, i) => ({ id: `bulk-${i}`, name: `Item ${i}` }));
    expectRestError(await upsert(a.key, 'typed', many(1001)), 400);
    expectRestError(await upsert(a.key, 'typed', []), 400);
    expect(await storedDocuments()).toEqual(before);
    expect((await upsert(a.key, 'typed', many(1000))).status).toBe(204);
    expect((await search(a.key, 'typed', { q: 'item' })).count).toBe(1000);
  });

  it("unknown alias and another tenant's index: 404; a token without indexes:write: 403; no token: 401", async () => {
    const before = await storedDocuments();
    expectRestError(await upsert(a.key, 'nope', [{ id: 1 }]), 404);
    expectRestError(await upsert(b.key, 'typed', [{ id: 1 }]), 404);
    const reader = await createTenant(rest, 'Reader', ['indexes:read']);
    expectRestError(await upsert(reader.key, 'typed', [{ id: 1 }]), 403);
    expectRestError(await rest.put(`${INDEXES}/typed/documents`, { body: { data: [{ id: 1 }] } }), 401);
    expect(await storedDocuments()).toEqual(before);
  });

  it('a body that is not JSON or CSV: 415', async () => {
    const response = await rest.put(`${INDEXES}/typed/documents`, {
      token: a.key,
      rawBody: 'id,name\n1,x',
      headers: { 'content-type': 'text/plain' },
    });
    expectRestError(response, 415);
  });
});

describe('CSV', () => {
  beforeAll(async () => {
    const csvIndex = {
      name: 'Feed',
      alias: 'feed',
      source: { id: 'feed-1', type: 'CSV_INTEGRATION' },
      fields: [
        { from: 'Product name', to: 'name', type: 'STRING' },
        { from: 'Price', to: 'price', type: 'NUMBER' },
      ],
      filters: [{ key: 'price' }],
    };
    expect((await rest.post(INDEXES, { token: a.key, body: { data: csvIndex } })).status).toBe(201);
  });

  const putCsv = (alias: string, csv: string) =>
    rest.put(`${INDEXES}/${alias}/documents`, {
      token: a.key,
      rawBody: csv,
      headers: { 'content-type': 'text/csv; charset=utf-8' },
    });

  it('takes text/csv for a CSV_INTEGRATION index, mapping columns through fields', async () => {
    const response = await putCsv('feed', 'id,Product name,Price,Ignored\nc1,"Lamp, brass",19.95,x\nc2,Chair,120,\n');
    expect(response.status, response.rawBody).toBe(204);
    const result = await search(a.key, 'feed', {
      q: 'lamp',
      filters: [{ key: 'price', operator: 'lt', values: ['20'] }],
    });
    expect(result.hits).toEqual([expect.objectContaining({ id: 'c1', name: 'Lamp, brass', price: 19.95 })]);
  });

  it('refuses CSV for an index of another source type (415), malformed CSV or a bad value (400), changing nothing', async () => {
    const before = await storedDocuments();
    expectRestError(await putCsv('typed', 'id,name\n1,x\n'), 415);
    expectRestError(await putCsv('feed', 'id,Product name\n"unterminated,x\n'), 400);
    expectRestError(await putCsv('feed', 'id,Product name,Price\nc3,Desk,cheap\n'), 400);
    expectRestError(await putCsv('feed', 'id,Product name,Price\n'), 400);
    expect(await storedDocuments()).toEqual(before);
  });
});

describe('clear', () => {
  it('DELETE empties the index (204) and keeps the index; unknown alias or another tenant: 404', async () => {
    await rest.post(INDEXES, { token: a.key, body: { data: { name: 'Clearable', alias: 'clearable' } } });
    await upsert(a.key, 'clearable', [
      { id: 1, name: 'x' },
      { id: 2, name: 'y' },
    ]);
    expectRestError(await rest.delete(`${INDEXES}/clearable/documents`, { token: b.key }), 404);
    expectRestError(await rest.delete(`${INDEXES}/unknown/documents`, { token: a.key }), 404);
    expect((await search(a.key, 'clearable')).count).toBe(2);
    const response = await rest.delete(`${INDEXES}/clearable/documents`, { token: a.key });
    expect(response.status).toBe(204);
    expect((await search(a.key, 'clearable')).count).toBe(0);
    expect((await rest.get(`${INDEXES}/clearable`, { token: a.key })).status).toBe(200);
    expect(await upsert(a.key, 'clearable', [{ id: 3, name: 'z' }])).toMatchObject({ status: 204 });
    expect((await search(a.key, 'clearable')).count).toBe(1);
  });
});

describe('durability and concurrency', () => {
  it('5 000 upserted documents are all there after a restart: a new process rebuilds them from PostgreSQL', async () => {
    const index = { name: 'Durable', alias: 'durable', filters: [{ key: 'group' }] };
    expect((await rest.post(INDEXES, { token: a.key, body: { data: index } })).status).toBe(201);
    for (let start = 0; start < 5000; start += 1000) {
      const documents = Array.from({ length: 1000 }, (_, i) => ({
        id: `d${start + i}`,
        name: `word${start + i} common`,
        group: `g${(start + i) % 5}`,
      }));
      expect((await upsert(a.key, 'durable', documents)).status).toBe(204);
    }

    const restarted = await startSecondProcess({ databaseUrl });
    const response = await restarted.rest.post('/api/instant/search/indexes/durable', {
      token: a.key,
      body: { data: [{ q: 'common', facets: ['group'], limit: 0 }] },
    });
    const result = response.body.data[0].results[0];
    expect(result.count).toBe(5000);
    expect(result.facets.group).toEqual({ g0: 1000, g1: 1000, g2: 1000, g3: 1000, g4: 1000 });
    const [row] = await sql<{ id: string }>(databaseUrl, "SELECT id FROM search_indexes WHERE alias = 'durable'");
    expect((restarted.services.search.engine as EmbeddedEngine).documentCount(row!.id)).toBe(5000);
    for (const n of [0, 1234, 4999]) {
      // Typos let similar words match too; the word itself ranks first.
      const one = await restarted.rest.post('/api/instant/search/indexes/durable', {
        token: a.key,
        body: { data: [{ q: `word${n}` }] },
      });
      expect(one.body.data[0].results[0].hits[0].id).toBe(`d${n}`);
    }
  });

  it('concurrent upserts and searches, in two processes, never show half a batch', async () => {
    const index = {
      name: 'Batches',
      alias: 'batches',
      fields: [
        { from: 'name', type: 'STRING' },
        { from: 'batch', type: 'NUMBER' },
      ],
      facet_fields: ['batch'],
    };
    expect((await rest.post(INDEXES, { token: a.key, body: { data: index } })).status).toBe(201);
    const other = await startSecondProcess({ databaseUrl });
    const batch = (n: number) =>
      Array.from({ length: 300 }, (_, i) => ({ id: `item-${i}`, name: `item ${i}`, batch: n }));
    expect((await upsert(a.key, 'batches', batch(0))).status).toBe(204);

    let writing = true;
    const writers = (async () => {
      for (let n = 1; n <= 12; n++) {
        const writer = n % 2 === 0 ? rest : other.rest;
        expect(
          (await writer.put(`${INDEXES}/batches/documents`, { token: a.key, body: { data: batch(n) } })).status,
        ).toBe(204);
      }
      writing = false;
    })();
    const observed: Record<string, number>[] = [];
    const readers = [rest, other.rest].map(async (reader) => {
      while (writing) {
        const response = await reader.post('/api/instant/search/indexes/batches', {
          token: a.key,
          body: { data: [{ facets: ['batch'], limit: 0 }] },
        });
        observed.push(response.body.data[0].results[0].facets.batch);
      }
    });
    await Promise.all([writers, ...readers]);
    expect(observed.length).toBeGreaterThan(0);
    for (const facet of observed) {
      // Every document always carries the same batch number: one value, counting all 300.
      expect(Object.values(facet)).toEqual([300]);
    }
    for (const reader of [rest, other.rest]) {
      const final = await reader.post('/api/instant/search/indexes/batches', {
        token: a.key,
        body: { data: [{ facets: ['batch'], limit: 0 }] },
      });
      expect(final.body.data[0].results[0].facets.batch).toEqual({ 12: 300 });
    }
  });
});
