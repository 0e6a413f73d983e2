/**
 * The FEWEST_SHIPMENTS and CLOSEST strategies over a sales channel with three located warehouses
 * (Berlin, Paris, Lyon, in that priority order): orders and reservations, located warehouses, and
 * destinations refused with VALIDATION_ERROR before anything changes.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { startTestApp } from '../helpers/app';
import {
  addStock,
  createStockWorld,
  expectStockInvariants,
  levels,
  operationsSnapshot,
  type StockWorld,
} from './orders.fixtures';
import { graphqlData, graphqlErrorField } from './stock.fixtures';

const t = await startTestApp();
let world: StockWorld;
/** Berlin, Paris and Lyon, the channel's priority order. */
let warehouses: [string, string, string];

const CREATE_WAREHOUSE = `mutation($input: CreateWarehouseInput!) { createWarehouse(input: $input) { warehouse {
  id latitude longitude country_code } } }`;
const ORDER = `mutation($input: CreateOrderInput!) { createOrder(input: $input) { order { id warehouse { id } } } }`;
const RESERVE = `mutation($input: CreateReservationInput!) { createReservation(input: $input) { reservation {
  id warehouse { id } } } }`;

const channelOrder = (items: { sku: string; quantity: number }[], extra: Record<string, unknown> = {}) => ({
  business_id: world.catalog.businessId,
  channel_id: world.channelId,
  items,
  ...extra,
});
const committed = async (sku: string) =>
  Promise.all(warehouses.map(async (id) => (await levels(t, world, sku, id)).committed));
const reserved = async (sku: string) =>
  Promise.all(warehouses.map(async (id) => (await levels(t, world, sku, id)).reserved));

beforeAll(async () => {
  world = await createStockWorld(t, 'Routing tenant', 8);
  const place = async (name: string, latitude: number, longitude: number, country_code: string) =>
    (
      await graphqlData(t, world.tenant.key, CREATE_WAREHOUSE, {
        input: { business_id: world.catalog.businessId, name, latitude, longitude, country_code },
      })
    ).createWarehouse.warehouse;
  const berlin = await place('Berlin', 52.52, 13.405, 'de');
  expect(berlin).toMatchObject({ latitude: 52.52, longitude: 13.405, country_code: 'DE' });
  const paris = await place('Paris', 48.8566, 2.3522, 'FR');
  const lyon = await place('Lyon', 45.764, 4.8357, 'FR');
  warehouses = [berlin.id, paris.id, lyon.id];
  await graphqlData(
    t,
    world.tenant.key,
    `mutation($input: SetSalesChannelWarehousesInput!) { setSalesChannelWarehouses(input: $input) { sales_channel { id } } }`,
    { input: { channel_id: world.channelId, warehouse_ids: warehouses } },
  );
});

describe('FEWEST_SHIPMENTS', () => {
  it('serves an order from the fewest warehouses, where PRIORITY would split it over all three', async () => {
    // SKU-1: 3 in Berlin, 5 in Paris, 8 in Lyon; SKU-2 only in Lyon.
    for (const [index, quantity] of [3, 5, 8].entries())
      await addStock(t, world, 'SKU-1', quantity, { warehouseId: warehouses[index] });
    await addStock(t, world, 'SKU-2', 2, { warehouseId: warehouses[2] });
    const created = await graphqlData(t, world.tenant.key, ORDER, {
      input: channelOrder(
        [
          { sku: 'SKU-1', quantity: 10 },
          { sku: 'SKU-2', quantity: 1 },
        ],
        { allocation_strategy: 'FEWEST_SHIPMENTS' },
      ),
    });
    // {Berlin, Lyon} and {Paris, Lyon} both serve it in two shipments: Berlin comes first.
    expect(await committed('SKU-1')).toEqual([3, 0, 7]);
    expect(await committed('SKU-2')).toEqual([0, 0, 1]);
    expect(created.createOrder.order.warehouse.id).toBe(warehouses[0]);
    await expectStockInvariants(t, world.tenant.id);
  });

  it('takes a reservation whole from the first warehouse that has everything', async () => {
    for (const [index, quantity] of [1, 4, 4].entries())
      await addStock(t, world, 'SKU-3', quantity, { warehouseId: warehouses[index] });
    await graphqlData(t, world.tenant.key, RESERVE, {
      input: {
        ...channelOrder([{ sku: 'SKU-3', quantity: 3 }], { allocation_strategy: 'FEWEST_SHIPMENTS' }),
        customer: { name: 'Client' },
        expires_at: Date.now() + 3_600_000,
      },
    });
    expect(await reserved('SKU-3')).toEqual([0, 3, 0]);
  });
});

describe('CLOSEST', () => {
  it('serves from the warehouse nearest the destination point that has everything', async () => {
    for (const [index, quantity] of [5, 5, 5].entries())
      await addStock(t, world, 'SKU-4', quantity, { warehouseId: warehouses[index] });
    // Geneva: Lyon is nearest, then Paris.
    const geneva = { latitude: 46.2044, longitude: 6.1432 };
    await graphqlData(t, world.tenant.key, ORDER, {
      input: channelOrder([{ sku: 'SKU-4', quantity: 4 }], { allocation_strategy: 'CLOSEST', destination: geneva }),
    });
    expect(await committed('SKU-4')).toEqual([0, 0, 4]);
    // Lyon has 1 left: Paris, the next nearest, has all 3.
    await graphqlData(t, world.tenant.key, ORDER, {
      input: channelOrder([{ sku: 'SKU-4', quantity: 3 }], { allocation_strategy: 'CLOSEST', destination: geneva }),
    });
    expect(await committed('SKU-4')).toEqual([0, 3, 4]);
    // None has 7: nearest first, splitting (Lyon 1, Paris 2, Berlin 4).
    await graphqlData(t, world.tenant.key, ORDER, {
      input: channelOrder([{ sku: 'SKU-4', quantity: 7 }], { allocation_strategy: 'CLOSEST', destination: geneva }),
    });
    expect(await committed('SKU-4')).toEqual([4, 5, 5]);
    await expectStockInvariants(t, world.tenant.id);
  });

  it('serves a destination country from its own warehouses first, and reserves the same way', async () => {
    for (const [index, quantity] of [5, 5, 5].entries())
      await addStock(t, world, 'SKU-5', quantity, { warehouseId: warehouses[index] });
    await graphqlData(t, world.tenant.key, RESERVE, {
      input: {
        ...channelOrder([{ sku: 'SKU-5', quantity: 2 }], {
          allocation_strategy: 'CLOSEST',
          destination: { country: 'fr' },
        }),
        customer: { name: 'Client' },
        expires_at: Date.now() + 3_600_000,
      },
    });
    expect(await reserved('SKU-5')).toEqual([0, 2, 0]);
  });

  it.each([
    ['a latitude beyond 90', { latitude: 91, longitude: 0 }, 'input.destination.latitude'],
    ['a latitude without longitude', { latitude: 45 }, 'input.destination.longitude'],
    ['a three-letter country', { country: 'FRA' }, 'input.destination.country'],
    ['an empty destination', {}, 'input.destination'],
    ['a huge longitude', { latitude: 0, longitude: 1e308 }, 'input.destination.longitude'],
  ])('refuses %s with VALIDATION_ERROR and changes nothing', async (_name, destination, field) => {
    await addStock(t, world, 'SKU-6', 5, { warehouseId: warehouses[0] });
    const before = await operationsSnapshot(t, world.tenant.id);
    const input = channelOrder([{ sku: 'SKU-6', quantity: 1 }], { allocation_strategy: 'CLOSEST', destination });
    expect(await graphqlErrorField(t, world.tenant.key, 'VALIDATION_ERROR', ORDER, { input })).toBe(field);
    expect(await operationsSnapshot(t, world.tenant.id)).toEqual(before);
  });

  it('refuses a warehouse with half a point or a bad country', async () => {
    for (const [location, field] of [
      [{ latitude: 10 }, 'input.longitude'],
      [{ latitude: 10, longitude: 200 }, 'input.longitude'],
      [{ country_code: 'Germany' }, 'input.country_code'],
    ] as const) {
      const input = { business_id: world.catalog.businessId, name: 'Nowhere', ...location };
      expect(await graphqlErrorField(t, world.tenant.key, 'VALIDATION_ERROR', CREATE_WAREHOUSE, { input })).toBe(field);
    }
  });
});
