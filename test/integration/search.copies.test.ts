/**
 * The embedded engine's copies of an index: a process that has never searched an index rebuilds it
 * from PostgreSQL through a cursor, chunk after chunk, and the process that wrote a change applies
 * it as written instead of reading it back. Either way a copy answers every search as a copy
 * rebuilt afresh from the stored documents does.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { resolveDefinition } from '../../src/modules/search/definition';
import type { EmbeddedEngine } from '../../src/modules/search/engine/embedded-engine';
import { findIndexById } from '../../src/modules/search/search.repository';
import { toEngineQuery } from '../../src/modules/search/search-query';
import { createTenant, startTestApp, type Tenant, startSecondProcess } from '../helpers/app';
import { sql } from '../helpers/db';
import { type RestClient, type RestResponse } from '../helpers/rest';

const { rest, databaseUrl } = await startTestApp();

const INDEXES = '/api/instant/indexes';

let tenant: Tenant;

beforeAll(async () => {
  tenant = await createTenant(rest, 'Copies');
});

const upsert = async (alias: string, documents: unknown[]) => {
  const response = await rest.put(`${INDEXES}/${alias}/documents`, { token: tenant.key, body: { data: documents } });
  expect(response.status, response.rawBody).toBe(204);
};

const search = async (client: RestClient, alias: string, context: object) => {
  const response = await client.post(`/api/instant/search/indexes/${alias}`, {
    token: tenant.key,
    body: { data: [context] },
  });
  expect(response.status, response.rawBody).toBe(201);
  const result = response.body.data[0].results[0];
  // Everything a search answers but the time it took.
  return { count: result.count, facets: result.facets, hits: result.hits };
};

const expectStatus = async (response: Promise<RestResponse>, status: number) => {
  const answered = await response;
  expect(answered.status, answered.rawBody).toBe(status);
};

const indexId = async (alias: string) =>
  (await sql<{ id: string }>(databaseUrl, 'SELECT id FROM search_indexes WHERE alias = $1', [alias]))[0]!.id;

describe('rebuilding a copy from PostgreSQL', () => {
  it('reads an index of several chunks whole, the last one partial, and finds its first and last documents', async () => {
    const index = { name: 'Chunks', alias: 'chunks', filters: [{ key: 'group' }] };
    expect((await rest.post(INDEXES, { token: tenant.key, body: { data: index } })).status).toBe(201);
    const total = 12_001;
    for (let start = 0; start < total; start += 1000) {
      await upsert(
        'chunks',
        Array.from({ length: Math.min(1000, total - start) }, (_, i) => ({
          id: `c${String(start + i).padStart(5, '0')}`,
          name: `term${start + i} shared`,
          group: `g${(start + i) % 3}`,
          metadata: { n: start + i },
        })),
      );
    }

    const restarted = await startSecondProcess({ databaseUrl });
    const all = await search(restarted.rest, 'chunks', { q: 'shared', facets: ['group'], limit: 0 });
    expect(all.count).toBe(total);
    expect(all.facets.group).toEqual({ g0: 4001, g1: 4000, g2: 4000 });
    expect((restarted.services.search.engine as EmbeddedEngine).documentCount(await indexId('chunks'))).toBe(total);
    for (const n of [0, 4999, 5000, 10_000, 12_000]) {
      const one = await search(restarted.rest, 'chunks', { q: `term${n}` });
      expect(one.hits[0].id).toBe(`c${String(n).padStart(5, '0')}`);
      expect(one.hits[0].metadata).toEqual({ n });
    }
  });

  it('drops the copy of an index deleted meanwhile when it next catches up', async () => {
    const index = { name: 'Gone', alias: 'gone' };
    expect((await rest.post(INDEXES, { token: tenant.key, body: { data: index } })).status).toBe(201);
    await upsert('gone', [{ id: 'a', name: 'alpha' }]);
    const other = await startSecondProcess({ databaseUrl });
    expect((await search(other.rest, 'gone', { q: 'alpha' })).count).toBe(1);
    const id = await indexId('gone');
    const engine = other.services.search.engine as EmbeddedEngine;
    expect(engine.documentCount(id)).toBe(1);
    const row = (await findIndexById(other.db, id))!;
    expect((await rest.delete(`${INDEXES}/gone`, { token: tenant.key })).status).toBe(204);
    // A search that asked for a newer version than the copy's just before the index went.
    const answer = await engine.search(
      { ...resolveDefinition(row), version: row.version + 1 },
      toEngineQuery(row, { q: 'alpha' }, 'body').query!,
    );
    expect(answer.count).toBe(0);
    expect(engine.documentCount(id)).toBe(0);
  });
});

describe('the copy of the process that wrote', () => {
  it('answers as a copy rebuilt afresh after upserts, replacements, new fields, deletions, patches and rules', async () => {
    // No declared fields: a field first seen in a batch changes the index's shape.
    const index = { name: 'Written', alias: 'written', filters: [{ key: 'colour' }, { key: 'size' }] };
    expect((await rest.post(INDEXES, { token: tenant.key, body: { data: index } })).status).toBe(201);
    const product = (i: number, round: number) => ({
      id: i % 2 === 0 ? `p${i}` : i,
      name: `product ${i} round${round} ${['red', 'blue', 'green'][i % 3]}`,
      colour: ['red', 'blue', 'green'][(i + round) % 3],
      metadata: { z: i, a: { round } },
    });
    const contexts = [
      { q: 'product', facets: ['colour'], limit: 50 },
      { q: 'round1 red', limit: 50 },
      { q: 'round2', facets: ['colour', 'size'], limit: 50 },
      { q: '', facets: ['size'], limit: 50 },
      { q: 'produc', filters: [{ key: 'colour', operator: 'in', values: ['blue'] }], limit: 50 },
    ];
    const steps: (() => Promise<unknown>)[] = [
      () =>
        upsert(
          'written',
          Array.from({ length: 40 }, (_, i) => product(i, 1)),
        ),
      // Rejected whole (a colour that is not a string), so the version stays and the next write follows the first.
      async () => {
        const [before] = await sql(databaseUrl, "SELECT version FROM search_indexes WHERE alias = 'written'");
        await expectStatus(
          rest.put(`${INDEXES}/written/documents`, {
            token: tenant.key,
            body: { data: [product(90, 9), { ...product(91, 9), colour: { nested: true } }] },
          }),
          400,
        );
        expect(await sql(databaseUrl, "SELECT version FROM search_indexes WHERE alias = 'written'")).toEqual([before]);
        expect(await sql(databaseUrl, "SELECT id FROM search_documents WHERE id IN ('p90', '91')")).toEqual([]);
      },
      // Replaces half of them and adds more.
      () =>
        upsert(
          'written',
          Array.from({ length: 40 }, (_, i) => product(i + 20, 2)),
        ),
      // A new field: the copy is rebuilt, not patched.
      () => upsert('written', [{ ...product(3, 3), size: 42 }]),
      () =>
        expectStatus(rest.delete(`${INDEXES}/written/documents?filter[id][in]=p4,5,p50`, { token: tenant.key }), 200),
      () =>
        expectStatus(
          rest.patch(`${INDEXES}/written/documents`, { token: tenant.key, body: { data: [{ id: 'p6', size: 7 }] } }),
          204,
        ),
      () =>
        expectStatus(
          rest.put(`${INDEXES}/written/rules`, {
            token: tenant.key,
            body: {
              data: [{ id: 'top', query: { text: 'product', match: 'contains' }, pin: [{ id: 'p8', position: 1 }] }],
            },
          }),
          200,
        ),
      () =>
        upsert('written', [
          { ...product(2, 4), name: 'zebra two' },
          { ...product(59, 4), name: 'zebra fifty-nine' },
        ]),
    ];
    // The writer searches between its writes, so each next write finds its copy just one version behind.
    await search(rest, 'written', contexts[0]!);
    for (const step of steps) {
      await step();
      const afresh = await startSecondProcess({ databaseUrl });
      for (const context of contexts)
        expect(await search(rest, 'written', context)).toEqual(await search(afresh.rest, 'written', context));
    }
    expect((await search(rest, 'written', { q: 'zebra', limit: 5 })).hits.map((hit: { id: string }) => hit.id)).toEqual(
      expect.arrayContaining(['p2', '59']),
    );
  });
});
