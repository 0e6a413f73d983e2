/**
 * The index rows each process keeps for searching: checked against PostgreSQL on every search, so
 * what one process changes (the definition, the rules, whether the index is active, the index
 * itself) is what the next search in another process on the same database serves, at once.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { IndexRows } from '../../src/modules/search/index-rows';
import { createTenant, startSecondProcess, startTestApp, type Tenant, type TestApp } from '../helpers/app';
import { sql } from '../helpers/db';
import { type RestClient } from '../helpers/rest';

const { rest, databaseUrl } = await startTestApp();

const INDEXES = '/api/instant/indexes';

const PRODUCTS = [
  { id: 'p1', name: 'Desk lamp', brand: 'Lumo', price: 25 },
  { id: 'p2', name: 'Floor lamp', brand: 'Lumo', price: 80 },
  { id: 'p3', name: 'Wall lamp', brand: 'Brite', price: 40 },
];
const INDEX = { name: 'Lamps', alias: 'lamps', filters: [{ key: 'brand' }, { key: 'price' }] };

let a: Tenant;
let other: TestApp;

beforeAll(async () => {
  a = await createTenant(rest, 'A');
  other = await startSecondProcess({ databaseUrl });
  expect((await rest.post(INDEXES, { token: a.key, body: { data: INDEX } })).status).toBe(201);
  expect((await rest.put(`${INDEXES}/lamps/documents`, { token: a.key, body: { data: PRODUCTS } })).status).toBe(204);
});

const searchIn = (client: RestClient, context: object = { q: 'lamp' }) =>
  client.post('/api/instant/search/indexes/lamps', { token: a.key, body: { data: [context] } });

const firstResult = async (client: RestClient, context?: object) => {
  const response = await searchIn(client, context);
  expect(response.status, response.rawBody).toBe(201);
  return response.body.data[0].results[0];
};

describe('index rows kept for searching', () => {
  it('another process serves a replaced definition on its next search', async () => {
    // Both processes have searched, so both keep the row.
    expect(Object.keys((await firstResult(other.rest)).hits[0])).toContain('brand');
    expect(Object.keys((await firstResult(rest)).hits[0])).toContain('brand');
    const replaced = await rest.put(`${INDEXES}/lamps`, {
      token: a.key,
      body: { data: { ...INDEX, display_fields: ['name'] } },
    });
    expect(replaced.status, replaced.rawBody).toBe(204);
    const hit = (await firstResult(other.rest)).hits[0];
    expect(hit).toHaveProperty('name');
    expect(hit).not.toHaveProperty('brand');
  });

  it('another process applies new rules on its next search', async () => {
    expect((await firstResult(other.rest)).hits[0]._rule).toBeNull();
    const rules = [{ id: 'walls-first', query: { text: 'lamp', match: 'contains' }, pin: [{ id: 'p3', position: 1 }] }];
    expect((await rest.put(`${INDEXES}/lamps/rules`, { token: a.key, body: { data: rules } })).status).toBe(200);
    const result = await firstResult(other.rest);
    expect(result.hits[0]).toMatchObject({ id: 'p3', _rule: 'walls-first' });
  });

  it('another process stops searching an index made inactive, and one deleted and created again is the new one', async () => {
    expect((await searchIn(other.rest)).status).toBe(201);
    const inactive = await rest.put(`${INDEXES}/lamps`, {
      token: a.key,
      body: { data: { ...INDEX, is_active: false } },
    });
    expect(inactive.status, inactive.rawBody).toBe(204);
    expect((await searchIn(other.rest)).status).toBe(404);

    expect((await rest.put(`${INDEXES}/lamps`, { token: a.key, body: { data: INDEX } })).status).toBe(204);
    expect((await searchIn(other.rest)).status).toBe(201);
    expect((await rest.delete(`${INDEXES}/lamps`, { token: a.key })).status).toBe(204);
    expect((await searchIn(other.rest)).status).toBe(404);

    expect((await rest.post(INDEXES, { token: a.key, body: { data: INDEX } })).status).toBe(201);
    expect((await firstResult(other.rest)).count).toBe(0);
    const documents = await rest.put(`${INDEXES}/lamps/documents`, { token: a.key, body: { data: [PRODUCTS[0]] } });
    expect(documents.status).toBe(204);
    expect((await firstResult(other.rest)).hits.map((hit: { id: string }) => hit.id)).toEqual(['p1']);
  });
});

describe('searching through a proxy key', () => {
  it('another process serves the indexes of the search settings as they are now', async () => {
    const index = { ...INDEX, alias: 'proxied' };
    expect((await rest.post(INDEXES, { token: a.key, body: { data: index } })).status).toBe(201);
    expect((await rest.put(`${INDEXES}/proxied/documents`, { token: a.key, body: { data: PRODUCTS } })).status).toBe(
      204,
    );
    const routes = { path: '*', origin: { uri: 'https://shop.example.com' } };
    const proxy = await rest.post('/api/storage/edge/proxies', {
      token: a.key,
      body: { data: { key: 'lamp-shop', routes } },
    });
    expect(proxy.status, proxy.rawBody).toBe(201);
    const settings = { indexes: [{ alias: 'proxied' }] };
    expect(
      (await rest.put('/api/instant/search/lamp-shop/settings', { token: a.key, body: { data: settings } })).status,
    ).toBe(200);
    const results = async () => {
      const response = await other.rest.post('/api/instant/search/lamp-shop', { body: { data: [{ q: 'lamp' }] } });
      expect(response.status, response.rawBody).toBe(201);
      return response.body.data[0].results;
    };

    expect(Object.keys((await results())[0].hits[0])).toContain('brand');
    const replaced = await rest.put(`${INDEXES}/proxied`, {
      token: a.key,
      body: { data: { ...index, display_fields: ['name'] } },
    });
    expect(replaced.status, replaced.rawBody).toBe(204);
    expect(Object.keys((await results())[0].hits[0])).not.toContain('brand');
    expect((await rest.delete(`${INDEXES}/proxied`, { token: a.key })).status).toBe(204);
    expect(await results()).toEqual([]);
  });
});

describe('IndexRows', () => {
  it('returns the stored row, read again only after its version moved, and null once it is gone', async () => {
    const rows = new IndexRows(other.db);
    const first = await rows.find(a.id, 'lamps');
    expect(first).toMatchObject({ alias: 'lamps', tenantId: a.id });
    // Unchanged: the same row.
    expect(await rows.find(a.id, 'lamps')).toBe(first);
    // A change the version does not record is not looked for (every write of the service moves it)...
    await sql(databaseUrl, "UPDATE search_indexes SET name = 'Renamed behind' WHERE alias = 'lamps'");
    expect((await rows.find(a.id, 'lamps'))!.name).toBe('Lamps');
    // ...one that moves it is read.
    await sql(databaseUrl, "UPDATE search_indexes SET version = version + 1 WHERE alias = 'lamps'");
    const after = (await rows.find(a.id, 'lamps'))!;
    expect(after.name).toBe('Renamed behind');
    expect(after.version).toBe(first!.version + 1);

    await sql(databaseUrl, "DELETE FROM search_indexes WHERE alias = 'lamps'");
    expect(await rows.find(a.id, 'lamps')).toBeNull();
    expect(await rows.find(a.id, 'unknown')).toBeNull();
  });

  it('answers checks asked for together, of several indexes, each with its own row', async () => {
    for (const alias of ['one', 'two'])
      expect((await rest.post(INDEXES, { token: a.key, body: { data: { ...INDEX, alias } } })).status).toBe(201);
    const rows = new IndexRows(other.db);
    const aliases = Array.from({ length: 40 }, (_, i) => ['one', 'two', 'none'][i % 3]!);
    await Promise.all(aliases.map((alias) => rows.find(a.id, alias)));
    await sql(databaseUrl, "UPDATE search_indexes SET version = version + 1, name = 'Two' WHERE alias = 'two'");
    const found = await Promise.all(aliases.map((alias) => rows.find(a.id, alias)));
    expect(found.map((row) => row?.name ?? null)).toEqual(
      aliases.map((alias) => ({ one: 'Lamps', two: 'Two', none: null })[alias]),
    );
  });
});
