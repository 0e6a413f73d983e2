/**
 * Shared by the checkout test files: a tenant whose sales channel sells from one warehouse, with
 * prices, a tax zone and stock, and the checkout operations through GraphQL.
 */
import { expect } from 'vitest';
import type { TestApp } from '../helpers/app';
import { sql } from '../helpers/db';
import { addStock, createStockWorld, type StockWorld } from './orders.fixtures';
import { graphql, graphqlData } from './stock.fixtures';

export const CHECKOUT_FIELDS = `id status currency tax_inclusive
  line_items { id item { id sku title price } quantity held totals { type amount } }
  buyer { email first_name last_name full_name phone_number }
  destination { country region postal_code }
  totals { type amount } tax_lines { name rate_basis_points amount }
  messages { type code path content severity }
  discounts { codes } fulfillment { selected_option_id } payment { handler } order { id }
  continue_url expires_at created_at updated_at`;

const mutation = (name: string, input: string) =>
  `mutation($input: ${input}!) { ${name}(input: $input) { checkout { ${CHECKOUT_FIELDS} } } }`;
export const CREATE = mutation('createCheckout', 'CreateCheckoutInput');
export const UPDATE = mutation('updateCheckout', 'UpdateCheckoutInput');
export const COMPLETE = mutation('completeCheckout', 'CheckoutIdInput');
export const CANCEL = mutation('cancelCheckout', 'CheckoutIdInput');
export const GET = `query($id: ID!) { checkout(id: $id) { ${CHECKOUT_FIELDS} } }`;

export interface CheckoutWorld extends StockWorld {
  /** SKU-1.. products' ids. */
  products: string[];
}

/**
 * A world whose channel (EUR, tax exclusive) sells from warehouse 1: SKU-1 at 1000, SKU-2 at 250,
 * SKU-3 without a price; tax zone FR with a standard rate of 20 %.
 */
export async function createCheckoutWorld(t: TestApp, name: string, stock: Record<string, number>) {
  const world = await createStockWorld(t, name, 3);
  await graphqlData(
    t,
    world.tenant.key,
    `mutation($input: SetSalesChannelWarehousesInput!) { setSalesChannelWarehouses(input: $input) { sales_channel { id } } }`,
    { input: { channel_id: world.channelId, warehouse_ids: [world.warehouseId] } },
  );
  const products = ['SKU-1', 'SKU-2', 'SKU-3'].map((sku) => world.catalog.productIds.get(sku)!);
  const prices = await t.rest.put('/api/prices', {
    token: world.tenant.key,
    body: {
      data: [
        { productId: products[0], currency: 'EUR', amount: 1000 },
        { productId: products[1], currency: 'EUR', amount: 250 },
      ],
    },
  });
  expect(prices.status, prices.rawBody).toBe(200);
  const zone = await t.rest.post('/api/tax-zones', {
    token: world.tenant.key,
    body: {
      data: { name: 'France', country: 'FR', rates: [{ taxClass: 'standard', name: 'TVA', rateBasisPoints: 2000 }] },
    },
  });
  expect(zone.status, zone.rawBody).toBe(201);
  for (const [sku, quantity] of Object.entries(stock)) await addStock(t, world, sku, quantity);
  return { ...world, products } as CheckoutWorld;
}

export async function checkoutCall(t: TestApp, token: string, query: string, input: Record<string, unknown>) {
  const data = await graphqlData(t, token, query, { input });
  return Object.values(data)[0].checkout;
}

/** The first GraphQL error of a checkout mutation. */
export async function checkoutError(t: TestApp, token: string, query: string, input: Record<string, unknown>) {
  const response = await graphql(t, token, query, { input });
  expect(response.status, response.rawBody).toBe(200);
  expect(response.body.errors, response.rawBody).toBeDefined();
  return response.body.errors![0]!;
}

/** The units the reservations of a checkout hold, per SKU (ACTIVE and not past their expiry). */
export async function heldUnits(t: TestApp, checkoutId: string) {
  const rows = await sql<{ sku: string; units: number }>(
    t.databaseUrl,
    `SELECT p.sku, sum(ri.quantity)::int AS units FROM reservations r
       JOIN reservation_items ri ON ri.tenant_id = r.tenant_id AND ri.reservation_id = r.id
       JOIN products p ON p.id = ri.product_id
      WHERE r.notes = $1 AND r.status = 'ACTIVE' AND r.expires_at > now() GROUP BY p.sku ORDER BY p.sku`,
    [`checkout ${checkoutId}`],
  );
  return Object.fromEntries(rows.map((row) => [row.sku, row.units]));
}

/** What a checkout's held lines say they hold, per SKU. */
export const linesHeld = (checkout: { line_items: { held: boolean; quantity: number; item: { sku: string } }[] }) =>
  Object.fromEntries(checkout.line_items.filter((line) => line.held).map((line) => [line.item.sku, line.quantity]));
