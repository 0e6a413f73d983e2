/**
 * Safety stock: units a warehouse keeps back of a SKU, for every sales channel or for one. No
 * reservation, order or transfer takes them (sellable = available − safety stock), inventory shows
 * them, and every change of them is a ledger row.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { startTestApp } from '../helpers/app';
import { sql } from '../helpers/db';
import {
  addStock,
  createStockWorld,
  expectStockInvariants,
  operationsSnapshot,
  type StockWorld,
} from './orders.fixtures';
import { graphqlData, graphqlError, graphqlErrorField } from './stock.fixtures';

const t = await startTestApp();
let world: StockWorld;
let otherChannelId: string;

const SET = `mutation($input: SetSafetyStockInput!) { setSafetyStock(input: $input) { safety_stock {
  sku quantity channel_id warehouse { id } } } }`;
const RESERVE = `mutation($input: CreateReservationInput!) { createReservation(input: $input) { reservation { id } } }`;
const ORDER = `mutation($input: CreateOrderInput!) { createOrder(input: $input) { order { id } } }`;
const INVENTORY = `query($sku: String, $w: ID, $c: ID) { inventory(sku: $sku, warehouse_id: $w, filters: { channel_id: $c },
  first: 10) { edges { node { quantity_available quantity_safety quantity_sellable } } } }`;

const setSafety = (sku: string, quantity: number, channelId?: string) =>
  graphqlData(t, world.tenant.key, SET, {
    input: { sku, warehouse_id: world.warehouseId, quantity, ...(channelId ? { channel_id: channelId } : {}) },
  });
const at = (sku: string, quantity: number, channelId = world.channelId) => ({
  business_id: world.catalog.businessId,
  warehouse_id: world.warehouseId,
  channel_id: channelId,
  items: [{ sku, quantity }],
});
const reservation = (sku: string, quantity: number, channelId?: string) => ({
  input: { ...at(sku, quantity, channelId), customer: { name: 'Client' }, expires_at: Date.now() + 3_600_000 },
});
const figures = async (sku: string, channelId?: string) => {
  const data = await graphqlData(t, world.tenant.key, INVENTORY, {
    sku,
    w: channelId ? null : world.warehouseId,
    c: channelId ?? null,
  });
  return data.inventory.edges.map(({ node }) => node);
};
const snapshot = async () => ({
  ...(await operationsSnapshot(t, world.tenant.id)),
  safety: await sql(t.databaseUrl, 'SELECT * FROM safety_stocks WHERE tenant_id = $1 ORDER BY id', [world.tenant.id]),
});

beforeAll(async () => {
  world = await createStockWorld(t, 'Safety stock tenant', 4);
  const channel = await graphqlData(
    t,
    world.tenant.key,
    `mutation($input: CreateSalesChannelInput!) { createSalesChannel(input: $input) { sales_channel { id } } }`,
    { input: { name: 'Marketplace' } },
  );
  otherChannelId = channel.createSalesChannel.sales_channel.id;
  await graphqlData(
    t,
    world.tenant.key,
    `mutation($input: SetSalesChannelWarehousesInput!) { setSalesChannelWarehouses(input: $input) { sales_channel { id } } }`,
    { input: { channel_id: world.channelId, warehouse_ids: [world.warehouseId] } },
  );
  for (const sku of ['SKU-1', 'SKU-2', 'SKU-3']) await addStock(t, world, sku, 10);
});

describe('safety stock', () => {
  it('keeps units back from reservations and orders, and inventory shows what is sellable', async () => {
    await setSafety('SKU-1', 7);
    expect(await figures('SKU-1')).toEqual([{ quantity_available: 10, quantity_safety: 7, quantity_sellable: 3 }]);
    const before = await snapshot();
    // The batched reservation path and the order path both refuse what the safety stock keeps back.
    const short = await graphqlError(t, world.tenant.key, 'OUT_OF_STOCK', RESERVE, reservation('SKU-1', 4));
    expect(short.message).toContain('has 3 available');
    await graphqlError(t, world.tenant.key, 'OUT_OF_STOCK', ORDER, { input: at('SKU-1', 4) });
    await graphqlError(t, world.tenant.key, 'OUT_OF_STOCK', ORDER, {
      input: { ...at('SKU-1', 4), warehouse_id: undefined },
    });
    expect(await snapshot()).toEqual(before);
    await graphqlData(t, world.tenant.key, RESERVE, reservation('SKU-1', 2));
    await graphqlData(t, world.tenant.key, ORDER, { input: at('SKU-1', 1) });
    expect(await figures('SKU-1')).toEqual([{ quantity_available: 7, quantity_safety: 7, quantity_sellable: 0 }]);
    await graphqlError(t, world.tenant.key, 'OUT_OF_STOCK', RESERVE, reservation('SKU-1', 1));
    await expectStockInvariants(t, world.tenant.id);
  });

  it("lets a channel's own safety stock replace the warehouse's, for that channel only", async () => {
    await setSafety('SKU-2', 8);
    await setSafety('SKU-2', 2, otherChannelId);
    expect(await figures('SKU-2', world.channelId)).toEqual([
      { quantity_available: 10, quantity_safety: 8, quantity_sellable: 2 },
    ]);
    await graphqlError(t, world.tenant.key, 'OUT_OF_STOCK', RESERVE, reservation('SKU-2', 3));
    await graphqlData(t, world.tenant.key, RESERVE, reservation('SKU-2', 8, otherChannelId));
    await graphqlError(t, world.tenant.key, 'OUT_OF_STOCK', RESERVE, reservation('SKU-2', 1, otherChannelId));
    const list = await graphqlData(t, world.tenant.key, `{ safetyStocks(sku: "SKU-2") { quantity channel_id } }`);
    expect(list.safetyStocks).toEqual([
      { quantity: 8, channel_id: null },
      { quantity: 2, channel_id: otherChannelId },
    ]);
  });

  it('records each change in the ledger as a CORRECTION of delta 0 with the new safety stock', async () => {
    await setSafety('SKU-3', 4);
    await setSafety('SKU-3', 1);
    const data = await graphqlData(
      t,
      world.tenant.key,
      `{ stockMutations(query: "sku=SKU-3&sort=created_at", first: 10) { edges { node {
         source delta new_quantity safety_stock safety_channel_id } } } }`,
    );
    const rows = data.stockMutations.edges.map(({ node }) => node).filter((node) => node.safety_stock !== null);
    expect(rows).toEqual([
      { source: 'CORRECTION', delta: 0, new_quantity: 10, safety_stock: 4, safety_channel_id: null },
      { source: 'CORRECTION', delta: 0, new_quantity: 10, safety_stock: 1, safety_channel_id: null },
    ]);
    await expectStockInvariants(t, world.tenant.id);
  });

  it.each([
    ['a negative quantity', { quantity: -1 }, 'input.quantity'],
    ['a quantity beyond the largest', { quantity: 1_000_000_001 }, 'input.quantity'],
    ['a huge quantity', { quantity: 9_007_199_254_740_991 }, 'input.quantity'],
    ['an unknown SKU', { sku: 'NOPE' }, 'input.sku'],
    ['a SKU of 10 000 characters', { sku: 'S'.repeat(10_000) }, 'input.sku'],
    ['a bad warehouse id', { warehouse_id: 'warehouse-1' }, 'input.warehouse_id'],
    ['an unknown warehouse', { warehouse_id: '00000000-0000-4000-8000-000000000000' }, 'input.warehouse_id'],
    ['an unknown channel', { channel_id: '00000000-0000-4000-8000-000000000000' }, 'input.channel_id'],
  ])('refuses %s with VALIDATION_ERROR naming the field and changes nothing', async (_name, override, field) => {
    const before = await snapshot();
    const input = { sku: 'SKU-4', warehouse_id: world.warehouseId, quantity: 1, ...override };
    expect(await graphqlErrorField(t, world.tenant.key, 'VALIDATION_ERROR', SET, { input })).toBe(field);
    expect(await snapshot()).toEqual(before);
  });
});
