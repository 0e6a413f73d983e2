/**
 * Examples of the reference (`/docs`): one product index, its documents, a search of it and its
 * settings, as sent and as answered. A test validates each against its schema in openapi.yaml.
 */

const INDEX_FIELDS = [
  { from: 'title', to: 'title', type: 'STRING', label: 'Title' },
  { from: 'brand', to: 'brand', type: 'STRING', label: 'Brand' },
  { from: 'price', to: 'price', type: 'NUMBER', label: 'Price' },
  { from: 'in_stock', to: 'in_stock', type: 'BOOLEAN', label: null },
];

export const INDEX_INPUT_EXAMPLE = {
  name: 'Products',
  alias: 'products',
  fields: INDEX_FIELDS,
  search_fields: ['title', 'brand'],
  display_fields: ['title', 'brand', 'price'],
  filters: [{ key: 'brand' }, { key: 'price' }, { key: 'in_stock' }],
  synonyms: [{ synonyms: ['t shirt', 'tee'] }],
  sortable_fields: ['price'],
};

export const INDEX_EXAMPLE = {
  id: '6c1f0e9a-2b3d-4e5f-8a7b-9c0d1e2f3a4b',
  name: 'Products',
  alias: 'products',
  state: 'LIVE',
  source: { id: null, type: 'API' },
  fields: INDEX_FIELDS,
  search_fields: ['title', 'brand'],
  display_fields: ['title', 'brand', 'price'],
  filters: [
    { key: 'brand', type: 'STRING', is_processed: true },
    { key: 'price', type: 'NUMBER', is_processed: true },
    { key: 'in_stock', type: 'BOOLEAN', is_processed: true },
  ],
  facet_fields: ['brand', 'price', 'in_stock'],
  distinct_field: null,
  synonyms: [{ synonyms: ['t shirt', 'tee'] }],
  stop_words: [],
  ranking_rules: ['words', 'typo', 'proximity', 'attribute', 'exactness'],
  sortable_fields: ['price'],
  matching: {
    exact_fields: [],
    typos_on_digit_words: false,
    min_word_length_for_one_typo: 5,
    min_word_length_for_two_typos: 9,
    token_separators: [],
    symbols_to_index: [],
  },
  language: null,
  available_fields: [
    { key: 'title', type: 'STRING' },
    { key: 'brand', type: 'STRING' },
    { key: 'price', type: 'NUMBER' },
    { key: 'in_stock', type: 'BOOLEAN' },
  ],
  is_active: true,
  has_pending_updates: false,
  last_processed_at: '2026-11-24T16:05:13.000Z',
  created_at: '2026-11-20T09:30:00.000Z',
  updated_at: '2026-11-24T16:05:12.000Z',
};

export const DOCUMENT_EXAMPLE = {
  id: 'TSHIRT-M',
  title: 'Organic cotton T-shirt',
  brand: 'Acme',
  price: 19.95,
  in_stock: true,
  metadata: { url: 'https://shop.example.com/p/tshirt-m', image: 'https://shop.example.com/img/tshirt-m.jpg' },
};

export const DOCUMENTS_EXAMPLE = { data: [DOCUMENT_EXAMPLE] };

export const SEARCH_REQUEST_EXAMPLE = {
  data: [
    {
      q: 'tshirt',
      indices: ['products'],
      facets: ['brand'],
      filters: [
        { key: 'in_stock', operator: 'in', values: [true] },
        {
          any: [
            { key: 'brand', operator: 'in', values: ['Acme'] },
            { key: 'price', operator: 'lte', values: [20] },
          ],
        },
      ],
      sort: ['price:asc'],
      limit: 10,
      __queryID: 'header-search',
    },
  ],
};

export const SEARCH_RESPONSE_ENTRY_EXAMPLE = {
  __queryID: 'header-search',
  results: [
    {
      id: 'products',
      query_id: '5b0c7a52-8e2f-4d61-b3a9-1f7e6c4d2a90',
      hits: [
        {
          id: 'TSHIRT-M',
          objectID: 'TSHIRT-M',
          title: 'Organic cotton T-shirt',
          brand: 'Acme',
          price: 19.95,
          metadata: DOCUMENT_EXAMPLE.metadata,
          _highlightResult: {
            title: { value: 'Organic cotton <mark>T-shirt</mark>', matchLevel: 'full', matchedWords: ['tshirt'] },
            brand: { value: 'Acme', matchLevel: 'none', matchedWords: [] },
          },
          __position: 1,
          _rule: null,
          click_url: '/api/search/click?c=Zm9v.YmFy',
        },
      ],
      count: 1,
      facets: { brand: { Acme: 1 } },
      facets_stats: {},
    },
  ],
};

export const SEARCH_SETTINGS_INPUT_EXAMPLE = {
  indexes: [
    {
      alias: 'products',
      template: { name: 'PRODUCTS', mapping: [{ from: 'title', to: 'name' }] },
      filters: [{ key: 'brand', label: 'Brand', options_count: 10 }],
      results_per_page: 24,
      sort_options: [
        { label: 'Price, low to high', sort: ['price:asc'] },
        { label: 'Price, high to low', sort: ['price:desc'] },
      ],
    },
  ],
  is_autocomplete: true,
};

export const SEARCH_SETTINGS_EXAMPLE = {
  indexes: [
    {
      alias: 'products',
      template: { name: 'PRODUCTS', mapping: [{ from: 'title', to: 'name' }] },
      filters: [{ key: 'brand', label: 'Brand', type: 'STRING', options_count: 10, max_options_count: null }],
      results_per_page: 24,
      sort: [],
      sort_options: [
        { label: 'Price, low to high', sort: ['price:asc'] },
        { label: 'Price, high to low', sort: ['price:desc'] },
      ],
    },
  ],
  filters: { show_for: null, sorting: [], options_count: null, max_options_count: null },
  is_autocomplete: true,
};
