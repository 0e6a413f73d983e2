/**
 * Bundles in stock writes: a reservation or an order of a bundle holds its components' units under
 * their own SKUs, all or none; conversion, partial shipment, cancellation, return and restock act on
 * the components; two buyers racing through two bundles for the last units of a shared component
 * never oversell it.
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
import { graphql, graphqlData, graphqlError } from './stock.fixtures';

const t = await startTestApp();
let world: StockWorld;

const RESERVE = `mutation($input: CreateReservationInput!) { createReservation(input: $input) {
  reservation { id items { sku quantity } } } }`;
const ORDER = `id status items { id sku quantity state }`;
const CREATE_ORDER = `mutation($input: CreateOrderInput!) { createOrder(input: $input) { order { ${ORDER} } } }`;

const located = (items: { sku: string; quantity: number }[]) => ({
  business_id: world.catalog.businessId,
  warehouse_id: world.warehouseId,
  channel_id: world.channelId,
  items,
});
const reservationInput = (items: { sku: string; quantity: number }[]) => ({
  ...located(items),
  customer: { name: 'Buyer' },
  expires_at: Date.now() + 3_600_000,
});

async function createProduct(sku: string) {
  await graphqlData(
    t,
    world.tenant.key,
    `mutation($input: CreateProductInput!) { createProduct(input: $input) { product { id } } }`,
    {
      input: { sku, name: `Product ${sku}` },
    },
  );
}
async function defineBundle(sku: string, components: { sku: string; quantity: number }[]) {
  await createProduct(sku);
  await graphqlData(
    t,
    world.tenant.key,
    `mutation($input: SetBundleComponentsInput!) { setBundleComponents(input: $input) { product { id } } }`,
    { input: { sku, components } },
  );
}
const mutate = (mutation: string, input: Record<string, unknown>) =>
  graphqlData(
    t,
    world.tenant.key,
    `mutation($input: ${mutation[0]!.toUpperCase()}${mutation.slice(1)}Input!) {
    ${mutation}(input: $input) { order { ${ORDER} } } }`,
    { input },
  );

/** The levels of the components SKU-1..3, by SKU. */
const componentLevels = async () =>
  Object.fromEntries(
    await Promise.all(['SKU-1', 'SKU-2', 'SKU-3'].map(async (sku) => [sku, await levels(t, world, sku)])),
  );

beforeAll(async () => {
  world = await createStockWorld(t, 'Bundle stock tenant', 4);
  await addStock(t, world, 'SKU-1', 100);
  await addStock(t, world, 'SKU-2', 100);
  await addStock(t, world, 'SKU-3', 100);
  await defineBundle('KIT-A', [
    { sku: 'SKU-1', quantity: 1 },
    { sku: 'SKU-2', quantity: 2 },
  ]);
  await defineBundle('KIT-B', [
    { sku: 'SKU-1', quantity: 1 },
    { sku: 'SKU-3', quantity: 3 },
  ]);
});

describe('the availability of a bundle', () => {
  const INVENTORY = `query($sku: String, $filters: InventoryFilterInput) { inventory(sku: $sku, filters: $filters, first: 10) {
    edges { node { sku quantity quantity_available quantity_reserved quantity_sellable } } } }`;
  const nodes = async (sku: string, filters?: Record<string, unknown>) =>
    (await graphqlData(t, world.tenant.key, INVENTORY, { sku, filters })).inventory.edges.map(
      (edge: { node: unknown }) => edge.node,
    );

  it('is the fewest bundles its components make, per warehouse and per channel', async () => {
    expect(await nodes('KIT-A')).toEqual([
      { sku: 'KIT-A', quantity: 50, quantity_available: 50, quantity_reserved: 0, quantity_sellable: 50 },
    ]);
    expect((await nodes('KIT-B'))[0]).toMatchObject({ quantity_available: 33, quantity_sellable: 33 });
    await graphqlData(
      t,
      world.tenant.key,
      `mutation($input: SetSalesChannelWarehousesInput!) { setSalesChannelWarehouses(input: $input) { sales_channel { id } } }`,
      { input: { channel_id: world.channelId, warehouse_ids: [world.warehouseId] } },
    );
    expect(await nodes('KIT-A', { channel_id: world.channelId })).toEqual([
      { sku: 'KIT-A', quantity: 50, quantity_available: 50, quantity_reserved: 0, quantity_sellable: 50 },
    ]);
  });
});

describe('a reservation of a bundle', () => {
  it('reserves its components, and releases them when removed', async () => {
    const before = await componentLevels();
    const data = await graphqlData(t, world.tenant.key, RESERVE, {
      input: reservationInput([{ sku: 'KIT-A', quantity: 2 }]),
    });
    expect(data.createReservation.reservation.items).toEqual([{ sku: 'KIT-A', quantity: 2 }]);
    const after = await componentLevels();
    expect(after['SKU-1'].reserved - before['SKU-1'].reserved).toBe(2);
    expect(after['SKU-2'].reserved - before['SKU-2'].reserved).toBe(4);
    expect(after['SKU-3']).toEqual(before['SKU-3']);
    await graphqlData(
      t,
      world.tenant.key,
      `mutation($input: RemoveReservationInput!) { removeReservation(input: $input) { reservation { status } } }`,
      { input: { id: data.createReservation.reservation.id } },
    );
    expect(await componentLevels()).toEqual(before);
    await expectStockInvariants(t, world.tenant.id);
  });

  it('is OUT_OF_STOCK naming the bundle item when a component is short, and changes nothing', async () => {
    const before = await operationsSnapshot(t, world.tenant.id);
    const error = await graphqlError(t, world.tenant.key, 'OUT_OF_STOCK', RESERVE, {
      input: reservationInput([
        { sku: 'SKU-2', quantity: 1 },
        { sku: 'KIT-B', quantity: 34 },
      ]),
    });
    expect(error.extensions?.field).toBe('input.items[1].quantity');
    expect(error.message).toContain('SKU "SKU-3" (a component of bundle "KIT-B")');
    expect(await operationsSnapshot(t, world.tenant.id)).toEqual(before);
  });

  it('counts a component named on its own and through the bundle together', async () => {
    const before = await componentLevels();
    const data = await graphqlData(t, world.tenant.key, RESERVE, {
      input: reservationInput([
        { sku: 'KIT-A', quantity: 2 },
        { sku: 'SKU-1', quantity: 3 },
      ]),
    });
    const after = await componentLevels();
    expect(after['SKU-1'].reserved - before['SKU-1'].reserved).toBe(5);
    expect(after['SKU-2'].reserved - before['SKU-2'].reserved).toBe(4);
    await graphqlData(
      t,
      world.tenant.key,
      `mutation($input: RemoveReservationInput!) { removeReservation(input: $input) { reservation { status } } }`,
      { input: { id: data.createReservation.reservation.id } },
    );
    expect(await componentLevels()).toEqual(before);

    // Each fits alone; together they need one SKU-1 more than there is.
    const snapshot = await operationsSnapshot(t, world.tenant.id);
    const error = await graphqlError(t, world.tenant.key, 'OUT_OF_STOCK', RESERVE, {
      input: reservationInput([
        { sku: 'SKU-1', quantity: before['SKU-1'].available },
        { sku: 'KIT-A', quantity: 1 },
      ]),
    });
    expect(error.message).toContain('SKU "SKU-1" (a component of bundle "KIT-A")');
    expect(await operationsSnapshot(t, world.tenant.id)).toEqual(snapshot);
    await expectStockInvariants(t, world.tenant.id);
  });

  it('becomes an order whose item commits the components', async () => {
    const before = await componentLevels();
    const reservation = await graphqlData(t, world.tenant.key, RESERVE, {
      input: reservationInput([{ sku: 'KIT-B', quantity: 1 }]),
    });
    const order = await graphqlData(t, world.tenant.key, CREATE_ORDER, {
      input: { reservation_id: reservation.createReservation.reservation.id },
    });
    expect(order.createOrder.order.items).toMatchObject([{ sku: 'KIT-B', quantity: 1, state: 'ALLOCATED' }]);
    const after = await componentLevels();
    expect(after['SKU-1'].committed - before['SKU-1'].committed).toBe(1);
    expect(after['SKU-3'].committed - before['SKU-3'].committed).toBe(3);
    expect(after['SKU-3'].reserved).toBe(before['SKU-3'].reserved);
    await mutate('cancelOrder', { id: order.createOrder.order.id });
    expect(await componentLevels()).toEqual(before);
    await expectStockInvariants(t, world.tenant.id);
  });
});

describe('an order of a bundle', () => {
  it('commits, ships in part, returns and restocks its components', async () => {
    const before = await componentLevels();
    const created = await graphqlData(t, world.tenant.key, CREATE_ORDER, {
      input: located([{ sku: 'KIT-A', quantity: 3 }]),
    });
    const order = created.createOrder.order;
    let now = await componentLevels();
    expect(now['SKU-1'].committed - before['SKU-1'].committed).toBe(3);
    expect(now['SKU-2'].committed - before['SKU-2'].committed).toBe(6);

    const shipment = await graphqlData(
      t,
      world.tenant.key,
      `mutation($input: CreateShipmentInput!) { createShipment(input: $input) { shipped_items { id sku quantity } } }`,
      { input: { order_id: order.id, items: [{ item_id: order.items[0]!.id, quantity: 1 }] } },
    );
    const shipped = shipment.createShipment.shipped_items[0]!;
    now = await componentLevels();
    expect(now['SKU-1']).toMatchObject({
      quantity: before['SKU-1'].quantity - 1,
      committed: before['SKU-1'].committed + 2,
    });
    expect(now['SKU-2']).toMatchObject({
      quantity: before['SKU-2'].quantity - 2,
      committed: before['SKU-2'].committed + 4,
    });

    await mutate('returnOrderItems', { order_id: order.id, items: [{ item_id: shipped.id }] });
    await mutate('restockOrderItems', {
      order_id: order.id,
      items: [{ item_id: shipped.id, location_id: world.warehouseId }],
    });
    await mutate('cancelOrder', { id: order.id });
    expect(await componentLevels()).toEqual(before);
    expect(await levels(t, world, 'KIT-A')).toMatchObject({ quantity: 50, available: 50, committed: 0 });
    await expectStockInvariants(t, world.tenant.id);
  });

  it('is OUT_OF_STOCK when a component is short, and changes nothing', async () => {
    const before = await operationsSnapshot(t, world.tenant.id);
    const error = await graphqlError(t, world.tenant.key, 'OUT_OF_STOCK', CREATE_ORDER, {
      input: located([{ sku: 'KIT-A', quantity: 51 }]),
    });
    expect(error.message).toContain('a component of bundle "KIT-A"');
    expect(await operationsSnapshot(t, world.tenant.id)).toEqual(before);
  });
});

describe('two bundles sharing a component', () => {
  it(
    '50 x 2 buyers race for the last 30 units of the shared component: exactly 30 succeed, never oversold',
    { timeout: 120_000 },
    async () => {
      const { productIds } = world.catalog;
      expect(productIds.get('SKU-4')).toBeDefined();
      await addStock(t, world, 'SKU-4', 30);
      await defineBundle('KIT-C', [
        { sku: 'SKU-4', quantity: 1 },
        { sku: 'SKU-2', quantity: 1 },
      ]);
      await defineBundle('KIT-D', [
        { sku: 'SKU-4', quantity: 1 },
        { sku: 'SKU-3', quantity: 1 },
      ]);
      const outcomes: string[] = [];
      const buyer = async (n: number) => {
        const bundle = n % 2 === 0 ? 'KIT-C' : 'KIT-D';
        const response =
          n % 4 < 2
            ? await graphql(t, world.tenant.key, RESERVE, { input: reservationInput([{ sku: bundle, quantity: 1 }]) })
            : await graphql(t, world.tenant.key, CREATE_ORDER, { input: located([{ sku: bundle, quantity: 1 }]) });
        outcomes.push(response.body.errors?.[0]?.extensions?.code ?? 'ok');
      };
      await Promise.all(Array.from({ length: 100 }, (_, n) => buyer(n)));
      const counts = outcomes.reduce<Record<string, number>>((acc, o) => ({ ...acc, [o]: (acc[o] ?? 0) + 1 }), {});
      expect(counts).toEqual({ ok: 30, OUT_OF_STOCK: 70 });
      expect(await levels(t, world, 'SKU-4')).toMatchObject({ quantity: 30, available: 0 });
      await expectStockInvariants(t, world.tenant.id);
    },
  );
});

describe('a bundle through a sales channel without a warehouse', () => {
  it('is planned whole at the warehouses whose components make it, and committed or reserved there', async () => {
    const second = world.catalog.warehouseIds[1];
    await addStock(t, world, 'SKU-1', 5, { warehouseId: second });
    await addStock(t, world, 'SKU-2', 10, { warehouseId: second });
    await graphqlData(
      t,
      world.tenant.key,
      `mutation($input: SetSalesChannelWarehousesInput!) { setSalesChannelWarehouses(input: $input) { sales_channel { id } } }`,
      { input: { channel_id: world.channelId, warehouse_ids: [second] } },
    );
    const through = (items: { sku: string; quantity: number }[]) => ({
      business_id: world.catalog.businessId,
      channel_id: world.channelId,
      items,
    });
    const order = await graphqlData(t, world.tenant.key, CREATE_ORDER, {
      input: through([{ sku: 'KIT-A', quantity: 3 }]),
    });
    expect(await levels(t, world, 'SKU-1', second)).toMatchObject({ available: 2, committed: 3 });
    expect(await levels(t, world, 'SKU-2', second)).toMatchObject({ available: 4, committed: 6 });
    await graphqlData(t, world.tenant.key, RESERVE, {
      input: {
        ...through([{ sku: 'KIT-A', quantity: 2 }]),
        allocation_strategy: 'MOST_STOCK',
        customer: { name: 'Buyer' },
        expires_at: Date.now() + 3_600_000,
      },
    });
    expect(await levels(t, world, 'SKU-2', second)).toMatchObject({ available: 0, reserved: 4 });
    await graphqlError(t, world.tenant.key, 'OUT_OF_STOCK', CREATE_ORDER, {
      input: through([{ sku: 'KIT-A', quantity: 1 }]),
    });
    await mutate('cancelOrder', { id: order.createOrder.order.id });
    expect(await levels(t, world, 'SKU-1', second)).toMatchObject({ committed: 0 });
    await expectStockInvariants(t, world.tenant.id);
  });
});
