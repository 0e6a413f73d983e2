/**
 * Shipping methods over the real database: REST and GraphQL writes and their refusals (a refused
 * write changes nothing), hostile bodies, and the face the checkout composes, `optionsFor`: flat
 * rates, the free-above threshold, weight brackets, destinations, pickup and split shipments,
 * planned over real stock.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { createKey, createTenant, startTestApp, type Tenant } from '../helpers/app';
import { sql } from '../helpers/db';
import { expectRestError } from '../helpers/rest';
import { addStock, createStockWorld, type StockWorld } from './orders.fixtures';
import { graphqlData, graphqlError } from './stock.fixtures';

const t = await startTestApp();
const { rest, services } = t;

let world: StockWorld;
let tenant: Tenant;
let other: Tenant;
/** SKU-1 .. SKU-4 */
let p: string[];
let w1: string;
let w2: string;
let outsider: string;
let standard: string;
let express: string;
let pickup: string;

type Answer = Record<string, any>;
const run = (query: string, variables?: Record<string, unknown>, token = tenant.key) =>
  graphqlData<Answer>(t, token, query, variables);

const create = (data: unknown, headers: Record<string, string> = {}, token = tenant.key) =>
  rest.post('/api/shipping-methods', { token, body: { data }, headers });
const methodCount = async (tenantId = tenant.id) =>
  Number(
    (await sql(t.databaseUrl, `SELECT count(*)::int AS n FROM shipping_methods WHERE tenant_id = $1`, [tenantId]))[0]!
      .n,
  );
const methodRows = (tenantId = tenant.id) =>
  sql(t.databaseUrl, `SELECT * FROM shipping_methods WHERE tenant_id = $1 ORDER BY id`, [tenantId]);

const options = (
  lines: { key: string; product: number; quantity: number }[],
  subtotal: number,
  country: string | null = 'DE',
  extra: { currency?: string; channelId?: string } = {},
) =>
  services.shipping.optionsFor(tenant.id, {
    channelId: extra.channelId ?? world.channelId,
    currency: extra.currency ?? 'EUR',
    destination: country === null ? null : { country },
    subtotal,
    lines: lines.map((line) => ({ key: line.key, productId: p[line.product]!, quantity: line.quantity })),
  });
const summary = (quotes: Awaited<ReturnType<typeof options>>) => quotes.map((quote) => `${quote.id}=${quote.amount}`);

beforeAll(async () => {
  world = await createStockWorld(t, 'Shipping tenant', 4);
  tenant = world.tenant;
  other = await createTenant(rest, 'Other shipping tenant');
  p = ['SKU-1', 'SKU-2', 'SKU-3', 'SKU-4'].map((sku) => world.catalog.productIds.get(sku)!);
  [w1, w2] = world.catalog.warehouseIds;
  outsider = world.catalog.otherWarehouseId;
  await run(
    `mutation($input: SetSalesChannelWarehousesInput!) { setSalesChannelWarehouses(input: $input) { sales_channel { id } } }`,
    { input: { channel_id: world.channelId, warehouse_ids: [w1, w2] } },
  );
  for (const [index, grams] of [500, 1000, null].entries()) {
    await run(`mutation($input: UpdateProductInput!) { updateProduct(input: $input) { product { id } } }`, {
      input: { id: p[index], weight_grams: grams },
    });
  }
  // SKU-1: 10 at w1, 5 at w2; SKU-2: 3 at w2 only; SKU-3 (no weight): 5 at w1; SKU-4: none.
  await addStock(t, world, 'SKU-1', 10, { warehouseId: w1 });
  await addStock(t, world, 'SKU-1', 5, { warehouseId: w2 });
  await addStock(t, world, 'SKU-2', 3, { warehouseId: w2 });
  await addStock(t, world, 'SKU-3', 5, { warehouseId: w1 });
});

describe('shipping methods over REST', () => {
  it('creates, reads, lists, replaces and deletes a method', async () => {
    const created = await create({
      channelId: world.channelId,
      title: 'Standard shipping',
      type: 'SHIPPING',
      countries: ['de', 'AT'],
      rateKind: 'FLAT',
      flatAmount: 495,
      freeAbove: 5000,
    });
    expect(created.status, created.rawBody).toBe(201);
    expect(created.body.data).toMatchObject({
      channelId: world.channelId,
      currency: 'EUR',
      title: 'Standard shipping',
      countries: ['DE', 'AT'],
      rateKind: 'FLAT',
      flatAmount: 495,
      freeAbove: 5000,
      weightBrackets: [],
      pickupWarehouseIds: [],
      active: true,
    });
    standard = created.body.data.id;
    const got = await rest.get(`/api/shipping-methods/${standard}`, { token: tenant.key });
    expect(got.body.data).toEqual(created.body.data);

    const weighed = await create({
      channelId: world.channelId,
      title: 'Express',
      type: 'SHIPPING',
      countries: ['DE'],
      rateKind: 'WEIGHT',
      weightBrackets: [
        { upToGrams: 1000, amount: 700 },
        { upToGrams: 5000, amount: 1500 },
      ],
    });
    expect(weighed.status, weighed.rawBody).toBe(201);
    express = weighed.body.data.id;
    const collected = await create({
      channelId: world.channelId,
      title: 'Pickup',
      type: 'PICKUP',
      countries: ['DE'],
      rateKind: 'FLAT',
      pickupWarehouseIds: [w1, w2],
    });
    expect(collected.status, collected.rawBody).toBe(201);
    pickup = collected.body.data.id;

    const temp = await create({
      channelId: world.channelId,
      title: 'France',
      type: 'SHIPPING',
      countries: ['FR'],
      rateKind: 'FLAT',
      flatAmount: 900,
    });
    const replaced = await rest.put(`/api/shipping-methods/${temp.body.data.id}`, {
      token: tenant.key,
      body: {
        data: {
          channelId: world.channelId,
          title: 'France (paused)',
          type: 'SHIPPING',
          countries: ['FR'],
          rateKind: 'FLAT',
          flatAmount: 950,
          active: false,
        },
      },
    });
    expect(replaced.status, replaced.rawBody).toBe(200);
    expect(replaced.body.data).toMatchObject({
      title: 'France (paused)',
      flatAmount: 950,
      freeAbove: null,
      active: false,
    });
    const page = await rest.get(`/api/shipping-methods?filter[channel_id][eq]=${world.channelId}&page[size]=2`, {
      token: tenant.key,
    });
    expect(page.body.data.map((m: { title: string }) => m.title)).toEqual(['Standard shipping', 'Express']);
    expect(page.body.page.after).not.toBeNull();
    const next = await rest.get(page.body.page.next.replace(/^https?:\/\/[^/]+/, ''), { token: tenant.key });
    expect(next.body.data.map((m: { title: string }) => m.title)).toEqual(['Pickup', 'France (paused)']);
    expect((await rest.delete(`/api/shipping-methods/${temp.body.data.id}`, { token: tenant.key })).status).toBe(204);
    expectRestError(await rest.delete(`/api/shipping-methods/${temp.body.data.id}`, { token: tenant.key }), 404);
    expect(await methodCount()).toBe(3);
  });

  it('answers the first response again for a repeated Idempotency-Key, and 422 for the key with another body', async () => {
    const body = {
      channelId: world.channelId,
      title: 'Retry-safe',
      type: 'SHIPPING',
      countries: ['NL'],
      rateKind: 'FLAT',
      flatAmount: 100,
      active: false,
    };
    const headers = { 'Idempotency-Key': 'shipping-1' };
    const first = await create(body, headers);
    const before = await methodCount();
    const again = await create(body, headers);
    expect(again.status).toBe(201);
    expect(again.body).toEqual(first.body);
    expect(await methodCount()).toBe(before);
    expectRestError(await create({ ...body, flatAmount: 101 }, headers), 422);
    expect(await methodCount()).toBe(before);
    await rest.delete(`/api/shipping-methods/${first.body.data.id}`, { token: tenant.key });
  });

  it('refuses what breaks the rules, naming each field, and writes nothing', async () => {
    const before = await methodRows();
    const unknownChannel = await create({
      channelId: '0190a0a0-0000-7000-8000-000000000000',
      title: 'Nowhere',
      type: 'SHIPPING',
      countries: [],
      rateKind: 'FLAT',
    });
    expectRestError(unknownChannel, 400, 'body.data.channelId');
    const badPickup = await create({
      channelId: world.channelId,
      title: 'Elsewhere',
      type: 'PICKUP',
      countries: ['DE'],
      rateKind: 'WEIGHT',
      pickupWarehouseIds: [w1, outsider],
    });
    expectRestError(badPickup, 400, 'body.data.pickupWarehouseIds[1]');
    expectRestError(badPickup, 400, 'body.data.weightBrackets');
    const shape = await create({
      channelId: world.channelId,
      title: ' ',
      type: 'BOAT',
      countries: ['DEU', 'de', 'DE'],
      rateKind: 'FLAT',
      flatAmount: -1,
      weightBrackets: [
        { upToGrams: 500, amount: 1 },
        { upToGrams: 500, amount: 2 },
      ],
    });
    for (const field of ['title', 'type', 'countries[0]', 'flatAmount', 'weightBrackets']) {
      expectRestError(shape, 400, `body.data.${field}`);
    }
    const reader = await createKey(rest, tenant.id, ['catalog:read']);
    expectRestError(
      await create(
        { channelId: world.channelId, title: 'X', type: 'SHIPPING', countries: [], rateKind: 'FLAT' },
        {},
        reader,
      ),
      403,
    );
    expect((await rest.get(`/api/shipping-methods/${standard}`, { token: reader })).status).toBe(200);
    const writerOnly = await createKey(rest, tenant.id, ['inventory:read']);
    expectRestError(await rest.get('/api/shipping-methods', { token: writerOnly }), 403);
    expectRestError(await rest.get(`/api/shipping-methods/${standard}`, { token: other.key }), 404);
    expectRestError(
      await rest.put(`/api/shipping-methods/${standard}`, {
        token: other.key,
        body: {
          data: { channelId: world.channelId, title: 'Taken', type: 'SHIPPING', countries: [], rateKind: 'FLAT' },
        },
      }),
      404,
    );
    expectRestError(await rest.delete(`/api/shipping-methods/${standard}`, { token: other.key }), 404);
    expect(await methodRows()).toEqual(before);
  });

  it('refuses hostile bodies with the documented 400 and changes nothing', async () => {
    const before = await methodRows();
    const valid = { channelId: world.channelId, title: 'T', type: 'SHIPPING', countries: ['DE'], rateKind: 'FLAT' };
    const post = (rawBody: string) =>
      rest.post('/api/shipping-methods', {
        token: tenant.key,
        rawBody,
        headers: { 'content-type': 'application/json' },
      });
    const deep = await post(`{"data":${'['.repeat(10_000)}${']'.repeat(10_000)}}`);
    expectRestError(deep, 400);
    const manyKeys = Object.fromEntries(Array.from({ length: 5_000 }, (_, n) => [`k${n}`, n]));
    expectRestError(await post(JSON.stringify({ data: { ...valid, ...manyKeys } })), 400);
    const extraKey = await create({ ...valid, surprise: true });
    expectRestError(extraKey, 400, 'body.data.surprise');
    const hugeArray = await create({ ...valid, countries: Array.from({ length: 50_000 }, () => 'DE') });
    expectRestError(hugeArray, 400);
    const manyBrackets = await create({
      ...valid,
      rateKind: 'WEIGHT',
      weightBrackets: Array.from({ length: 51 }, (_, n) => ({ upToGrams: n + 1, amount: 1 })),
    });
    expectRestError(manyBrackets, 400, 'body.data.weightBrackets');
    const longTitle = await create({ ...valid, title: 'x'.repeat(100_000) });
    expectRestError(longTitle, 400, 'body.data.title');
    expectRestError(await create({ ...valid, flatAmount: 1e20 }), 400, 'body.data.flatAmount');
    expect(await methodRows()).toEqual(before);
  });
});

describe('shipping methods over GraphQL', () => {
  const FIELDS = `id channel_id currency title type countries rate_kind flat_amount free_above
    weight_brackets { up_to_grams amount } pickup_warehouse_ids active`;

  it('creates, lists, replaces and deletes a method', async () => {
    const created = await run(
      `mutation($input: CreateShippingMethodInput!) { createShippingMethod(input: $input) { shipping_method { ${FIELDS} } } }`,
      {
        input: {
          channel_id: world.channelId,
          title: 'Heavy goods',
          type: 'SHIPPING',
          countries: ['CH'],
          rate_kind: 'WEIGHT',
          weight_brackets: [{ up_to_grams: 30_000, amount: 4900 }],
          active: false,
        },
      },
    );
    const method = created.createShippingMethod.shipping_method;
    expect(method).toMatchObject({
      currency: 'EUR',
      type: 'SHIPPING',
      rate_kind: 'WEIGHT',
      weight_brackets: [{ up_to_grams: 30_000, amount: 4900 }],
      free_above: null,
      active: false,
    });
    const listed = await run(`query($c: ID!) { shippingMethods(channel_id: $c) { id title } }`, { c: world.channelId });
    expect(listed.shippingMethods.map((m: { title: string }) => m.title)).toEqual([
      'Standard shipping',
      'Express',
      'Pickup',
      'Heavy goods',
    ]);
    const updated = await run(
      `mutation($input: UpdateShippingMethodInput!) { updateShippingMethod(input: $input) { shipping_method { ${FIELDS} } } }`,
      {
        input: {
          id: method.id,
          channel_id: world.channelId,
          title: 'Heavy goods',
          type: 'SHIPPING',
          countries: ['CH', 'LI'],
          rate_kind: 'FLAT',
          flat_amount: 5900,
          free_above: 100_000,
          active: false,
        },
      },
    );
    expect(updated.updateShippingMethod.shipping_method).toMatchObject({
      countries: ['CH', 'LI'],
      rate_kind: 'FLAT',
      flat_amount: 5900,
      free_above: 100_000,
      weight_brackets: [],
    });
    const deleted = await run(
      `mutation($input: DeleteShippingMethodInput!) { deleteShippingMethod(input: $input) { id } }`,
      { input: { id: method.id } },
    );
    expect(deleted.deleteShippingMethod.id).toBe(method.id);
    expect(await methodCount()).toBe(3);
  });

  it('refuses a bad input and an unknown channel, and writes nothing', async () => {
    const before = await methodRows();
    const refused = await graphqlError(
      t,
      tenant.key,
      'VALIDATION_ERROR',
      `mutation($input: CreateShippingMethodInput!) { createShippingMethod(input: $input) { shipping_method { id } } }`,
      {
        input: {
          channel_id: world.channelId,
          title: 'Pickup nowhere',
          type: 'PICKUP',
          countries: ['DE'],
          rate_kind: 'FLAT',
          pickup_warehouse_ids: [outsider],
        },
      },
    );
    expect(refused.extensions?.field).toBe('input.pickup_warehouse_ids[0]');
    await graphqlError(t, tenant.key, 'NOT_FOUND', `query($c: ID!) { shippingMethods(channel_id: $c) { id } }`, {
      c: '0190a0a0-0000-7000-8000-000000000000',
    });
    const reader = await createKey(rest, tenant.id, ['catalog:read']);
    await graphqlError(
      t,
      reader,
      'FORBIDDEN',
      `mutation($input: DeleteShippingMethodInput!) { deleteShippingMethod(input: $input) { id } }`,
      { input: { id: standard } },
    );
    expect(await methodRows()).toEqual(before);
  });
});

describe('shipping method mutations under retries and hostile input', () => {
  const CREATE = `mutation($input: CreateShippingMethodInput!) { createShippingMethod(input: $input) { shipping_method { id } } }`;
  const input = {
    channel_id: '',
    title: 'Retried',
    type: 'SHIPPING',
    countries: ['BE'],
    rate_kind: 'FLAT',
    flat_amount: 300,
    active: false,
  };

  it('answers the first result again for a repeated idempotency_key, and refuses the key with another input', async () => {
    const retried = { ...input, channel_id: world.channelId, idempotency_key: 'graphql-shipping-1' };
    const first = await run(CREATE, { input: retried });
    const before = await methodCount();
    const again = await run(CREATE, { input: retried });
    expect(again.createShippingMethod.shipping_method.id).toBe(first.createShippingMethod.shipping_method.id);
    expect(await methodCount()).toBe(before);
    await graphqlError(t, tenant.key, 'CONFLICT', CREATE, { input: { ...retried, flat_amount: 301 } });
    expect(await methodCount()).toBe(before);
    await run(`mutation($input: DeleteShippingMethodInput!) { deleteShippingMethod(input: $input) { id } }`, {
      input: { id: first.createShippingMethod.shipping_method.id },
    });
  });

  it('refuses huge lists and long strings with VALIDATION_ERROR and writes nothing', async () => {
    const before = await methodRows();
    const valid = { ...input, channel_id: world.channelId };
    for (const hostile of [
      { ...valid, countries: Array.from({ length: 5_000 }, (_, n) => `C${n}`) },
      { ...valid, title: 'x'.repeat(100_000) },
      { ...valid, pickup_warehouse_ids: Array.from({ length: 1_000 }, () => w1) },
      {
        ...valid,
        rate_kind: 'WEIGHT',
        weight_brackets: Array.from({ length: 500 }, (_, n) => ({ up_to_grams: n + 1, amount: 1 })),
      },
    ]) {
      await graphqlError(t, tenant.key, 'VALIDATION_ERROR', CREATE, { input: hostile });
    }
    expect(await methodRows()).toEqual(before);
  });
});

describe('the options of a checkout (optionsFor)', () => {
  it('quotes a flat rate, and free from the threshold on: equal is free, one below is charged', async () => {
    const below = await options([{ key: 'a', product: 0, quantity: 1 }], 4999);
    expect(summary(below)).toEqual([
      `ship_${standard}=495`,
      `ship_${express}=700`,
      `pickup_${pickup}_${w1}=0`,
      `pickup_${pickup}_${w2}=0`,
    ]);
    expect(below[0]).toEqual({
      id: `ship_${standard}`,
      methodId: standard,
      type: 'shipping',
      title: 'Standard shipping',
      amount: 495,
      warehouseId: null,
      groups: [{ warehouseId: w1, lineKeys: ['a'] }],
    });
    const equal = await options([{ key: 'a', product: 0, quantity: 1 }], 5000);
    expect(equal.find((quote) => quote.methodId === standard)!.amount).toBe(0);
    const above = await options([{ key: 'a', product: 0, quantity: 1 }], 5001);
    expect(above.find((quote) => quote.methodId === standard)!.amount).toBe(0);
  });

  it('charges by the bracket the weight fits, and offers no weight rate above the last or without a weight', async () => {
    const expressOf = async (lines: { key: string; product: number; quantity: number }[]) =>
      (await options(lines, 0)).find((quote) => quote.methodId === express)?.amount ?? null;
    expect(await expressOf([{ key: 'a', product: 0, quantity: 2 }])).toBe(700); // 1000 g: the first bracket's edge
    expect(await expressOf([{ key: 'a', product: 0, quantity: 3 }])).toBe(1500); // 1500 g
    expect(await expressOf([{ key: 'a', product: 0, quantity: 10 }])).toBe(1500); // 5000 g
    expect(await expressOf([{ key: 'a', product: 0, quantity: 11 }])).toBeNull(); // 5500 g: above every bracket
    // SKU-3 has no weight: the weight rate cannot charge it; the flat rate still ships it.
    const unweighed = await options([{ key: 'c', product: 2, quantity: 1 }], 0);
    expect(unweighed.map((quote) => quote.methodId)).not.toContain(express);
    expect(unweighed.map((quote) => quote.methodId)).toContain(standard);
  });

  it('offers only the methods of the destination: none abroad, pickup only without a destination', async () => {
    const line = [{ key: 'a', product: 0, quantity: 1 }];
    expect(summary(await options(line, 0, 'AT'))).toEqual([`ship_${standard}=495`]);
    expect(await options(line, 0, 'US')).toEqual([]);
    expect((await options(line, 0, 'de')).length).toBe(4);
    expect((await options(line, 0, null)).map((quote) => quote.type)).toEqual(['pickup', 'pickup']);
    // An inactive method (France) is never offered.
    expect(await options(line, 0, 'FR')).toEqual([]);
  });

  it('offers pickup only at warehouses that hold every line', async () => {
    const onlyAtW2 = await options([{ key: 'b', product: 1, quantity: 1 }], 0);
    expect(onlyAtW2.filter((quote) => quote.type === 'pickup')).toEqual([
      {
        id: `pickup_${pickup}_${w2}`,
        methodId: pickup,
        type: 'pickup',
        title: 'Pickup (Warehouse 2)',
        amount: 0,
        warehouseId: w2,
        groups: [{ warehouseId: w2, lineKeys: ['b'] }],
      },
    ]);
    const onlyAtW1 = await options(
      [
        { key: 'a', product: 0, quantity: 6 },
        { key: 'c', product: 2, quantity: 1 },
      ],
      0,
    );
    expect(onlyAtW1.filter((quote) => quote.type === 'pickup').map((quote) => quote.warehouseId)).toEqual([w1]);
  });

  it('shows a split shipment as several groups', async () => {
    const quotes = await options(
      [
        { key: 'a', product: 0, quantity: 1 },
        { key: 'b', product: 1, quantity: 1 },
      ],
      0,
    );
    const shipping = quotes.find((quote) => quote.methodId === standard)!;
    expect(shipping.groups).toEqual([
      { warehouseId: w1, lineKeys: ['a'] },
      { warehouseId: w2, lineKeys: ['b'] },
    ]);
    // A line more than the first warehouse has is split over both.
    const split = (await options([{ key: 'a', product: 0, quantity: 12 }], 0)).find((q) => q.methodId === standard)!;
    expect(split.groups).toEqual([
      { warehouseId: w1, lineKeys: ['a'] },
      { warehouseId: w2, lineKeys: ['a'] },
    ]);
    // w2 holds both lines of the first query: its pickup is offered, w1's is not.
    expect(quotes.filter((quote) => quote.type === 'pickup').map((quote) => quote.warehouseId)).toEqual([w2]);
  });

  it('plans a bundle as its components: shipped from where they are, picked up where all of them are', async () => {
    const kit = (
      await run(`mutation($input: CreateProductInput!) { createProduct(input: $input) { product { id } } }`, {
        input: { sku: 'KIT', name: 'Kit', weight_grams: 800 },
      })
    ).createProduct.product.id;
    await run(`mutation($input: SetBundleComponentsInput!) { setBundleComponents(input: $input) { product { id } } }`, {
      input: {
        sku: 'KIT',
        components: [
          { sku: 'SKU-1', quantity: 2 },
          { sku: 'SKU-2', quantity: 1 },
        ],
      },
    });
    const quote = (quantity: number) =>
      services.shipping.optionsFor(tenant.id, {
        channelId: world.channelId,
        currency: 'EUR',
        destination: { country: 'DE' },
        subtotal: 0,
        lines: [{ key: 'k', productId: kit, quantity }],
      });
    // One kit: 2 × SKU-1 from w1 (first in priority), 1 × SKU-2 from w2; w2 has both components.
    const one = await quote(1);
    expect(one.find((q) => q.methodId === standard)!.groups).toEqual([
      { warehouseId: w1, lineKeys: ['k'] },
      { warehouseId: w2, lineKeys: ['k'] },
    ]);
    expect(one.find((q) => q.methodId === express)!.amount).toBe(700); // the kit's own 800 g
    expect(one.filter((q) => q.type === 'pickup').map((q) => q.warehouseId)).toEqual([w2]);
    // Four kits need 4 × SKU-2: there are 3.
    expect(await quote(4)).toEqual([]);
  });

  it('offers nothing for items out of stock, unknown products, another currency or no lines', async () => {
    expect(await options([{ key: 'd', product: 3, quantity: 1 }], 0)).toEqual([]);
    expect(await options([{ key: 'a', product: 0, quantity: 16 }], 0)).toEqual([]);
    expect(await options([{ key: 'a', product: 0, quantity: 1 }], 0, 'DE', { currency: 'USD' })).toEqual([]);
    expect(await options([], 0)).toEqual([]);
    expect(
      await services.shipping.optionsFor(tenant.id, {
        channelId: world.channelId,
        currency: 'EUR',
        destination: { country: 'DE' },
        subtotal: 0,
        lines: [{ key: 'x', productId: '0190a0a0-0000-7000-8000-000000000000', quantity: 1 }],
      }),
    ).toEqual([]);
    await expect(
      options([{ key: 'a', product: 0, quantity: 1 }], 0, 'DE', { channelId: '0190a0a0-0000-7000-8000-000000000000' }),
    ).rejects.toMatchObject({ key: 'NOT_FOUND' });
    // Another tenant sees none of these methods.
    await expect(
      services.shipping.optionsFor(other.id, {
        channelId: world.channelId,
        currency: 'EUR',
        destination: { country: 'DE' },
        subtotal: 0,
        lines: [{ key: 'a', productId: p[0]!, quantity: 1 }],
      }),
    ).rejects.toMatchObject({ key: 'NOT_FOUND' });
  });
});
