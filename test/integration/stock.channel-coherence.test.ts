/**
 * Every process keeps what each sales channel sells from in memory, for reservations through the
 * channel: a change of its warehouses or strategy made by one process is honoured by the others within a second, announced through PostgreSQL notifications.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { startTestApp } from '../helpers/app';
import { addStock, createStockWorld, expectStockInvariants, levels, type StockWorld } from './orders.fixtures';
import { graphqlData, graphqlError } from './stock.fixtures';

const one = await startTestApp();
const two = await startTestApp({ databaseUrl: one.databaseUrl });
const DEADLINE = { timeout: 1_000, interval: 20 };

let world: StockWorld;
let warehouses: [string, string, string];

const RESERVE = `mutation($input: CreateReservationInput!) { createReservation(input: $input) { reservation {
  id warehouse { id } } } }`;
const SET_WAREHOUSES = `mutation($input: SetSalesChannelWarehousesInput!) {
  setSalesChannelWarehouses(input: $input) { sales_channel { id } } }`;

/** A reservation of one unit of the SKU through the channel, made by the second process: its warehouse. */
async function reserveInTwo(sku: string): Promise<string> {
  const data = await graphqlData(two, world.tenant.key, RESERVE, {
    input: {
      business_id: world.catalog.businessId,
      channel_id: world.channelId,
      customer: { name: 'Coherent' },
      items: [{ sku, quantity: 1 }],
      expires_at: Date.now() + 3_600_000,
    },
  });
  return data.createReservation.reservation.warehouse.id;
}

const setInOne = (warehouseIds: string[], strategy?: string) =>
  graphqlData(one, world.tenant.key, SET_WAREHOUSES, {
    input: { channel_id: world.channelId, warehouse_ids: warehouseIds, allocation_strategy: strategy },
  });

beforeAll(async () => {
  world = await createStockWorld(one, 'Channel coherence tenant', 2);
  const third = await graphqlData(
    one,
    world.tenant.key,
    `mutation($input: CreateWarehouseInput!) { createWarehouse(input: $input) { warehouse { id } } }`,
    { input: { business_id: world.catalog.businessId, name: 'Warehouse 3' } },
  );
  warehouses = [world.catalog.warehouseIds[0], world.catalog.warehouseIds[1], third.createWarehouse.warehouse.id];
  for (const [index, id] of warehouses.entries())
    await addStock(one, world, 'SKU-1', [100, 100, 200][index]!, { warehouseId: id });
});

describe('what a sales channel sells from, across processes', () => {
  it('follows a new warehouse order and strategy set by the other process', async () => {
    await setInOne(warehouses, 'PRIORITY');
    await expect.poll(() => reserveInTwo('SKU-1'), DEADLINE).toBe(warehouses[0]);
    // The second process now keeps the channel; the first one changes it.
    await setInOne([warehouses[1], warehouses[0]]);
    await expect.poll(() => reserveInTwo('SKU-1'), DEADLINE).toBe(warehouses[1]);
    await setInOne([warehouses[1], warehouses[0], warehouses[2]], 'MOST_STOCK');
    await expect.poll(() => reserveInTwo('SKU-1'), DEADLINE).toBe(warehouses[2]);
    await expectStockInvariants(one, world.tenant.id);
  });

  it('stops selling from a warehouse taken off the channel, and refuses a channel left with none', async () => {
    await addStock(one, world, 'SKU-2', 100, { warehouseId: warehouses[2] });
    await addStock(one, world, 'SKU-2', 100, { warehouseId: warehouses[0] });
    await setInOne([warehouses[2], warehouses[0]], 'PRIORITY');
    await expect.poll(() => reserveInTwo('SKU-2'), DEADLINE).toBe(warehouses[2]);
    expect((await levels(one, world, 'SKU-2', warehouses[2])).reserved).toBeGreaterThan(0);
    await setInOne([warehouses[0]]);
    await expect.poll(() => reserveInTwo('SKU-2'), DEADLINE).toBe(warehouses[0]);
    await setInOne([]);
    await expect
      .poll(
        async () =>
          (
            await graphqlError(two, world.tenant.key, 'VALIDATION_ERROR', RESERVE, {
              input: {
                business_id: world.catalog.businessId,
                channel_id: world.channelId,
                customer: { name: 'Coherent' },
                items: [{ sku: 'SKU-2', quantity: 1 }],
                expires_at: Date.now() + 3_600_000,
              },
            })
          ).message,
        DEADLINE,
      )
      .toContain('sells from no warehouse of the business');
  });
});
