/**
 * The catalog of the relevance suite: a small shop in English with codes, synonyms, stop words and
 * merchandising rules, and one index per other language, with the queries shoppers type and the
 * hits they expect on top. Each case names what it relies on, so the half of the suite that runs
 * against the Typesense stand-in (which does not rank) can check that the adapter asks for it.
 */
import type { IndexInputData, RuleInputData } from '../../src/modules/search/search.schemas';

/** What a case's result depends on, beyond plain word matching. */
export type Reliance =
  | 'digits'
  | 'exact'
  | 'separator'
  | 'stem'
  | 'synonym'
  | 'pin'
  | 'hide'
  | 'stop'
  | 'typo'
  | 'prefix'
  | 'replace'
  | 'schedule'
  | 'geo';

export interface RelevanceCase {
  index: string;
  q: string;
  /** The hits expected first, in any order among themselves. */
  top?: string[];
  /** Exactly these hits, in any order. */
  only?: string[];
  /** Hits that must not appear. */
  never?: string[];
  /** More of the search context than the query: filters and a sort. */
  context?: { filters?: unknown[]; sort?: string[] };
  relies: Reliance[];
}

export interface RelevanceIndex {
  settings: Partial<IndexInputData>;
  documents: Record<string, unknown>[];
  rules?: RuleInputData[];
}

const fields = ['title', 'brand', 'category', 'sku', 'gtin'].map((name) => ({ from: name, to: name, type: 'STRING' }));

const shop: RelevanceIndex = {
  settings: {
    fields: [...fields, { from: 'price', to: 'price', type: 'NUMBER' }],
    search_fields: ['title', 'brand', 'category', 'sku', 'gtin'],
    filters: [{ key: 'brand' }, { key: 'price' }],
    synonyms: [
      { synonyms: ['t shirt', 'tee'] },
      { synonyms: ['sofa', 'couch'] },
      { root: 'tv', synonyms: ['television'] },
    ],
    stop_words: ['the', 'for'],
    matching: { exact_fields: ['sku', 'gtin'], token_separators: ['-'] },
    language: 'en',
  } as Partial<IndexInputData>,
  documents: [
    {
      id: 'tee-red',
      title: 'Red t shirt',
      brand: 'Basic',
      category: 'Clothing',
      sku: 'TS-100',
      gtin: '8710000000017',
      price: 15,
    },
    {
      id: 'tee-blue',
      title: 'Blue tee',
      brand: 'Basic',
      category: 'Clothing',
      sku: 'TS-101',
      gtin: '8710000000024',
      price: 15,
    },
    {
      id: 'shirt-print',
      title: 'Shirt with a t print',
      brand: 'Basic',
      category: 'Clothing',
      sku: 'SH-200',
      price: 25,
    },
    { id: 'dress-summer', title: 'Summer dresses', brand: 'Flow', category: 'Clothing', sku: 'DR-300', price: 40 },
    { id: 'dress-evening', title: 'Evening dress', brand: 'Flow', category: 'Clothing', sku: 'DR-301', price: 120 },
    { id: 'sofa', title: 'Grey sofa', brand: 'Nest', category: 'Furniture', sku: 'SO-400', price: 600 },
    { id: 'couch', title: 'Leather couch', brand: 'Nest', category: 'Furniture', sku: 'SO-401', price: 900 },
    { id: 'tv', title: 'Smart television 55 inch', brand: 'Vista', category: 'Electronics', sku: 'TV-500', price: 499 },
    {
      id: 'lamp-desk',
      title: 'Desk lamp',
      brand: 'Lumo',
      category: 'Lighting',
      sku: 'AB-1234',
      gtin: '4006381333931',
      price: 25,
    },
    {
      id: 'lamp-floor',
      title: 'Floor lamp',
      brand: 'Lumo',
      category: 'Lighting',
      sku: 'AB-1235',
      gtin: '4006381333948',
      price: 80,
    },
    { id: 'lamp-old', title: 'Old lamp', brand: 'Lumo', category: 'Lighting', sku: 'AB-0001', price: 5 },
    {
      id: 'book-guide',
      title: 'Travel guide Finland',
      brand: 'Atlas Press',
      category: 'Books',
      sku: 'BK-1',
      gtin: '9789525557992',
      price: 20,
    },
    {
      id: 'book-atlas',
      title: 'Road atlas of Finland',
      brand: 'Atlas Press',
      category: 'Books',
      sku: 'BK-2',
      gtin: '9789525157992',
      price: 30,
    },
    {
      id: 'headphones',
      title: 'Wireless headphones',
      brand: 'Clack',
      category: 'Electronics',
      sku: 'HP-700',
      price: 60,
    },
    { id: 'keyboard', title: 'Mechanical keyboard', brand: 'Clack', category: 'Electronics', sku: 'KB-800', price: 90 },
    { id: 'shoes', title: 'Trail running shoes', brand: 'Swift', category: 'Sports', sku: 'RS-900', price: 110 },
    { id: 'charger', title: 'USB-C charger 65W', brand: 'Volt', category: 'Electronics', sku: 'CH-1000', price: 35 },
    { id: 'mug', title: 'Coffee mug', brand: 'Brew', category: 'Kitchen', sku: 'MG-1100', price: 9 },
    { id: 'chair', title: 'Office chair', brand: 'Sitwell', category: 'Furniture', sku: 'OC-1200', price: 150 },
  ],
  rules: [
    { id: 'shirt-pin', query: { text: 'shirt', match: 'exact' }, pin: [{ id: 'tee-blue', position: 1 }] },
    { id: 'lamp-hide', query: { text: 'lamp', match: 'contains' }, hide: ['lamp-old'] },
    {
      id: 'seating',
      query: { text: 'seating', match: 'exact' },
      replace_query: 'office chair',
      data: { banner: 'Seating for the office' },
    },
    // Outside their periods: the mug is neither hidden nor pinned above the keyboard.
    { id: 'mug-over', query: { text: 'mug', match: 'contains' }, hide: ['mug'], active_to: '2000-01-01T00:00:00Z' },
    {
      id: 'keyboard-later',
      query: { text: 'keyboard', match: 'contains' },
      pin: [{ id: 'mug', position: 1 }],
      active_from: '2999-01-01T00:00:00Z',
    },
  ] as RuleInputData[],
};

const titled = (language: 'nl' | 'de' | 'fr' | 'es', documents: [string, string][]): RelevanceIndex => ({
  settings: { fields: [{ from: 'title', to: 'title', type: 'STRING' }], search_fields: ['title'], language },
  documents: documents.map(([id, title]) => ({ id, title })),
});

/** Coffee shops and bakeries in Paris and Lyon, for searches near a shopper. */
const stores: RelevanceIndex = {
  settings: {
    fields: [
      { from: 'title', to: 'title', type: 'STRING' },
      { from: 'location', to: 'location', type: 'GEOPOINT' },
    ],
    search_fields: ['title'],
    filters: [{ key: 'location' }],
  } as Partial<IndexInputData>,
  documents: [
    { id: 'cafe-louvre', title: 'Louvre coffee bar', location: { lat: 48.8606, lng: 2.3376 } },
    { id: 'cafe-marais', title: 'Marais coffee roasters', location: { lat: 48.8589, lng: 2.3622 } },
    { id: 'cafe-lyon', title: 'Lyon coffee house', location: { lat: 45.764, lng: 4.8357 } },
    { id: 'bakery-paris', title: 'Bakery and coffee', location: [48.8867, 2.3431] },
    { id: 'bakery-lyon', title: 'Lyon bakery', location: [45.7597, 4.8422] },
  ],
};

export const RELEVANCE_INDEXES: Record<string, RelevanceIndex> = {
  shop,
  stores,
  nl: titled('nl', [
    ['fiets-stad', 'Fiets voor de stad'],
    ['fietsen-e', 'Elektrische fietsen'],
    ['schoenen', 'Schoenen om te wandelen'],
    ['lamp', 'Hanglamp van glas'],
  ]),
  de: titled('de', [
    ['kleider', 'Kleider für den Sommer'],
    ['kleid', 'Kleid in Rot'],
    ['schuhe', 'Schuhe aus Leder'],
    ['tisch', 'Tisch aus Holz'],
  ]),
  fr: titled('fr', [
    ['chaussures', 'Chaussures de sport'],
    ['robes', 'Robes longues'],
    ['robe', 'Robe rouge'],
    ['table', 'Table en bois'],
  ]),
  es: titled('es', [
    ['zapatos', 'Zapatos de cuero'],
    ['camisas', 'Camisas de lino'],
    ['camisa', 'Camisa blanca'],
    ['mesa', 'Mesa de madera'],
  ]),
};

const shopCase = (q: string, expected: Omit<RelevanceCase, 'index' | 'q'>): RelevanceCase => ({
  index: 'shop',
  q,
  ...expected,
});

export const RELEVANCE_CASES: RelevanceCase[] = [
  // Codes of digits: no typos, so a GTIN one digit off is another product.
  shopCase('9789525557992', { only: ['book-guide'], relies: ['digits', 'exact'] }),
  shopCase('9789525157992', { only: ['book-atlas'], relies: ['digits', 'exact'] }),
  shopCase('4006381333931', { only: ['lamp-desk'], relies: ['digits', 'exact'] }),
  shopCase('978952555799', { only: [], relies: ['digits', 'exact'] }),
  // SKUs with a separator: typed with it, without it, or with a space.
  shopCase('AB-1234', { only: ['lamp-desk'], relies: ['exact', 'separator'] }),
  shopCase('AB1234', { only: ['lamp-desk'], relies: ['exact', 'separator'] }),
  shopCase('ab 1234', { only: ['lamp-desk'], relies: ['exact', 'separator'] }),
  shopCase('AB-1235', { only: ['lamp-floor'], relies: ['exact', 'separator'] }),
  shopCase('ab1235', { only: ['lamp-floor'], relies: ['exact', 'separator'] }),
  shopCase('TS-100', { only: ['tee-red'], relies: ['exact', 'separator'] }),
  shopCase('ts100', { only: ['tee-red'], relies: ['exact', 'separator'] }),
  shopCase('DR-301', { only: ['dress-evening'], relies: ['exact', 'separator'] }),
  shopCase('usb c charger', { top: ['charger'], relies: ['separator'] }),
  shopCase('usbc charger', { top: ['charger'], relies: ['separator'] }),
  // Plurals (English stems).
  // `dress` is also one typo from `press` (Atlas Press): those come after the dresses.
  shopCase('dress', { top: ['dress-summer', 'dress-evening'], relies: ['stem'] }),
  shopCase('dresses', { top: ['dress-summer', 'dress-evening'], relies: ['stem'] }),
  // The rule hiding lamp-old holds for the word `lamp` as typed, not for its plural.
  shopCase('lamps', { only: ['lamp-desk', 'lamp-floor', 'lamp-old'], relies: ['stem'] }),
  shopCase('coffee mugs', { top: ['mug'], relies: ['stem'] }),
  shopCase('headphone', { top: ['headphones'], relies: ['stem'] }),
  shopCase('evening dresses', { top: ['dress-evening'], relies: ['stem'] }),
  // Typos.
  shopCase('wireles headphnes', { top: ['headphones'], relies: ['typo'] }),
  shopCase('mechanicl keyboard', { top: ['keyboard'], relies: ['typo'] }),
  shopCase('keybaord', { top: ['keyboard'], relies: ['typo'] }),
  shopCase('ofice chair', { top: ['chair'], relies: ['typo'] }),
  shopCase('travle guide', { top: ['book-guide'], relies: ['typo'] }),
  // Prefixes while typing.
  shopCase('desk lam', { top: ['lamp-desk'], relies: ['prefix'] }),
  shopCase('mechan', { top: ['keyboard'], relies: ['prefix'] }),
  // Synonyms, phrase synonyms and one-way synonyms.
  shopCase('t shirt', { only: ['tee-red', 'tee-blue'], relies: ['synonym'] }),
  shopCase('tee', { only: ['tee-red', 'tee-blue'], relies: ['synonym'] }),
  shopCase('sofa', { only: ['sofa', 'couch'], relies: ['synonym'] }),
  shopCase('couch', { only: ['sofa', 'couch'], relies: ['synonym'] }),
  shopCase('tv', { only: ['tv'], relies: ['synonym'] }),
  shopCase('television', { only: ['tv'], relies: ['synonym'] }),
  // Stop words.
  shopCase('the coffee mug', { top: ['mug'], relies: ['stop'] }),
  shopCase('shoes for running', { top: ['shoes'], relies: ['stop', 'stem'] }),
  // Merchandising rules: a pinned document first, a hidden one never.
  shopCase('shirt', { top: ['tee-blue'], relies: ['pin'] }),
  shopCase('lamp', { only: ['lamp-desk', 'lamp-floor'], never: ['lamp-old'], relies: ['hide'] }),
  shopCase('old lamp', { never: ['lamp-old'], relies: ['hide'] }),
  // A rule that replaces the query, and rules skipped outside their periods.
  shopCase('seating', { only: ['chair'], relies: ['replace'] }),
  shopCase('mug', { only: ['mug'], relies: ['schedule'] }),
  shopCase('keyboard', { top: ['keyboard'], never: ['mug'], relies: ['schedule'] }),
  // Brands, categories and words in several fields.
  shopCase('lumo', { only: ['lamp-desk', 'lamp-floor', 'lamp-old'], relies: [] }),
  shopCase('clack', { only: ['headphones', 'keyboard'], relies: [] }),
  shopCase('finland', { only: ['book-guide', 'book-atlas'], relies: [] }),
  shopCase('clack keyboard', { top: ['keyboard'], relies: [] }),
  // Dutch, German, French and Spanish plurals.
  { index: 'nl', q: 'fiets', only: ['fiets-stad', 'fietsen-e'], relies: ['stem'] },
  { index: 'nl', q: 'fietsen', only: ['fiets-stad', 'fietsen-e'], relies: ['stem'] },
  { index: 'nl', q: 'elektrische fiets', top: ['fietsen-e'], relies: ['stem'] },
  { index: 'nl', q: 'schoen', only: ['schoenen'], relies: ['stem'] },
  { index: 'de', q: 'Kleid', only: ['kleider', 'kleid'], relies: ['stem'] },
  { index: 'de', q: 'Kleider', only: ['kleider', 'kleid'], relies: ['stem'] },
  { index: 'de', q: 'Schuh', only: ['schuhe'], relies: ['stem'] },
  { index: 'fr', q: 'chaussure', only: ['chaussures'], relies: ['stem'] },
  { index: 'fr', q: 'robe', only: ['robes', 'robe'], relies: ['stem'] },
  { index: 'fr', q: 'robes', only: ['robes', 'robe'], relies: ['stem'] },
  { index: 'es', q: 'zapato', only: ['zapatos'], relies: ['stem'] },
  { index: 'es', q: 'camisa', only: ['camisas', 'camisa'], relies: ['stem'] },
  { index: 'es', q: 'camisas', only: ['camisas', 'camisa'], relies: ['stem'] },
  // Near the shopper: the nearest match first, within a radius, inside the visible map.
  {
    index: 'stores',
    q: 'coffee',
    context: { sort: ['location(45.7578, 4.832):asc'] },
    top: ['cafe-lyon'],
    relies: ['geo'],
  },
  {
    index: 'stores',
    q: 'coffee',
    context: { filters: [{ key: 'location', operator: 'geo_radius', values: [48.8566, 2.3522, 2, 'km'] }] },
    only: ['cafe-louvre', 'cafe-marais'],
    relies: ['geo'],
  },
  {
    index: 'stores',
    q: 'bakery',
    context: { filters: [{ key: 'location', operator: 'geo_bbox', values: [45.7, 4.8, 45.8, 4.9] }] },
    only: ['bakery-lyon'],
    relies: ['geo'],
  },
];
