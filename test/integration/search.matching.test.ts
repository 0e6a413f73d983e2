/**
 * An index's matching settings and language over REST: stored and shown with their defaults,
 * applied by searches (codes without typos, exact fields, separators, stems), and refused input
 * (each refusal a 400 naming the field that changed nothing), hostile sizes included.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { createTenant, startTestApp, type Tenant } from '../helpers/app';
import { sql } from '../helpers/db';
import { expectRestError } from '../helpers/rest';

const { rest, databaseUrl } = await startTestApp();

const INDEXES = '/api/instant/indexes';
const storedIndexes = () => sql(databaseUrl, 'SELECT * FROM search_indexes ORDER BY id');

const DEFAULTS = {
  exact_fields: [],
  typos_on_digit_words: false,
  min_word_length_for_one_typo: 5,
  min_word_length_for_two_typos: 9,
  token_separators: [],
  symbols_to_index: [],
};

const products = [
  { id: 'guide', title: 'Travel guide Finland', sku: 'TG-100', gtin: '9789525557992' },
  { id: 'atlas', title: 'Atlas of Finland', sku: 'AT-200', gtin: '9789525157992' },
  { id: 'lamp', title: 'Desk lamp', sku: 'AB-1234', gtin: '4006381333931' },
  { id: 'dresses', title: 'Summer dresses', sku: 'SD-1', gtin: '4006381333948' },
];

let a: Tenant;

const create = (index: object) => rest.post(INDEXES, { token: a.key, body: { data: index } });
const search = async (alias: string, q: string, context: object = {}) => {
  const response = await rest.post(`/api/instant/search/indexes/${alias}`, {
    token: a.key,
    body: { data: [{ q, ...context }] },
  });
  expect(response.status, response.rawBody).toBe(201);
  return response.body.data[0].results[0].hits.map((hit: { id: string }) => hit.id);
};

const shop = (alias: string, settings: object = {}) => ({
  name: 'Shop',
  alias,
  fields: [{ from: 'title' }, { from: 'sku' }, { from: 'gtin' }],
  search_fields: ['title', 'sku', 'gtin'],
  ...settings,
});

beforeAll(async () => {
  a = await createTenant(rest, 'A');
  for (const [alias, settings] of [
    ['plain', {}],
    ['tuned', { matching: { exact_fields: ['sku', 'gtin'], token_separators: ['-'] }, language: 'en' }],
  ] as const) {
    expect((await create(shop(alias, settings))).status).toBe(201);
    const upsert = await rest.put(`${INDEXES}/${alias}/documents`, { token: a.key, body: { data: products } });
    expect(upsert.status, upsert.rawBody).toBe(204);
  }
});

describe('matching settings', () => {
  it('shows the defaults of an index that sets none, and the settings given with the defaults of the rest', async () => {
    expect((await rest.get(`${INDEXES}/plain`, { token: a.key })).body.data).toMatchObject({
      matching: DEFAULTS,
      language: null,
    });
    expect((await rest.get(`${INDEXES}/tuned`, { token: a.key })).body.data).toMatchObject({
      matching: { ...DEFAULTS, exact_fields: ['sku', 'gtin'], token_separators: ['-'] },
      language: 'en',
    });
  });

  it('matches a 13-digit code without typos by default', async () => {
    expect(await search('plain', '9789525557992')).toEqual(['guide']);
  });

  it('finds a code with a token separator typed with it, without it and with a space', async () => {
    for (const q of ['AB-1234', 'AB1234', 'ab 1234']) expect(await search('tuned', q), q).toEqual(['lamp']);
    expect(await search('plain', 'AB1234')).toEqual([]);
  });

  it('does not complete a word of an exact field', async () => {
    // Without the threshold, `AB-123` would fall back to `AB` alone.
    expect(await search('tuned', 'AB-123', { threshold: 0 })).toEqual([]);
    expect(await search('tuned', 'AB-1234', { threshold: 0 })).toEqual(['lamp']);
  });

  it('matches stems in the language and highlights the word as written', async () => {
    const response = await rest.post('/api/instant/search/indexes/tuned', {
      token: a.key,
      body: { data: [{ q: 'dress ' }] },
    });
    const [hit] = response.body.data[0].results[0].hits;
    expect(hit.id).toBe('dresses');
    expect(hit._highlightResult.title.value).toBe('Summer <mark>dresses</mark>');
    expect(await search('plain', 'dress ')).toEqual([]);
  });

  it('a PUT without the settings returns them to their defaults', async () => {
    expect((await create(shop('reset', { matching: { typos_on_digit_words: true }, language: 'nl' }))).status).toBe(
      201,
    );
    const put = await rest.put(`${INDEXES}/reset`, { token: a.key, body: { data: shop('reset') } });
    expect(put.status, put.rawBody).toBe(204);
    expect((await rest.get(`${INDEXES}/reset`, { token: a.key })).body.data).toMatchObject({
      matching: DEFAULTS,
      language: null,
    });
    // The search applies the re-indexing, so what is stored stays still for the refusals below.
    expect(await search('reset', 'lamp')).toEqual([]);
  });
});

describe('refused matching settings change nothing', () => {
  const many = (count: number, make: (i: number) => string) => Array.from({ length: count }, (_, i) => make(i));
  const cases: [string, object, string][] = [
    [
      'an exact field that is not a search field',
      { matching: { exact_fields: ['title', 'other'] } },
      'matching.exact_fields[1]',
    ],
    ['a repeated exact field', { matching: { exact_fields: ['sku', 'sku'] } }, 'matching.exact_fields'],
    ['a word length of 0', { matching: { min_word_length_for_one_typo: 0 } }, 'matching.min_word_length_for_one_typo'],
    [
      'a fractional word length',
      { matching: { min_word_length_for_one_typo: 4.5 } },
      'matching.min_word_length_for_one_typo',
    ],
    [
      'two typos from a shorter length than one',
      { matching: { min_word_length_for_one_typo: 6, min_word_length_for_two_typos: 5 } },
      'matching.min_word_length_for_two_typos',
    ],
    ['a separator of two characters', { matching: { token_separators: ['--'] } }, 'matching.token_separators[0]'],
    ['a letter as a separator', { matching: { token_separators: ['x'] } }, 'matching.token_separators[0]'],
    ['a space as a symbol', { matching: { symbols_to_index: [' '] } }, 'matching.symbols_to_index[0]'],
    ['a symbol beyond ASCII', { matching: { symbols_to_index: ['€'] } }, 'matching.symbols_to_index[0]'],
    ['a separator beyond ASCII', { matching: { token_separators: ['–'] } }, 'matching.token_separators[0]'],
    ['an empty symbol', { matching: { symbols_to_index: [''] } }, 'matching.symbols_to_index[0]'],
    [
      'a character both a separator and a symbol',
      { matching: { token_separators: ['-'], symbols_to_index: ['+', '-'] } },
      'matching.symbols_to_index[1]',
    ],
    ['an unknown matching key', { matching: { fuzzy: true } }, 'matching.fuzzy'],
    [
      'digit typos that are not a boolean',
      { matching: { typos_on_digit_words: 'yes' } },
      'matching.typos_on_digit_words',
    ],
    ['an unknown language', { language: 'xx' }, 'language'],
    ['a language that is not a string', { language: ['en'] }, 'language'],
    [
      'a huge list of separators',
      { matching: { token_separators: many(10_000, () => '-') } },
      'matching.token_separators',
    ],
    [
      'a huge list of exact fields',
      { matching: { exact_fields: many(10_000, (i) => `f${i}`) } },
      'matching.exact_fields',
    ],
    ['a long exact field name', { matching: { exact_fields: ['f'.repeat(100_000)] } }, 'matching.exact_fields[0]'],
    ['a long language', { language: 'e'.repeat(100_000) }, 'language'],
    [
      'many unknown keys',
      { matching: Object.fromEntries(many(900, (i) => `key${i}`).map((key) => [key, 1])) },
      'matching.key899',
    ],
  ];
  for (const [what, settings, field] of cases) {
    it(`${what}: 400 naming ${field}`, async () => {
      const before = await storedIndexes();
      expectRestError(await create(shop('refused', settings)), 400, `body.data.${field}`);
      expectRestError(
        await rest.put(`${INDEXES}/tuned`, { token: a.key, body: { data: shop('tuned', settings) } }),
        400,
        `body.data.${field}`,
      );
      expect(await storedIndexes(), JSON.stringify(before)).toEqual(before);
    });
  }
});
