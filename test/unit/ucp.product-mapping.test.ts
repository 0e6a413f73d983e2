/** How a document of the catalog index reads as a UCP product: prices in minor units, skipped documents. */
import { describe, expect, it } from 'vitest';
import { CatalogMapping } from '../../src/modules/ucp/catalog-settings.schemas';
import { searchFilters } from '../../src/modules/ucp/catalog-core';
import { decodeCursor, encodeCursor, MAX_CURSOR_OFFSET } from '../../src/modules/ucp/catalog-cursor';
import { minorUnits, productOfHit } from '../../src/modules/ucp/product-mapping';
import { UcpProduct } from '../../src/modules/ucp/ucp.schemas';

const mapping = CatalogMapping.parse({
  product_id: 'pid',
  sku: 'sku',
  title: 'name',
  price: 'price',
  price_scale: 2,
  currency: 'EUR',
  currency_field: 'cur',
  categories: 'cats',
  image_url: 'img',
  url: 'link',
});

describe('prices', () => {
  it('are minor units: the value times 10^price_scale, rounded', () => {
    expect(minorUnits(mapping, 12.99)).toBe(1299);
    expect(minorUnits(mapping, '0.1')).toBe(10);
    expect(minorUnits(mapping, 1.005)).toBe(100);
    expect(minorUnits({ ...mapping, price_scale: 0 }, 1299)).toBe(1299);
  });

  it('are absent for negative, non-numeric and unsafe values', () => {
    for (const value of [-1, 'abc', '', null, undefined, Number.NaN, 1e300, true]) {
      expect(minorUnits(mapping, value)).toBeUndefined();
    }
  });

  it('bound the index field in its own units', () => {
    expect(searchFilters(mapping, { price: { min: 1000, max: 2550 }, categories: ['A'] })).toEqual([
      { key: 'price', operator: 'gte', values: [10] },
      { key: 'price', operator: 'lte', values: [25.5] },
      { key: 'cats', operator: 'in', values: ['A'] },
    ]);
    expect(searchFilters({ ...mapping, categories: null }, { categories: ['A'] })).toEqual([]);
  });
});

describe('a document', () => {
  const document = {
    pid: 42,
    sku: 'SKU-42',
    name: 'Lamp',
    price: 19.5,
    cur: 'USD',
    cats: ['Lighting', 7, null],
    img: 'javascript:alert(1)',
    link: 'https://shop.example.com/lamp',
  };

  it('is one product with one variant, in the UCP shape', () => {
    const product = productOfHit(mapping, document, new Set(['SKU-42']))!;
    expect(UcpProduct.parse(product)).toEqual(product);
    expect(product).toMatchObject({
      id: '42',
      title: 'Lamp',
      description: { plain: '' },
      url: 'https://shop.example.com/lamp',
      categories: [{ value: 'Lighting' }, { value: '7' }],
      price_range: { min: { amount: 1950, currency: 'USD' }, max: { amount: 1950, currency: 'USD' } },
      variants: [{ id: 'SKU-42', sku: 'SKU-42', availability: { available: true } }],
    });
    expect(product.media).toBeUndefined();
    expect(productOfHit(mapping, { ...document, cur: 'usd' }, new Set())!.variants[0]).toMatchObject({
      price: { currency: 'EUR' },
      availability: { available: false },
    });
  });

  it('is no product without a product id, SKU, title, price or currency', () => {
    for (const key of ['pid', 'sku', 'name', 'price'] as const) {
      expect(productOfHit(mapping, { ...document, [key]: undefined }, new Set())).toBeNull();
    }
    expect(productOfHit({ ...mapping, currency: null }, { ...document, cur: 'x' }, new Set())).toBeNull();
  });
});

describe('cursors', () => {
  it('round-trip and refuse anything else', () => {
    expect(decodeCursor(encodeCursor(10)!)).toBe(10);
    expect(encodeCursor(MAX_CURSOR_OFFSET + 1)).toBeNull();
    const forged = Buffer.from(JSON.stringify({ o: MAX_CURSOR_OFFSET + 1 })).toString('base64url');
    for (const cursor of [forged, 'eyJwYWdlIjoxfQ==', '', 'x'.repeat(65)]) expect(() => decodeCursor(cursor)).toThrow();
  });
});
