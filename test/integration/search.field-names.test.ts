/**
 * Fields named like the members every JavaScript object has (`constructor`, `toString`,
 * `hasOwnProperty`) are fields like any other, in upserts, filters, facets and hits; a body holding
 * `__proto__`, which would replace an object's prototype, is refused and stores nothing.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { createTenant, startTestApp, type Tenant } from '../helpers/app';
import { sql } from '../helpers/db';

const { rest, databaseUrl } = await startTestApp();

let tenant: Tenant;

beforeAll(async () => {
  tenant = await createTenant(rest, 'Field names');
  const index = {
    name: 'Odd names',
    alias: 'odd-names',
    search_fields: ['title'],
    filters: [{ key: 'constructor' }, { key: 'toString' }],
  };
  expect((await rest.post('/api/instant/indexes', { token: tenant.key, body: { data: index } })).status).toBe(201);
});

const upsert = (documents: unknown[]) =>
  rest.put('/api/instant/indexes/odd-names/documents', { token: tenant.key, body: { data: documents } });
const search = (context: Record<string, unknown>) =>
  rest.post('/api/instant/search/indexes/odd-names', { token: tenant.key, body: { data: [context] } });

describe('fields named like the members of every object', () => {
  it('are stored, typed from the documents, filtered, counted as facets and returned', async () => {
    const written = await upsert([
      { id: 'a', title: 'Oak chair', constructor: 'Ercol', toString: 3, hasOwnProperty: true },
      { id: 'b', title: 'Oak table', constructor: 'Hay', toString: 7 },
      { id: 'c', title: 'Oak shelf' },
    ]);
    expect(written.status, written.rawBody).toBe(204);
    const index = await rest.get('/api/instant/indexes/odd-names', { token: tenant.key });
    const types = Object.fromEntries(
      index.body.data.available_fields.map((field: { key: string; type: string }) => [field.key, field.type]),
    );
    expect(types).toMatchObject({ constructor: 'STRING', toString: 'NUMBER', hasOwnProperty: 'BOOLEAN' });

    const filtered = await search({
      q: 'oak',
      filters: [{ key: 'toString', operator: 'gte', values: [5] }],
      facets: ['constructor'],
    });
    expect(filtered.status, filtered.rawBody).toBe(201);
    const result = filtered.body.data[0].results[0];
    expect(result.hits.map((hit: { id: string }) => hit.id)).toEqual(['b']);
    expect(result.hits[0]).toMatchObject({ constructor: 'Hay', toString: 7 });

    // A document without the fields has none of them: not the prototype's functions.
    const missing = await search({ q: 'shelf', filters: [{ key: 'constructor', operator: 'not_exists' }] });
    expect(missing.body.data[0].results[0].hits.map((hit: { id: string }) => hit.id)).toEqual(['c']);
    const all = await search({ q: 'oak', facets: ['constructor'] });
    expect(all.body.data[0].results[0].facets.constructor).toEqual({ Ercol: 1, Hay: 1 });
  });

  it('refuses a body with `__proto__` and stores nothing of the batch', async () => {
    const before = await sql(databaseUrl, 'SELECT id, data FROM search_documents ORDER BY id');
    const refused = await rest.put('/api/instant/indexes/odd-names/documents', {
      token: tenant.key,
      rawBody: '{"data":[{"id":"d","title":"Oak stool"},{"id":"e","title":"Oak bench","__proto__":{"polluted":1}}]}',
      headers: { 'content-type': 'application/json' },
    });
    expect(refused.status, refused.rawBody).toBe(400);
    expect(refused.body.error.details).toEqual([expect.objectContaining({ field: 'body' })]);
    expect(await sql(databaseUrl, 'SELECT id, data FROM search_documents ORDER BY id')).toEqual(before);
  });
});
