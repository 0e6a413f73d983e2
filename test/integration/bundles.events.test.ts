/**
 * Bundles in the ledger and the stock events: every ledger row that moves a component's units for a
 * bundle names the bundle beside the reservation or order behind it, on every path (the batched
 * reservations, the general allocating path, release, shipment, cancellation, return and restock);
 * a component write that brings a bundle to its reorder point (or to nothing) records the bundle's
 * low-stock (out-of-stock) event, and one that leaves the bundle above it records none.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { startBroadcastApp } from './broadcasts.fixtures';
import { addStock, createStockWorld, expectStockInvariants, levels, type StockWorld } from './orders.fixtures';
import { graphqlData } from './stock.fixtures';

const t = await startBroadcastApp();
let world: StockWorld;

const located = (items: { sku: string; quantity: number }[]) => ({
  business_id: world.catalog.businessId,
  warehouse_id: world.warehouseId,
  channel_id: world.channelId,
  items,
});
const ORDER = `id items { id sku quantity }`;

async function defineBundle(sku: string, components: { sku: string; quantity: number }[]) {
  const created = await graphqlData(
    t,
    world.tenant.key,
    `mutation($input: CreateProductInput!) { createProduct(input: $input) { product { id } } }`,
    { input: { sku, name: `Bundle ${sku}` } },
  );
  await graphqlData(
    t,
    world.tenant.key,
    `mutation($input: SetBundleComponentsInput!) { setBundleComponents(input: $input) { product { id } } }`,
    { input: { sku, components } },
  );
  return created.createProduct.product.id as string;
}

async function createPreference(sku: string, reorderPoint: number) {
  await graphqlData(
    t,
    world.tenant.key,
    `mutation($i: CreateItemPreferencesInput!) { createItemPreferences(input: $i) { preferences { id } } }`,
    {
      i: {
        preferences: [
          {
            sku,
            warehouse_id: world.warehouseId,
            business_id: world.catalog.businessId,
            minimum_quantity: 0,
            optimal_quantity: reorderPoint,
            maximum_quantity: 1000,
            reorder_point: reorderPoint,
            is_backorder_allowed: false,
            is_restricted_to_single_position: false,
          },
        ],
      },
    },
  );
}

const reserve = async (items: { sku: string; quantity: number }[], more: Record<string, unknown> = {}) =>
  (
    await graphqlData(
      t,
      world.tenant.key,
      `mutation($input: CreateReservationInput!) { createReservation(input: $input) { reservation { id } } }`,
      { input: { ...located(items), customer: { name: 'Ada' }, expires_at: Date.now() + 3_600_000, ...more } },
    )
  ).createReservation.reservation.id as string;

const order = async (items: { sku: string; quantity: number }[]) =>
  (
    await graphqlData(
      t,
      world.tenant.key,
      `mutation($input: CreateOrderInput!) { createOrder(input: $input) { order { ${ORDER} } } }`,
      { input: located(items) },
    )
  ).createOrder.order as { id: string; items: { id: string; sku: string; quantity: number }[] };

const mutate = (mutation: string, input: Record<string, unknown>, select = `order { id }`) =>
  graphqlData(
    t,
    world.tenant.key,
    `mutation($input: ${mutation[0]!.toUpperCase()}${mutation.slice(1)}Input!) { ${mutation}(input: $input) { ${select} } }`,
    { input },
  );

interface Mutation {
  id: string;
  source: string;
  delta: number;
  product: { sku: string };
  references: { __typename: string; id: string; product?: { sku: string } }[];
}

/** The ledger rows of a SKU, oldest first. */
async function mutationsOf(sku: string): Promise<Mutation[]> {
  const data = await graphqlData<{ stockMutations: { edges: { node: Mutation }[] } }>(
    t,
    world.tenant.key,
    `query($q: QueryFilter) { stockMutations(query: $q, first: 40) { edges { node {
       id source delta product { sku }
       references { __typename ... on Reservation { id } ... on Order { id }
                    ... on BundleReference { id product { sku } } } } } } }`,
    { q: `sku=${sku}&sort=created_at` },
  );
  return data.stockMutations.edges.map((edge) => edge.node);
}

interface StockEvent {
  type: 'STOCK_LOW' | 'STOCK_OUT';
  sku: string;
  available: number;
  reorder_point: number | null;
  stock_mutation_id: string;
}

async function eventsOf(sku: string): Promise<StockEvent[]> {
  const data = await graphqlData<{ stockEvents: { edges: { node: StockEvent }[] } }>(
    t,
    world.tenant.key,
    `query($sku: String) { stockEvents(sku: $sku, first: 50) { edges { node {
       type sku available reorder_point stock_mutation_id } } } }`,
    { sku },
  );
  return data.stockEvents.edges.map((edge) => edge.node);
}

let kitId: string;

beforeAll(async () => {
  world = await createStockWorld(t, 'Bundle events tenant', 4);
  for (const sku of ['SKU-1', 'SKU-2', 'SKU-3', 'SKU-4']) await addStock(t, world, sku, 20);
  // LOW-KIT: 10 of them (SKU-2 makes 10), with its own reorder point of 4.
  await defineBundle('LOW-KIT', [
    { sku: 'SKU-1', quantity: 1 },
    { sku: 'SKU-2', quantity: 2 },
  ]);
  await createPreference('LOW-KIT', 4);
  // KIT: the bundle of the ledger tests, of components no other test touches.
  kitId = await defineBundle('KIT', [
    { sku: 'SKU-3', quantity: 1 },
    { sku: 'SKU-4', quantity: 2 },
  ]);
});

describe('a bundle’s low-stock events', () => {
  it('are raised by the component writes that bring it to its reorder point and to nothing, and by no other', async () => {
    await order([{ sku: 'SKU-2', quantity: 6 }]); // SKU-2: 14, LOW-KIT: 7 (above 4)
    await order([{ sku: 'SKU-1', quantity: 5 }]); // SKU-1: 15, LOW-KIT: still 7
    expect(await eventsOf('LOW-KIT')).toEqual([]);

    await order([{ sku: 'SKU-2', quantity: 6 }]); // SKU-2: 8, LOW-KIT: 4 (at its reorder point)
    const [low] = await eventsOf('LOW-KIT');
    expect(low).toMatchObject({ type: 'STOCK_LOW', sku: 'LOW-KIT', available: 4, reorder_point: 4 });
    // Named by the component's ledger row that brought it there.
    const lastOfSku2 = (await mutationsOf('SKU-2')).at(-1)!;
    expect(low!.stock_mutation_id).toBe(lastOfSku2.id);

    await order([{ sku: 'SKU-1', quantity: 3 }]); // SKU-1: 12, LOW-KIT: still 4, no second event
    await order([{ sku: 'SKU-2', quantity: 1 }]); // SKU-2: 7, LOW-KIT: 3, still low, no second event
    expect(await eventsOf('LOW-KIT')).toHaveLength(1);

    await reserve([{ sku: 'LOW-KIT', quantity: 3 }]); // SKU-2: 1, LOW-KIT: 0
    expect((await eventsOf('LOW-KIT')).map(({ type, available }) => [type, available])).toEqual([
      ['STOCK_LOW', 4],
      ['STOCK_OUT', 0],
    ]);
    expect(await levels(t, world, 'LOW-KIT')).toMatchObject({ available: 0 });
    await expectStockInvariants(t, world.tenant.id);
  });
});

/** The references of the rows of `sku` written since `seen` rows, as [typename, id or bundle SKU]. */
async function newReferences(sku: string, seen: number) {
  return (await mutationsOf(sku))
    .slice(seen)
    .map((mutation) => mutation.references.map((ref) => [ref.__typename, ref.product?.sku ?? ref.id]));
}

describe('the ledger rows of a bundle’s components', () => {
  it('name the reservation and the bundle when reserved (batched) and released', async () => {
    const seen = (await mutationsOf('SKU-3')).length;
    const id = await reserve([{ sku: 'KIT', quantity: 2 }]);
    const afterReserve = await mutationsOf('SKU-4');
    expect(afterReserve.at(-1)!.references).toEqual([
      { __typename: 'Reservation', id },
      { __typename: 'BundleReference', id: kitId, product: { sku: 'KIT' } },
    ]);
    await mutate('removeReservation', { id }, 'reservation { id }');
    expect(await newReferences('SKU-3', seen)).toEqual([
      [
        ['Reservation', id],
        ['BundleReference', 'KIT'],
      ],
      [
        ['Reservation', id],
        ['BundleReference', 'KIT'],
      ],
    ]);
  });

  it('name the reservation and the bundle on the general path (a reservation of a bundle and a plain SKU)', async () => {
    const seen = (await mutationsOf('SKU-3')).length;
    // With an idempotency key the reservation takes the general path inside the key's transaction.
    const id = await reserve(
      [
        { sku: 'KIT', quantity: 1 },
        { sku: 'SKU-1', quantity: 1 },
      ],
      { idempotency_key: 'bundle-reference-general-path' },
    );
    expect(await newReferences('SKU-3', seen)).toEqual([
      [
        ['Reservation', id],
        ['BundleReference', 'KIT'],
      ],
    ]);
    // The plain SKU's row names the reservation only.
    expect((await mutationsOf('SKU-1')).at(-1)!.references).toEqual([{ __typename: 'Reservation', id }]);
    await mutate('removeReservation', { id }, 'reservation { id }');
  });

  it('name the order and the bundle when ordered, shipped, returned, restocked and cancelled', async () => {
    const seen = (await mutationsOf('SKU-3')).length;
    const created = await order([{ sku: 'KIT', quantity: 2 }]);
    const item = created.items[0]!;
    const shipment = await mutate(
      'createShipment',
      { order_id: created.id, items: [{ item_id: item.id, quantity: 1 }] },
      'shipped_items { id }',
    );
    const shippedId = shipment.createShipment.shipped_items[0]!.id;
    await mutate('returnOrderItems', { order_id: created.id, items: [{ item_id: shippedId }] });
    await mutate('restockOrderItems', {
      order_id: created.id,
      items: [{ item_id: shippedId, location_id: world.warehouseId }],
    });
    await mutate('cancelOrder', { id: created.id });
    const rows = (await mutationsOf('SKU-3')).slice(seen);
    // Ordered (2), shipped (1), restocked (1), cancelled (1 left committed).
    expect(rows.map((row) => [row.source, row.delta])).toEqual([
      ['ALLOCATION', 0],
      ['ALLOCATION', -1],
      ['RESTOCK', 1],
      ['ALLOCATION', 0],
    ]);
    for (const row of rows) {
      expect(row.references).toEqual([
        { __typename: 'Order', id: created.id },
        { __typename: 'BundleReference', id: kitId, product: { sku: 'KIT' } },
      ]);
    }
    await expectStockInvariants(t, world.tenant.id);
  });

  it('tell the units held for a bundle from those held for the SKU itself in one reservation, on both paths', async () => {
    // KIT is SKU-3 + 2 × SKU-4: one kit and one SKU-3 of its own hold 2 units of SKU-3, one for each.
    for (const more of [{}, { idempotency_key: 'bundle-and-component' }]) {
      const seen = (await mutationsOf('SKU-3')).length;
      const id = await reserve(
        [
          { sku: 'KIT', quantity: 1 },
          { sku: 'SKU-3', quantity: 1 },
        ],
        more,
      );
      await mutate('removeReservation', { id }, 'reservation { id }');
      const references = await newReferences('SKU-3', seen);
      expect(references).toHaveLength(4);
      const forKit = [
        ['Reservation', id],
        ['BundleReference', 'KIT'],
      ];
      const own = [['Reservation', id]];
      // Reserved: one row of each; released: one row of each again.
      expect(references.slice(0, 2)).toEqual(expect.arrayContaining([forKit, own]));
      expect(references.slice(2)).toEqual(expect.arrayContaining([forKit, own]));
    }
    await expectStockInvariants(t, world.tenant.id);
  });

  it('keep the bundle when a reservation of it and of its component becomes an order', async () => {
    const seen = (await mutationsOf('SKU-4')).length;
    const id = await reserve([
      { sku: 'KIT', quantity: 1 },
      { sku: 'SKU-4', quantity: 1 },
    ]);
    const created = await mutate('createOrder', { reservation_id: id }, 'order { id }');
    const orderId = created.createOrder.order.id as string;
    // Reserved: 2 units of SKU-4 for the kit and 1 of its own; then committed to the order's items the same way.
    const committed = (await mutationsOf('SKU-4')).slice(seen + 2);
    const named = committed.map((row) =>
      row.references.map((ref) =>
        ref.__typename === 'BundleReference' ? `Bundle ${ref.product!.sku}` : ref.__typename,
      ),
    );
    expect(named.filter((refs) => refs.includes('Bundle KIT'))).toHaveLength(1);
    expect(named.filter((refs) => !refs.includes('Bundle KIT'))).toHaveLength(1);
    expect(committed.every((row) => row.references.some((ref) => ref.id === orderId))).toBe(true);
    await mutate('cancelOrder', { id: orderId });
    await expectStockInvariants(t, world.tenant.id);
  });

  it('of a plain SKU name no bundle', async () => {
    const id = await reserve([{ sku: 'SKU-3', quantity: 1 }]);
    expect((await mutationsOf('SKU-3')).at(-1)!.references).toEqual([{ __typename: 'Reservation', id }]);
  });
});
