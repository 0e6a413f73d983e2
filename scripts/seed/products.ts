// The demo catalog: products made up from fixed word lists by a seeded pseudo-random generator, so
// every run (and every machine) makes the same products without fetching anything.

export interface DemoProduct {
  id: string;
  sku: string;
  name: string;
  brand: string;
  category: string;
  color: string;
  price: number;
  rating: number;
  description: string;
  url: string;
}

const CATEGORIES: Record<string, { nouns: string[]; price: [number, number] }> = {
  Lighting: { nouns: ['Desk Lamp', 'Floor Lamp', 'Pendant Light', 'Wall Light', 'Reading Lamp'], price: [15, 220] },
  Audio: { nouns: ['Headphones', 'Speaker', 'Soundbar', 'Earbuds', 'Turntable'], price: [25, 600] },
  Kitchen: { nouns: ['Kettle', 'Toaster', 'Coffee Grinder', 'Chef Knife', 'Blender'], price: [12, 350] },
  Furniture: { nouns: ['Sofa', 'Armchair', 'Dining Table', 'Bookshelf', 'Side Table'], price: [60, 1800] },
  Outdoor: { nouns: ['Tent', 'Sleeping Bag', 'Camping Stove', 'Backpack', 'Hammock'], price: [20, 450] },
  Clothing: { nouns: ['T Shirt', 'Hoodie', 'Rain Jacket', 'Sneakers', 'Wool Scarf'], price: [10, 250] },
  Office: { nouns: ['Office Chair', 'Monitor Stand', 'Notebook', 'Desk Organizer', 'Standing Desk'], price: [5, 900] },
  Garden: { nouns: ['Watering Can', 'Garden Hose', 'Planter', 'Pruning Shears', 'Bird Feeder'], price: [8, 160] },
  Television: { nouns: ['TV', 'Projector', 'Streaming Box', 'TV Wall Mount', 'Universal Remote'], price: [20, 2400] },
  Toys: { nouns: ['Puzzle', 'Building Blocks', 'Plush Bear', 'Kite', 'Board Game'], price: [6, 120] },
};

const BRANDS = [
  'Lumo',
  'Nordic Home',
  'Acme',
  'Sonora',
  'Baltic Works',
  'Fjord',
  'Kettleby',
  'Oakridge',
  'Terra',
  'Vela',
  'Mistral',
  'Pebble',
  'Cobalt',
  'Juniper',
  'Harbor',
  'Atlas',
  'Quill',
  'Ember',
];
const ADJECTIVES = ['Classic', 'Compact', 'Wireless', 'Modern', 'Vintage', 'Smart', 'Foldable', 'Premium', 'Eco'];
const MATERIALS = ['Oak', 'Steel', 'Linen', 'Bamboo', 'Ceramic', 'Leather', 'Cotton', 'Walnut', 'Aluminium'];
const COLORS = ['black', 'white', 'grey', 'blue', 'green', 'red', 'natural', 'yellow'];

/** mulberry32: a small, fast generator whose sequence depends on the seed only. */
function generator(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** `count` demo products, the same ones for the same count; `shopUrl` is where their pages would be. */
export function demoProducts(count = 1000, shopUrl = 'https://shop.example.com'): DemoProduct[] {
  const random = generator(20261126);
  const pick = <T>(list: readonly T[]) => list[Math.floor(random() * list.length)]!;
  const categories = Object.keys(CATEGORIES);
  return Array.from({ length: count }, (_, i) => {
    const category = categories[i % categories.length]!;
    const { nouns, price } = CATEGORIES[category]!;
    const noun = pick(nouns);
    const brand = pick(BRANDS);
    const adjective = pick(ADJECTIVES);
    const material = pick(MATERIALS);
    const color = pick(COLORS);
    const sku = `DEMO-${String(i + 1).padStart(4, '0')}`;
    return {
      id: sku,
      sku,
      name: `${brand} ${adjective} ${material} ${noun}`,
      brand,
      category,
      color,
      price: Math.round((price[0] + random() * (price[1] - price[0])) * 100) / 100,
      rating: Math.round((2.5 + random() * 2.5) * 10) / 10,
      description: `A ${adjective.toLowerCase()} ${noun.toLowerCase()} in ${color} ${material.toLowerCase()}, by ${brand}.`,
      url: `${shopUrl}/products/${sku.toLowerCase()}`,
    };
  });
}
