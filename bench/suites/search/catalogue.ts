/**
 * The search benchmark's catalogue: deterministic generated products, the index they are upserted
 * into and the query a shop front end sends while someone types.
 */

export const DOCUMENTS = 100_000;
export const ALIAS = 'bench-products';

const BRANDS = ['Lumo', 'Sitwell', 'Clack', 'Brite', 'Nordic', 'Vanta', 'Kettle & Co', 'Orbit', 'Pellucid', 'Hearth'];
const ADJECTIVES = [
  'wireless',
  'compact',
  'ergonomic',
  'vintage',
  'smart',
  'foldable',
  'waterproof',
  'premium',
  'portable',
  'silent',
  'modular',
  'classic',
];
const NOUNS = [
  'headphone',
  'keyboard',
  'lamp',
  'chair',
  'speaker',
  'backpack',
  'kettle',
  'monitor',
  'blender',
  'jacket',
  'tent',
  'watch',
  'camera',
  'desk',
  'sofa',
];
const COLORS = ['black', 'white', 'red', 'blue', 'green', 'grey', 'oak', 'walnut'];
const SYLLABLES = [
  'ka',
  'lo',
  'mi',
  'ver',
  'sta',
  'no',
  'ri',
  'zen',
  'tal',
  'bo',
  'qui',
  'der',
  'san',
  'pe',
  'lux',
  'ar',
];
/** Model names, a few thousand distinct words, so the vocabulary is not only the lists above. */
const model = (i: number) =>
  SYLLABLES[i % 16]! + SYLLABLES[Math.floor(i / 16) % 16]! + SYLLABLES[Math.floor(i / 256) % 16]!;

/** A product's fields from its number, each word drawn by `pick` (the order of the draws is part of the catalogue). */
function productOf(i: number, pick: <T>(list: T[]) => T) {
  const noun = pick(NOUNS);
  const brand = pick(BRANDS);
  return {
    id: `prod-${i}`,
    name: `${brand} ${model((i * 7919) % 4096)} ${pick(ADJECTIVES)} ${noun} ${pick(COLORS)}`,
    description: `A ${pick(ADJECTIVES)} ${noun} in ${pick(COLORS)}, ${pick(ADJECTIVES)} and ${pick(ADJECTIVES)}. Sku ${i}.`,
    brand,
    category: noun,
    price: 5 + ((i * 37) % 995),
    in_stock: i % 7 !== 0,
    metadata: { url: `https://shop.example.com/p/${i}` },
  };
}

/** A deterministic product catalogue: the same documents in every run. */
export function product(i: number) {
  let seed = i * 2654435761;
  return productOf(i, (list) => {
    seed = (seed * 1103515245 + 12345) >>> 0;
    return list[seed % list.length]!;
  });
}

/** A 32-bit integer hash (MurmurHash3's finalizer): every bit of the input moves about half the output's. */
function mix(x: number): number {
  x = Math.imul(x ^ (x >>> 16), 0x85ebca6b);
  x = Math.imul(x ^ (x >>> 13), 0xc2b2ae35);
  return (x ^ (x >>> 16)) >>> 0;
}

/**
 * Products like `product`'s, each word drawn from a hash of the product's number and the draw's, so
 * that a catalogue of any size holds the words in the same proportions. `product`'s first draw
 * leaves 32-bit arithmetic: past a few thousand products its draws take fewer and fewer values (the
 * last 100 000 of a million products share 8 sets of words). Its catalogue stays as it is so that
 * the search rows keep being measured on the same documents; the scale rows use this one.
 */
export function uniformProduct(i: number) {
  let draw = 0;
  return productOf(i, (list) => list[mix(i * 8 + draw++) % list.length]!);
}

export const INDEX = {
  name: 'Bench products',
  alias: ALIAS,
  fields: [
    { from: 'name', type: 'STRING' },
    { from: 'description', type: 'STRING' },
    { from: 'brand', type: 'STRING' },
    { from: 'category', type: 'STRING' },
    { from: 'price', type: 'NUMBER' },
    { from: 'in_stock', type: 'BOOLEAN' },
  ],
  search_fields: ['name', 'brand', 'description'],
  filters: [{ key: 'brand' }, { key: 'category' }, { key: 'price' }, { key: 'in_stock' }],
};

/** What a shop front end sends while someone types "nordic wireless headph". */
export const CONTEXT = {
  q: 'nordic wireless headph',
  facets: ['brand', 'price'],
  filters: [{ key: 'price', operator: 'lte' as const, values: ['800'] }],
  limit: 10,
};
