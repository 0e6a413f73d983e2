/**
 * The Typesense adapter's mapping of an index's matching settings and language, pinned against the
 * stand-in (test/helpers/typesense-stand-in.ts): the collection's tokenizer settings and stemmed
 * fields, and the search parameters of exact fields and typo rules.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Principal } from '../../src/kernel/principal';
import type { SearchServices } from '../../src/modules/search/search.module';
import type { IndexInputData } from '../../src/modules/search/search.schemas';
import { createTenant, startTestApp } from '../helpers/app';
import { searchServicesOf } from '../helpers/search-services';
import { STAND_IN_API_KEY, TypesenseStandIn } from '../helpers/typesense-stand-in';

const { rest, db, config, services: appServices } = await startTestApp();
const tenant = await createTenant(rest, 'Typesense matching contract');
const principal: Principal = { tenantId: tenant.id, scopes: new Set(['*']), actor: { type: 'api_key', id: 'c' } };

const index = (alias: string, settings: Partial<IndexInputData>) =>
  ({
    name: alias,
    alias,
    fields: [
      { from: 'title', to: 'title', type: 'STRING' },
      { from: 'sku', to: 'sku', type: 'STRING' },
      { from: 'price', to: 'price', type: 'NUMBER' },
    ],
    search_fields: ['title', 'sku'],
    ...settings,
  }) as IndexInputData;

for (const version of ['30.0', '29.0']) {
  describe(`Typesense ${version}`, () => {
    let standIn: TypesenseStandIn;
    let services: SearchServices;
    beforeAll(async () => {
      standIn = await TypesenseStandIn.start(version);
      services = searchServicesOf(
        { config, db, services: appServices },
        { typesenseUrl: standIn.url, typesenseApiKey: STAND_IN_API_KEY },
      );
      await services.start();
    });
    afterAll(() => standIn.close());

    const lastSearch = () =>
      (standIn.requests.findLast((r) => r.path === '/multi_search')!.body as { searches: Record<string, unknown>[] })
        .searches[0]!;

    it('creates the collection with its token separators, symbols and stemmed search fields', async () => {
      const alias = `matching-${version.replace('.', '-')}`;
      const from = standIn.requests.length;
      await services.indexes.create(
        principal,
        index(alias, {
          matching: { exact_fields: ['sku'], token_separators: ['-', '/'], symbols_to_index: ['+'] },
          language: 'nl',
        }),
      );
      const created = standIn.requests.slice(from).find((r) => r.method === 'POST' && r.path === '/collections');
      expect(created?.body).toMatchObject({
        token_separators: ['-', '/'],
        symbols_to_index: ['+'],
        fields: expect.arrayContaining([
          { name: 'title', type: 'string[]', optional: true, stem: true, locale: 'nl' },
          { name: 'sku', type: 'string[]', optional: true },
        ]),
      });
    });

    it('searches exact fields without typos and prefix, with the typo rules of the index', async () => {
      const alias = `typos-${version.replace('.', '-')}`;
      await services.indexes.create(
        principal,
        index(alias, {
          matching: {
            exact_fields: ['sku'],
            typos_on_digit_words: true,
            min_word_length_for_one_typo: 4,
            min_word_length_for_two_typos: 7,
          },
        }),
      );
      await services.search.searchIndex(principal, alias, [{ q: 'lamp AB-12' } as never]);
      expect(lastSearch()).toMatchObject({
        query_by: 'title,sku',
        prefix: 'true,false',
        num_typos: '2,0',
        min_len_1typo: 4,
        min_len_2typo: 7,
        enable_typos_for_numerical_tokens: true,
      });
    });

    it('a plain index sends one prefix and typo budget, and no typos on words of digits', async () => {
      const alias = `plain-${version.replace('.', '-')}`;
      const from = standIn.requests.length;
      await services.indexes.create(principal, index(alias, {}));
      const created = standIn.requests.slice(from).find((r) => r.method === 'POST' && r.path === '/collections');
      expect(created?.body).not.toHaveProperty('token_separators');
      expect(created?.body).not.toHaveProperty('symbols_to_index');
      await services.search.searchIndex(principal, alias, [{ q: '9789525557992' } as never]);
      expect(lastSearch()).toMatchObject({
        prefix: true,
        num_typos: 2,
        min_len_1typo: 5,
        min_len_2typo: 9,
        enable_typos_for_numerical_tokens: false,
      });
    });
  });
}
