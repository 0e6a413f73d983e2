/**
 * The relevance suite: commerce queries over a fixture catalog (test/helpers/relevance-catalog.ts)
 * with the hits expected on top, through the search services over a real database. The embedded
 * engine always runs; a Typesense server runs the same cases when TYPESENSE_URL is set. The
 * Typesense stand-in does not rank, so against it every case checks that the adapter asks Typesense
 * for what the case relies on (typo rules, exact fields, separators, stems, synonyms, rules, a rule's
 * replacement query, rules skipped outside their periods).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Principal } from '../../src/kernel/principal';
import type { SearchServices } from '../../src/modules/search/search.module';
import type { IndexInputData } from '../../src/modules/search/search.schemas';
import { createTenant, startTestApp } from '../helpers/app';
import { searchServicesOf } from '../helpers/search-services';
import { RELEVANCE_CASES, RELEVANCE_INDEXES, type RelevanceCase } from '../helpers/relevance-catalog';
import { STAND_IN_API_KEY, TypesenseStandIn } from '../helpers/typesense-stand-in';

const { rest, db, config, services: appServices } = await startTestApp();
const tenant = await createTenant(rest, 'Relevance');
const principal: Principal = { tenantId: tenant.id, scopes: new Set(['*']), actor: { type: 'api_key', id: 'r' } };

const servicesOn = (typesenseUrl: string, apiKey: string | undefined) =>
  searchServicesOf({ config, db, services: appServices }, { typesenseUrl, typesenseApiKey: apiKey });

/** Creates every index of the catalog with its documents and rules; returns the aliases by catalog name. */
async function loadCatalog(services: SearchServices, prefix: string) {
  const aliases: Record<string, string> = {};
  for (const [name, index] of Object.entries(RELEVANCE_INDEXES)) {
    const alias = `${prefix}-${name}`;
    await services.indexes.create(principal, { name: alias, alias, ...index.settings } as IndexInputData);
    await services.indexes.upsertDocuments(principal, alias, index.documents);
    if (index.rules) await services.indexes.replaceRules(principal, alias, index.rules);
    aliases[name] = alias;
  }
  return aliases;
}

const title = (c: RelevanceCase) => `${c.index}: "${c.q}"`;

const typesenseUrl = process.env.TYPESENSE_URL;
const engines = [
  { name: 'embedded', services: () => appServices.search },
  {
    name: 'typesense',
    skip: typesenseUrl ? undefined : 'TYPESENSE_URL is not set, so there is no Typesense server to run against',
    services: () => servicesOn(typesenseUrl!, process.env.TYPESENSE_API_KEY),
  },
];

for (const engine of engines) {
  const heading = engine.skip ? `${engine.name} engine (skipped: ${engine.skip})` : `${engine.name} engine`;
  describe.skipIf(engine.skip !== undefined)(heading, () => {
    let services: SearchServices;
    let aliases: Record<string, string>;
    beforeAll(async () => {
      services = engine.services();
      if (services !== appServices.search) await services.start();
      aliases = await loadCatalog(services, `relevance-${engine.name}`);
    });

    it(`holds at least 40 cases`, () => expect(RELEVANCE_CASES.length).toBeGreaterThanOrEqual(40));

    for (const relevanceCase of RELEVANCE_CASES) {
      it(title(relevanceCase), async () => {
        const [entry] = await services.search.searchIndex(principal, aliases[relevanceCase.index]!, [
          { q: relevanceCase.q, limit: 20, ...relevanceCase.context } as never,
        ]);
        const ids = entry!.results[0]!.hits.map((hit) => String(hit.id));
        if (relevanceCase.top) {
          const first = ids.slice(0, relevanceCase.top.length).sort();
          expect(first, ids.join(', ')).toEqual([...relevanceCase.top].sort());
        }
        if (relevanceCase.only) expect([...ids].sort()).toEqual([...relevanceCase.only].sort());
        for (const id of relevanceCase.never ?? []) expect(ids).not.toContain(id);
      });
    }
  });
}

describe('Typesense stand-in: the parameters each case relies on', () => {
  let standIn: TypesenseStandIn;
  let services: SearchServices;
  let aliases: Record<string, string>;
  beforeAll(async () => {
    standIn = await TypesenseStandIn.start('30.0');
    services = servicesOn(standIn.url, STAND_IN_API_KEY);
    await services.start();
    aliases = await loadCatalog(services, 'relevance-stand-in');
  });
  afterAll(() => standIn.close());

  for (const relevanceCase of RELEVANCE_CASES) {
    it(title(relevanceCase), async () => {
      const alias = aliases[relevanceCase.index]!;
      await services.search.searchIndex(principal, alias, [
        { q: relevanceCase.q, limit: 20, ...relevanceCase.context } as never,
      ]);
      const search = (
        standIn.requests.findLast((r) => r.path === '/multi_search')!.body as {
          searches: Record<string, unknown>[];
        }
      ).searches[0]!;
      const record = await services.indexes.get(principal, alias);
      const collection = standIn.aliases.get(`idx_${record.id.replaceAll('-', '')}`)!;
      const schema = standIn.collections.get(collection)!.schema;
      const fields = String(search.query_by).split(',');
      const perField = (parameter: unknown) => {
        const values = String(parameter).split(',');
        return Object.fromEntries(fields.map((field, i) => [field, values[values.length === 1 ? 0 : i]]));
      };
      const settings = RELEVANCE_INDEXES[relevanceCase.index]!.settings;
      for (const reliance of relevanceCase.relies) {
        switch (reliance) {
          case 'digits':
            expect(search.enable_typos_for_numerical_tokens).toBe(false);
            break;
          case 'exact':
            for (const field of settings.matching?.exact_fields ?? []) {
              expect(perField(search.num_typos)[field], field).toBe('0');
              expect(perField(search.prefix)[field], field).toBe('false');
            }
            break;
          case 'separator':
            expect(schema.token_separators).toEqual(settings.matching?.token_separators);
            break;
          case 'stem':
            expect(schema.fields.find((field) => field.name === 'title')).toMatchObject({
              stem: true,
              locale: settings.language,
            });
            break;
          case 'synonym':
            expect(schema.synonym_sets).toEqual([`${collection}_synonyms`]);
            expect(standIn.synonymSets.get(`${collection}_synonyms`)?.items).toHaveLength(settings.synonyms!.length);
            break;
          case 'pin':
            expect(String(search.pinned_hits)).toMatch(/(^|,)tee-blue:1(,|$)/);
            break;
          case 'hide':
            expect(String(search.hidden_hits).split(',')).toContain('lamp-old');
            break;
          case 'stop':
            expect(search.stopwords).toBe(`${collection}_stopwords`);
            break;
          case 'typo':
            expect(perField(search.num_typos).title).toBe('2');
            expect(search).toMatchObject({ min_len_1typo: 5, min_len_2typo: 9 });
            break;
          case 'replace':
            expect(search.q).toBe('office chair');
            break;
          case 'schedule':
            expect(String(search.pinned_hits ?? '')).toBe('');
            expect(String(search.hidden_hits ?? '')).toBe('');
            break;
          case 'prefix':
            expect(perField(search.prefix).title).toBe('true');
            break;
          case 'geo':
            expect(schema.fields.find((field) => field.name === 'location')).toMatchObject({ type: 'geopoint' });
            if (relevanceCase.context?.sort)
              expect(String(search.sort_by)).toMatch(/^location\(45\.7578, 4\.832\):asc,/);
            if (relevanceCase.context?.filters) expect(String(search.filter_by)).toMatch(/^location:\(\[/);
            break;
        }
      }
    });
  }
});
