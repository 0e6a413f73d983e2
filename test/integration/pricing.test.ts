/**
 * Prices and tax over the real database: the face the checkout composes (`priceLines`, `taxFor`),
 * the REST bulk write (all or none, idempotent) and lists, tax zones over REST and GraphQL, the
 * catalog's new fields (tax class, weight, a channel's currency and tax mode), and scopes.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { createKey, createTenant, startTestApp, type Tenant } from '../helpers/app';
import { sql } from '../helpers/db';
import { expectRestError } from '../helpers/rest';
import { graphqlData, graphqlError } from './stock.fixtures';

const t = await startTestApp();
const { rest, services } = t;

let tenant: Tenant;
let other: Tenant;
let products: { id: string; sku: string }[];
let eurChannel: string;
let usdInclusive: string;

// The answers are checked field by field below; their shapes are the queries'.
type Answer = Record<string, any>;
const run = (query: string, variables?: Record<string, unknown>, token = tenant.key) =>
  graphqlData<Answer>(t, token, query, variables);

async function createProduct(sku: string, extra: Record<string, unknown> = {}, token = tenant.key) {
  return (
    await run(
      `mutation($input: CreateProductInput!) { createProduct(input: $input) { product { id sku tax_class weight_grams } } }`,
      { input: { sku, name: `Product ${sku}`, ...extra } },
      token,
    )
  ).createProduct.product;
}
async function createChannel(input: Record<string, unknown>, token = tenant.key) {
  return (
    await run(
      `mutation($input: CreateSalesChannelInput!) { createSalesChannel(input: $input) { sales_channel { id currency tax_inclusive } } }`,
      { input },
      token,
    )
  ).createSalesChannel.sales_channel;
}
const putPrices = (data: unknown[], headers: Record<string, string> = {}, token = tenant.key) =>
  rest.put('/api/prices', { token, body: { data }, headers });
const priceCount = async (tenantId = tenant.id) =>
  Number((await sql(t.databaseUrl, `SELECT count(*)::int AS n FROM prices WHERE tenant_id = '${tenantId}'`))[0]!.n);

beforeAll(async () => {
  tenant = await createTenant(rest, 'Pricing tenant');
  other = await createTenant(rest, 'Other pricing tenant');
  products = [
    await createProduct('TEA', { tax_class: 'REDUCED', weight_grams: 250 }),
    await createProduct('MUG'),
    await createProduct('BOOK', { tax_class: 'ZERO' }),
    await createProduct('NOPRICE'),
  ];
  eurChannel = (await createChannel({ name: 'Web EU' })).id;
  usdInclusive = (await createChannel({ name: 'Web US', currency: 'USD', tax_inclusive: true })).id;
});

describe('the catalog fields prices and tax need', () => {
  it('gives products a tax class (default STANDARD) and a weight, and channels a currency and tax mode', async () => {
    expect(products[0]).toMatchObject({ tax_class: 'REDUCED', weight_grams: 250 });
    expect(products[1]).toMatchObject({ tax_class: 'STANDARD', weight_grams: null });
    const channel = await createChannel({ name: 'Default' });
    expect(channel).toMatchObject({ currency: 'EUR', tax_inclusive: false });
    const changed = await run(
      `mutation($input: UpdateSalesChannelInput!) { updateSalesChannel(input: $input) { sales_channel { currency tax_inclusive } } }`,
      { input: { id: channel.id, currency: 'GBP', tax_inclusive: true } },
    );
    expect(changed.updateSalesChannel.sales_channel).toEqual({ currency: 'GBP', tax_inclusive: true });
    const updated = await run(
      `mutation($input: UpdateProductInput!) { updateProduct(input: $input) { product { tax_class weight_grams } } }`,
      { input: { id: products[1]!.id, weight_grams: 400 } },
    );
    expect(updated.updateProduct.product).toEqual({ tax_class: 'STANDARD', weight_grams: 400 });
    await graphqlError(
      t,
      tenant.key,
      'VALIDATION_ERROR',
      `mutation($input: CreateSalesChannelInput!) { createSalesChannel(input: $input) { sales_channel { id } } }`,
      { input: { name: 'Bad', currency: 'euro' } },
    );
  });
});

describe('the bulk price write', () => {
  it('sets prices all or none and answers them in the order given', async () => {
    const [tea, mug, book] = products;
    const response = await putPrices([
      { productId: tea!.id, currency: 'EUR', amount: 450 },
      { productId: mug!.id, currency: 'EUR', amount: 1200, compareAt: 1500 },
      { productId: mug!.id, currency: 'EUR', amount: 999, channelId: eurChannel },
      { productId: book!.id, currency: 'EUR', amount: 2000 },
      { productId: tea!.id, currency: 'USD', amount: 500 },
      { productId: mug!.id, currency: 'USD', amount: 1400, channelId: usdInclusive },
    ]);
    expect(response.status, response.rawBody).toBe(200);
    expect(response.body.data.map((p: { amount: number }) => p.amount)).toEqual([450, 1200, 999, 2000, 500, 1400]);
    expect(response.body.data[1]).toMatchObject({ productId: mug!.id, channelId: null, compareAt: 1500 });
    expect(await priceCount()).toBe(6);
  });

  it('replaces a price with the same product, currency and channel, and the same body twice changes nothing', async () => {
    const body = [{ productId: products[0]!.id, currency: 'EUR', amount: 475 }];
    const first = await putPrices(body);
    const second = await putPrices(body);
    expect(second.body.data[0]).toMatchObject({ id: first.body.data[0].id, amount: 475 });
    expect(await priceCount()).toBe(6);
  });

  it('answers the first response again for a repeated Idempotency-Key, and 422 for the key with another body', async () => {
    const headers = { 'Idempotency-Key': 'prices-1' };
    const body = [{ productId: products[1]!.id, currency: 'GBP', amount: 1000 }];
    const first = await putPrices(body, headers);
    const again = await putPrices(body, headers);
    expect(again.status).toBe(200);
    expect(again.body).toEqual(first.body);
    expectRestError(await putPrices([{ ...body[0], amount: 1 }], headers), 422);
    await rest.post('/api/prices/remove', {
      token: tenant.key,
      body: { data: [{ productId: products[1]!.id, currency: 'GBP' }] },
    });
  });

  it('refuses a batch with one bad entry, naming it, and writes none', async () => {
    const before = await priceCount();
    const unknown = '0190a0a0-0000-7000-8000-000000000000';
    const response = await putPrices([
      { productId: products[0]!.id, currency: 'EUR', amount: 1 },
      { productId: unknown, currency: 'EUR', amount: 1 },
      { productId: products[1]!.id, currency: 'EUR', amount: 1, channelId: usdInclusive },
      { productId: products[0]!.id, currency: 'EUR', amount: 2 },
    ]);
    expectRestError(response, 400, 'body.data[1].productId');
    expectRestError(response, 400, 'body.data[2].currency');
    expectRestError(response, 400, 'body.data[3]');
    expect(await priceCount()).toBe(before);
    const teaEur = await sql(
      t.databaseUrl,
      `SELECT amount FROM prices WHERE product_id = '${products[0]!.id}' AND currency = 'EUR'`,
    );
    expect(teaEur[0]!.amount).toBe(475);
  });

  it("does not see another tenant's products or channels", async () => {
    const response = await putPrices([{ productId: products[0]!.id, currency: 'EUR', amount: 1 }], {}, other.key);
    expectRestError(response, 400, 'body.data[0].productId');
    expect(await priceCount(other.id)).toBe(0);
  });

  it('removes prices all or none', async () => {
    const before = await priceCount();
    const missing = await rest.post('/api/prices/remove', {
      token: tenant.key,
      body: {
        data: [
          { productId: products[0]!.id, currency: 'USD' },
          { productId: products[0]!.id, currency: 'JPY' },
        ],
      },
    });
    expectRestError(missing, 404);
    expect(await priceCount()).toBe(before);
  });

  it('lists prices with cursors and filters', async () => {
    const first = await rest.get('/api/prices?page[size]=2', { token: tenant.key });
    expect(first.status, first.rawBody).toBe(200);
    expect(first.body.data).toHaveLength(2);
    const next = await rest.get(`/api/prices?page[size]=2&page[after]=${first.body.page.after}`, { token: tenant.key });
    expect(next.body.data).toHaveLength(2);
    expect(next.body.data[0].id > first.body.data[1].id).toBe(true);
    const usd = await rest.get('/api/prices?filter[currency][eq]=USD', { token: tenant.key });
    expect(usd.body.data.map((p: { currency: string }) => p.currency)).toEqual(['USD', 'USD']);
    const ofMug = await rest.get(`/api/prices?filter[product_id][eq]=${products[1]!.id}`, { token: tenant.key });
    expect(ofMug.body.data).toHaveLength(3);
    expectRestError(await rest.get('/api/prices?filter[sku][eq]=x', { token: tenant.key }), 400);
  });

  it('needs pricing:write to write and catalog:read to read', async () => {
    const reader = await createKey(rest, tenant.id, ['catalog:read']);
    expectRestError(await putPrices([{ productId: products[0]!.id, currency: 'EUR', amount: 1 }], {}, reader), 403);
    expect((await rest.get('/api/prices', { token: reader })).status).toBe(200);
    const writer = await createKey(rest, tenant.id, ['pricing:write']);
    expectRestError(await rest.get('/api/prices', { token: writer }), 403);
  });
});

describe('priceLines (the face)', () => {
  it("answers the channel's override first, then the product's price in the channel's currency", async () => {
    const [tea, mug, book, none] = products;
    const lines = await services.pricing.priceLines(tenant.id, {
      channelId: eurChannel,
      productIds: [tea!.id, mug!.id, book!.id, none!.id, 'not-an-id'],
    });
    expect(lines.currency).toBe('EUR');
    expect(lines.taxInclusive).toBe(false);
    expect([...lines.prices.entries()].sort()).toEqual(
      [
        [tea!.id, { amount: 475, compareAt: null, taxClass: 'reduced' }],
        [mug!.id, { amount: 999, compareAt: null, taxClass: 'standard' }],
        [book!.id, { amount: 2000, compareAt: null, taxClass: 'zero' }],
      ].sort(),
    );
    const usd = await services.pricing.priceLines(tenant.id, {
      channelId: usdInclusive,
      productIds: [tea!.id, mug!.id],
    });
    expect(usd).toMatchObject({ currency: 'USD', taxInclusive: true });
    expect(usd.prices.get(tea!.id)?.amount).toBe(500);
    expect(usd.prices.get(mug!.id)?.amount).toBe(1400);
  });

  it("is NOT_FOUND for an unknown channel or another tenant's", async () => {
    await expect(
      services.pricing.priceLines(other.id, { channelId: eurChannel, productIds: [] }),
    ).rejects.toMatchObject({
      key: 'NOT_FOUND',
    });
  });

  it('reads over GraphQL as Product.prices and Product.price(channel_id:)', async () => {
    const data = await run(
      `query($id: ID!, $eu: ID!, $us: ID!) { product(id: $id) { prices { currency channel_id amount compare_at }
         eu: price(channel_id: $eu) { currency amount compare_at tax_inclusive } us: price(channel_id: $us) { amount } } }`,
      { id: products[1]!.id, eu: eurChannel, us: usdInclusive },
    );
    expect(data.product.prices).toEqual([
      { currency: 'EUR', channel_id: null, amount: 1200, compare_at: 1500 },
      ...[
        { currency: 'EUR', channel_id: eurChannel, amount: 999, compare_at: null },
        { currency: 'USD', channel_id: usdInclusive, amount: 1400, compare_at: null },
      ].sort((a, b) => (a.channel_id < b.channel_id ? -1 : 1)),
    ]);
    expect(data.product.eu).toEqual({ currency: 'EUR', amount: 999, compare_at: null, tax_inclusive: false });
    expect(data.product.us).toEqual({ amount: 1400 });
  });

  it('is set and removed over GraphQL', async () => {
    const set = await run(
      `mutation($input: SetProductPricesInput!) { setProductPrices(input: $input) { prices { currency amount } } }`,
      { input: { product_id: products[3]!.id, prices: [{ currency: 'EUR', amount: 100 }] } },
    );
    expect(set.setProductPrices.prices).toEqual([{ currency: 'EUR', amount: 100 }]);
    const removed = await run(
      `mutation($input: RemoveProductPricesInput!) { removeProductPrices(input: $input) { removed } }`,
      { input: { product_id: products[3]!.id, prices: [{ currency: 'EUR' }] } },
    );
    expect(removed.removeProductPrices.removed).toBe(1);
    const refused = await graphqlError(
      t,
      tenant.key,
      'VALIDATION_ERROR',
      `mutation($input: SetProductPricesInput!) { setProductPrices(input: $input) { prices { id } } }`,
      { input: { product_id: products[3]!.id, prices: [{ currency: 'USD', amount: 1, channel_id: eurChannel }] } },
    );
    expect(refused.extensions?.field).toBe('input.prices[0].currency');
  });
});

describe('tax zones and taxFor (the face)', () => {
  let germany: string;

  it('creates, reads, replaces and deletes zones over REST, read over GraphQL', async () => {
    const created = await rest.post('/api/tax-zones', {
      token: tenant.key,
      body: {
        data: {
          name: 'Germany',
          country: 'de',
          rates: [
            { taxClass: 'standard', name: 'MwSt.', rateBasisPoints: 1900 },
            { taxClass: 'reduced', name: 'MwSt. ermäßigt', rateBasisPoints: 700 },
          ],
        },
      },
    });
    expect(created.status, created.rawBody).toBe(201);
    germany = created.body.data.id;
    expect(created.body.data).toMatchObject({ country: 'DE', region: null });
    expect(created.body.data.rates).toHaveLength(2);
    expectRestError(
      await rest.post('/api/tax-zones', {
        token: tenant.key,
        body: { data: { name: 'Again', country: 'DE', rates: [] } },
      }),
      409,
    );
    const canaries = await rest.post('/api/tax-zones', {
      token: tenant.key,
      body: { data: { name: 'Canary Islands', country: 'ES', region: 'cn', rates: [] } },
    });
    expect(canaries.status).toBe(201);
    const spain = await rest.post('/api/tax-zones', {
      token: tenant.key,
      body: { data: { name: 'Spain', country: 'ES', rates: [{ taxClass: 'standard', rateBasisPoints: 2100 }] } },
    });
    expect(spain.body.data.rates).toEqual([{ taxClass: 'standard', name: 'Spain', rateBasisPoints: 2100 }]);
    const got = await rest.get(`/api/tax-zones/${germany}`, { token: tenant.key });
    expect(got.body.data.name).toBe('Germany');
    const listed = await rest.get('/api/tax-zones?page[size]=2', { token: tenant.key });
    expect(listed.body.data).toHaveLength(2);
    expect(listed.body.page.after).not.toBeNull();
    const graph = await run(
      `{ taxZones(first: 10) { edges { node { name country region rates { tax_class rate_basis_points } } } } }`,
    );
    expect(graph.taxZones.edges.map((e: { node: { name: string } }) => e.node.name)).toEqual([
      'Germany',
      'Canary Islands',
      'Spain',
    ]);
    expect(graph.taxZones.edges[0].node.rates).toEqual([
      { tax_class: 'STANDARD', rate_basis_points: 1900 },
      { tax_class: 'REDUCED', rate_basis_points: 700 },
    ]);
    expectRestError(await rest.get(`/api/tax-zones/${germany}`, { token: other.key }), 404);
    const temp = await rest.post('/api/tax-zones', {
      token: tenant.key,
      body: { data: { name: 'France', country: 'FR', rates: [] } },
    });
    expect((await rest.delete(`/api/tax-zones/${temp.body.data.id}`, { token: tenant.key })).status).toBe(204);
    expectRestError(await rest.delete(`/api/tax-zones/${temp.body.data.id}`, { token: tenant.key }), 404);
  });

  it('computes tax per item at the destination’s zone, one line per rate', async () => {
    const items = [
      { key: 'tea', amount: 475 * 3, taxClass: 'reduced' as const },
      { key: 'mug', amount: 999, taxClass: 'standard' as const },
      { key: 'book', amount: 2000, taxClass: 'zero' as const },
    ];
    const exclusive = await services.pricing.taxFor(tenant.id, {
      destination: { country: 'de' },
      taxInclusive: false,
      items,
    });
    // tea: 1425 × 7 % = 99.75 → 100; mug: 999 × 19 % = 189.81 → 190; book: no zero rate set → 0.
    expect([...exclusive.items]).toEqual([
      ['tea', 100],
      ['mug', 190],
      ['book', 0],
    ]);
    expect(exclusive.lines).toEqual([
      { name: 'MwSt. ermäßigt', rateBasisPoints: 700, amount: 100 },
      { name: 'MwSt.', rateBasisPoints: 1900, amount: 190 },
    ]);
    expect(exclusive.total).toBe(290);
    const inclusive = await services.pricing.taxFor(tenant.id, {
      destination: { country: 'DE', region: null },
      taxInclusive: true,
      items,
    });
    // tea: 1425 − round(1331.78) = 93; mug: 999 − round(839.496) = 999 − 839 = 160.
    expect(inclusive.items.get('tea')).toBe(93);
    expect(inclusive.items.get('mug')).toBe(160);
    expect(inclusive.total).toBe(253);
  });

  it("takes a region's zone before the country's, and no tax without a zone or destination", async () => {
    const items = [{ key: 'x', amount: 1000, taxClass: 'standard' as const }];
    const canary = await services.pricing.taxFor(tenant.id, {
      destination: { country: 'ES', region: 'CN' },
      taxInclusive: false,
      items,
    });
    expect(canary).toEqual({ items: new Map([['x', 0]]), lines: [], total: 0 });
    const madrid = await services.pricing.taxFor(tenant.id, {
      destination: { country: 'ES', region: 'MD' },
      taxInclusive: false,
      items,
    });
    expect(madrid.total).toBe(210);
    const nowhere = await services.pricing.taxFor(tenant.id, {
      destination: { country: 'US' },
      taxInclusive: false,
      items,
    });
    expect(nowhere.total).toBe(0);
    const none = await services.pricing.taxFor(tenant.id, { destination: null, taxInclusive: false, items });
    expect(none.lines).toEqual([]);
    const otherTenant = await services.pricing.taxFor(other.id, {
      destination: { country: 'DE' },
      taxInclusive: false,
      items,
    });
    expect(otherTenant.total).toBe(0);
  });

  it('replaces a zone whole', async () => {
    const replaced = await rest.put(`/api/tax-zones/${germany}`, {
      token: tenant.key,
      body: { data: { name: 'Germany', country: 'DE', rates: [{ taxClass: 'standard', rateBasisPoints: 1600 }] } },
    });
    expect(replaced.status, replaced.rawBody).toBe(200);
    expect(replaced.body.data.rates).toEqual([{ taxClass: 'standard', name: 'Germany', rateBasisPoints: 1600 }]);
    const tax = await services.pricing.taxFor(tenant.id, {
      destination: { country: 'DE' },
      taxInclusive: false,
      items: [{ key: 'tea', amount: 1000, taxClass: 'reduced' }],
    });
    expect(tax.total).toBe(0);
  });
});
