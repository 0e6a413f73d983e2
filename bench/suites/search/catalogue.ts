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

/** A deterministic product catalogue: the same documents in every run. */
export function product(i: number) {
  let seed = i * 2654435761;
  const pick = <T>(list: T[]) => {
    seed = (seed * 1103515245 + 12345) >>> 0;
    return list[seed % list.length]!;
  };
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
