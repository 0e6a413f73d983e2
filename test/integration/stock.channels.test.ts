/**
 * Sales channels sell from an ordered list of warehouses (`setSalesChannelWarehouses`), and the
 * `inventory` query reads a channel's stock summed over them (`filters: {channel_id}`).
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { createKey, startTestApp } from '../helpers/app';
import { sql } from '../helpers/db';
import { addStock, createStockWorld, type StockWorld } from './orders.fixtures';
import { graphqlData, graphqlError, graphqlErrorField } from './stock.fixtures';

const t = await startTestApp();
let world: StockWorld;

const SET = `mutation($input: SetSalesChannelWarehousesInput!) {
  setSalesChannelWarehouses(input: $input) { sales_channel { id warehouses { id name } } } }`;
const CHANNEL_STOCK = `query($channel: ID!, $sku: String) {
  inventory(sku: $sku, filters: {channel_id: $channel}, first: 10) { edges { node {
    sku quantity quantity_available quantity_reserved warehouse { id } position { id } } } } }`;

const setWarehouses = async (channelId: string, warehouseIds: string[]) =>
  (await graphqlData(t, world.tenant.key, SET, { input: { channel_id: channelId, warehouse_ids: warehouseIds } }))
    .setSalesChannelWarehouses.sales_channel;

const channelStock = async (channelId: string, sku?: string) =>
  (await graphqlData(t, world.tenant.key, CHANNEL_STOCK, { channel: channelId, sku })).inventory.edges.map(
    (edge) => edge.node,
  );

const links = (channelId: string) =>
  sql(t.databaseUrl, 'SELECT warehouse_id, priority FROM channel_warehouses WHERE channel_id = $1 ORDER BY priority', [
    channelId,
  ]);

beforeAll(async () => {
  world = await createStockWorld(t, 'Channel tenant', 2);
  const [first, second] = world.catalog.warehouseIds;
  await addStock(t, world, 'SKU-1', 10, { position: 'A-01', warehouseId: first });
  await addStock(t, world, 'SKU-1', 5, { warehouseId: first });
  await addStock(t, world, 'SKU-1', 7, { warehouseId: second });
  await addStock(t, world, 'SKU-2', 3, { warehouseId: second });
});

describe('setSalesChannelWarehouses', () => {
  it('sets and replaces the warehouses a channel sells from, in priority order', async () => {
    const [first, second] = world.catalog.warehouseIds;
    const both = await setWarehouses(world.channelId, [second, first]);
    expect(both.warehouses.map((warehouse) => warehouse.id)).toEqual([second, first]);
    const read = await graphqlData(
      t,
      world.tenant.key,
      `query($id: ID!) { salesChannel(id: $id) { warehouses { id } } }`,
      {
        id: world.channelId,
      },
    );
    expect(read.salesChannel.warehouses.map((warehouse) => warehouse.id)).toEqual([second, first]);
    expect((await setWarehouses(world.channelId, [first])).warehouses.map((warehouse) => warehouse.id)).toEqual([
      first,
    ]);
    expect((await setWarehouses(world.channelId, [])).warehouses).toEqual([]);
    expect(await links(world.channelId)).toEqual([]);
  });

  it('refuses unknown, foreign and repeated warehouses and an unknown channel, changing nothing', async () => {
    const [first, second] = world.catalog.warehouseIds;
    await setWarehouses(world.channelId, [first]);
    const before = await links(world.channelId);
    const field = (input: Record<string, unknown>) =>
      graphqlErrorField(t, world.tenant.key, 'VALIDATION_ERROR', SET, { input });
    expect(await field({ channel_id: world.channelId, warehouse_ids: [second, second] })).toBe(
      'input.warehouse_ids[1]',
    );
    expect(await field({ channel_id: world.channelId, warehouse_ids: ['not-an-id'] })).toBe('input.warehouse_ids[0]');
    const other = await createStockWorld(t, 'Other channel tenant', 1);
    expect(await field({ channel_id: world.channelId, warehouse_ids: [other.warehouseId] })).toBe(
      'input.warehouse_ids[0]',
    );
    await graphqlError(t, world.tenant.key, 'NOT_FOUND', SET, {
      input: { channel_id: other.channelId, warehouse_ids: [first] },
    });
    const reader = await createKey(t.rest, world.tenant.id, ['catalog:read']);
    await graphqlError(t, reader, 'FORBIDDEN', SET, { input: { channel_id: world.channelId, warehouse_ids: [] } });
    expect(await links(world.channelId)).toEqual(before);
  });

  it('drops a deleted warehouse from the channels that sold from it', async () => {
    const created = await graphqlData(
      t,
      world.tenant.key,
      `mutation($input: CreateWarehouseInput!) { createWarehouse(input: $input) { warehouse { id } } }`,
      { input: { business_id: world.catalog.businessId, name: 'Pop-up store' } },
    );
    const popUp = created.createWarehouse.warehouse.id;
    await setWarehouses(world.channelId, [world.catalog.warehouseIds[0], popUp]);
    await graphqlData(t, world.tenant.key, `mutation($id: ID!) { deleteWarehouse(input: {id: $id}) { id } }`, {
      id: popUp,
    });
    const read = await graphqlData(
      t,
      world.tenant.key,
      `query($id: ID!) { salesChannel(id: $id) { warehouses { id } } }`,
      {
        id: world.channelId,
      },
    );
    expect(read.salesChannel.warehouses.map((warehouse) => warehouse.id)).toEqual([world.catalog.warehouseIds[0]]);
  });
});

describe('inventory per sales channel', () => {
  it("sums each SKU over the channel's warehouses, with no warehouse or position", async () => {
    const [first, second] = world.catalog.warehouseIds;
    await setWarehouses(world.channelId, [first, second]);
    expect(await channelStock(world.channelId)).toEqual([
      { sku: 'SKU-1', quantity: 22, quantity_available: 22, quantity_reserved: 0, warehouse: null, position: null },
      { sku: 'SKU-2', quantity: 3, quantity_available: 3, quantity_reserved: 0, warehouse: null, position: null },
    ]);
    await setWarehouses(world.channelId, [second]);
    expect((await channelStock(world.channelId, 'SKU-1')).map((node) => node.quantity)).toEqual([7]);
  });

  it('counts reservations at its warehouses, and reads nothing for a channel without warehouses', async () => {
    const [first] = world.catalog.warehouseIds;
    await setWarehouses(world.channelId, [first]);
    await graphqlData(
      t,
      world.tenant.key,
      `mutation($input: CreateReservationInput!) { createReservation(input: $input) { reservation { id } } }`,
      {
        input: {
          business_id: world.catalog.businessId,
          warehouse_id: first,
          channel_id: world.channelId,
          customer: { name: 'Ada' },
          items: [{ sku: 'SKU-1', quantity: 4 }],
          expires_at: Date.now() + 3_600_000,
        },
      },
    );
    expect(await channelStock(world.channelId, 'SKU-1')).toEqual([
      { sku: 'SKU-1', quantity: 15, quantity_available: 11, quantity_reserved: 4, warehouse: null, position: null },
    ]);
    await setWarehouses(world.channelId, []);
    expect(await channelStock(world.channelId)).toEqual([]);
    expect(await graphqlErrorField(t, world.tenant.key, 'VALIDATION_ERROR', CHANNEL_STOCK, { channel: 'nope' })).toBe(
      'filters.channel_id',
    );
  });
});
