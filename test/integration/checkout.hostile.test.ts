/**
 * Hostile input on the checkout mutations over GraphQL: bodies nested too deep, objects with too many
 * members, huge line_items arrays, long strings in every string field and too many discount codes
 * are refused with the documented VALIDATION_ERROR, and a refused request changes nothing: no
 * checkout row, no reservation, the stock levels as they were, an open checkout left as it was.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { startTestApp } from '../helpers/app';
import { sql } from '../helpers/db';
import {
  COMPLETE,
  CREATE,
  checkoutCall,
  createCheckoutWorld,
  GET,
  UPDATE,
  type CheckoutWorld,
} from './checkout.fixtures';
import { levels } from './orders.fixtures';
import { graphql, graphqlData } from './stock.fixtures';
import { MAX_CHECKOUT_LINES, MAX_DISCOUNT_CODES } from '../../src/modules/checkout/checkout.schemas';

const t = await startTestApp();
let world: CheckoutWorld;
let open: { id: string };

const buyer = { email: 'ada@example.com', first_name: 'Ada', last_name: 'Lovelace' };
const destination = { country: 'FR', postal_code: '75001' };
const payment = { handler: 'manual' };
const long = 'x'.repeat(100_000);

const validCreate = () => ({
  business_id: world.catalog.businessId,
  channel_id: world.channelId,
  line_items: [{ sku: 'SKU-1', quantity: 1 }],
  buyer,
  destination,
  payment,
});
const validUpdate = () => ({ ...validCreate(), business_id: undefined, channel_id: undefined, id: open.id });

/** Everything a refused request could have changed. */
async function state() {
  const [rows] = await sql<{ checkouts: number; reservations: number; orders: number }>(
    t.databaseUrl,
    `SELECT (SELECT count(*)::int FROM checkouts) AS checkouts,
            (SELECT count(*)::int FROM reservations) AS reservations,
            (SELECT count(*)::int FROM orders) AS orders`,
  );
  const checkout = (await graphqlData(t, world.tenant.key, GET, { id: open.id })).checkout;
  return {
    rows,
    checkout,
    levels: [await levels(t, world, 'SKU-1'), await levels(t, world, 'SKU-2')],
  };
}

/** Sends a raw GraphQL body and expects the door's 400. */
async function expectDoorRefusal(rawBody: string) {
  const response = await t.app.inject({
    method: 'POST',
    url: '/graphql',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${world.tenant.key}` },
    payload: rawBody,
  });
  expect(response.statusCode, response.body).toBe(400);
  expect(JSON.parse(response.body).errors[0].extensions.code, response.body).toBe('VALIDATION_ERROR');
}

/** Sends a mutation and expects VALIDATION_ERROR naming `field` (a prefix of it for lists). */
async function expectRefused(query: string, input: Record<string, unknown>, field: string) {
  const response = await graphql(t, world.tenant.key, query, { input });
  expect(response.body.errors?.[0]?.extensions?.code, response.rawBody.slice(0, 2000)).toBe('VALIDATION_ERROR');
  expect(response.body.data ?? null, response.rawBody.slice(0, 2000)).toBeNull();
  expect(response.rawBody.length).toBeLessThan(20_000);
  const named = String(response.body.errors![0]!.extensions?.field ?? response.body.errors![0]!.message);
  expect(named, response.rawBody.slice(0, 2000)).toContain(field);
}

beforeAll(async () => {
  world = await createCheckoutWorld(t, 'Hostile checkout tenant', { 'SKU-1': 20, 'SKU-2': 20 });
  open = await checkoutCall(t, world.tenant.key, CREATE, validCreate());
});

describe('hostile checkout input', () => {
  it('refuses bodies nested too deep or with too many members at the door, changing nothing', async () => {
    const before = await state();
    const deep = `${'['.repeat(10_000)}${']'.repeat(10_000)}`;
    for (const query of [CREATE, UPDATE, COMPLETE]) {
      await expectDoorRefusal(`{"query":${JSON.stringify(query)},"variables":{"input":{"line_items":${deep}}}}`);
    }
    const manyKeys = Object.fromEntries(Array.from({ length: 5_000 }, (_, n) => [`k${n}`, n]));
    await expectDoorRefusal(JSON.stringify({ query: CREATE, variables: { input: { ...validCreate(), ...manyKeys } } }));
    await expectDoorRefusal(
      JSON.stringify({ query: CREATE, variables: { input: { ...validCreate(), buyer: { ...buyer, ...manyKeys } } } }),
    );
    expect(await state()).toEqual(before);
  });

  it('refuses huge line_items arrays and too many discount codes, changing nothing', async () => {
    const before = await state();
    const lines = (count: number) => Array.from({ length: count }, () => ({ sku: 'SKU-1', quantity: 1 }));
    for (const [query, input] of [
      [CREATE, validCreate()],
      [UPDATE, validUpdate()],
    ] as const) {
      await expectRefused(query, { ...input, line_items: lines(MAX_CHECKOUT_LINES + 1) }, 'line_items');
      await expectRefused(query, { ...input, line_items: lines(20_000) }, 'line_items');
      const codes = (count: number) => Array.from({ length: count }, (_, n) => `CODE${n}`);
      await expectRefused(query, { ...input, discount_codes: codes(MAX_DISCOUNT_CODES + 1) }, 'discount_codes');
      await expectRefused(query, { ...input, discount_codes: codes(50_000) }, 'discount_codes');
    }
    // Past the values a body may hold (100 000), within its size: refused before any validation.
    const bare = Array.from({ length: 60_000 }, () => ({ quantity: 1 }));
    await expectDoorRefusal(
      JSON.stringify({ query: CREATE, variables: { input: { ...validCreate(), line_items: bare } } }),
    );
    expect(await state()).toEqual(before);
  });

  it('refuses a long string in every string field, changing nothing', async () => {
    const before = await state();
    const cases: [Record<string, unknown>, string][] = [
      [{ business_id: long }, 'business_id'],
      [{ channel_id: long }, 'channel_id'],
      [{ line_items: [{ sku: long, quantity: 1 }] }, 'line_items'],
      [{ line_items: [{ product_id: long, quantity: 1 }] }, 'line_items'],
      [{ buyer: { ...buyer, email: `${long}@example.com` } }, 'buyer'],
      [{ buyer: { ...buyer, first_name: long } }, 'buyer'],
      [{ buyer: { ...buyer, last_name: long } }, 'buyer'],
      [{ buyer: { full_name: long, email: buyer.email } }, 'buyer'],
      [{ buyer: { ...buyer, phone_number: long } }, 'buyer'],
      [{ destination: { country: long } }, 'destination'],
      [{ destination: { ...destination, region: long } }, 'destination'],
      [{ destination: { ...destination, postal_code: long } }, 'destination'],
      [{ discount_codes: [long] }, 'discount_codes'],
      [{ fulfillment_option_id: long }, 'fulfillment_option_id'],
      [{ payment: { handler: long } }, 'payment'],
      [{ payment: { handler: 'sandbox', token: long } }, 'payment'],
      [{ idempotency_key: long }, 'idempotency_key'],
    ];
    for (const [fields, field] of cases) {
      await expectRefused(CREATE, { ...validCreate(), ...fields }, field);
      if (!('business_id' in fields) && !('channel_id' in fields)) {
        await expectRefused(UPDATE, { ...validUpdate(), ...fields }, field);
      }
    }
    await expectRefused(UPDATE, { ...validUpdate(), id: long }, 'id');
    await expectRefused(COMPLETE, { id: long }, 'id');
    await expectRefused(COMPLETE, { id: open.id, idempotency_key: long }, 'idempotency_key');
    expect(await state()).toEqual(before);
  });
});
