/**
 * Incoming goods: an announcement with items, grouped into a supply (expected stock), received in
 * the warehouse (REGISTER), filling backorders first with MATCH_ORDERS, and overages.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { startTestApp } from '../helpers/app';
import { sql } from '../helpers/db';
import {
  addStock,
  createStockWorld,
  expectStockInvariants,
  levels,
  operationsSnapshot,
  type StockWorld,
} from './orders.fixtures';
import { graphqlData, graphqlError, graphqlErrorField } from './stock.fixtures';

const t = await startTestApp();
let world: StockWorld;

const ANNOUNCEMENT = `id status supply_id reference business { id } warehouse { id } items { sku quantity product { sku } }`;
const SUPPLY = `id status processing due_at received_at announcement_ids warehouse { id } position { code } items { sku quantity is_overage received_at }`;
const CREATE_ANNOUNCEMENT = `mutation($input: CreateAnnouncementInput!) { createAnnouncement(input: $input) { announcement { ${ANNOUNCEMENT} } } }`;
const ADD_ITEMS = `mutation($input: AddAnnouncementItemsInput!) { addAnnouncementItems(input: $input) { announcement { ${ANNOUNCEMENT} } } }`;
const CREATE_SUPPLY = `mutation($input: CreateSupplyInput!) { createSupply(input: $input) { supply { ${SUPPLY} } } }`;
const RECEIVE = `mutation($input: ReceiveSupplyInput!) { receiveSupply(input: $input) { supply { ${SUPPLY} } } }`;
const OVERAGE = `mutation($input: AddOverageInput!) { addOverage(input: $input) { supply { ${SUPPLY} } } }`;

const call = async (query: string, input: Record<string, unknown>) =>
  Object.values(await graphqlData(t, world.tenant.key, query, { input }))[0] as Record<string, any>;
const announce = async (items: { sku: string; quantity: number }[], warehouseId = world.warehouseId) =>
  (await call(CREATE_ANNOUNCEMENT, { business_id: world.catalog.businessId, warehouse_id: warehouseId, items }))
    .announcement;
const snapshot = async () => ({
  ...(await operationsSnapshot(t, world.tenant.id)),
  incoming: await sql(t.databaseUrl, 'SELECT * FROM incoming_stock WHERE tenant_id = $1 ORDER BY id', [
    world.tenant.id,
  ]),
  supplies: await sql(t.databaseUrl, 'SELECT * FROM supplies WHERE tenant_id = $1 ORDER BY id', [world.tenant.id]),
  announcements: await sql(t.databaseUrl, 'SELECT * FROM announcements WHERE tenant_id = $1 ORDER BY id', [
    world.tenant.id,
  ]),
  supplyItems: await sql(t.databaseUrl, 'SELECT * FROM supply_items WHERE tenant_id = $1 ORDER BY id', [
    world.tenant.id,
  ]),
});

beforeAll(async () => {
  world = await createStockWorld(t, 'Supply tenant', 6);
});

describe('a supply from announcement to stock', () => {
  it('announces, groups into a supply (expected stock), then receives it onto the chosen position (REGISTER)', async () => {
    const announcement = (
      await call(CREATE_ANNOUNCEMENT, {
        business_id: world.catalog.businessId,
        warehouse_id: world.warehouseId,
        reference: 'PO-1',
      })
    ).announcement;
    expect(announcement).toMatchObject({ status: 'OPEN', supply_id: null, reference: 'PO-1', items: [] });
    const withItems = (
      await call(ADD_ITEMS, {
        announcement_id: announcement.id,
        items: [
          { sku: 'SKU-1', quantity: 10 },
          { sku: 'SKU-2', quantity: 4 },
        ],
      })
    ).announcement;
    expect(withItems.items).toEqual([
      { sku: 'SKU-1', quantity: 10, product: { sku: 'SKU-1' } },
      { sku: 'SKU-2', quantity: 4, product: { sku: 'SKU-2' } },
    ]);
    const second = await announce([{ sku: 'SKU-1', quantity: 5 }]);

    const ledgerBefore = (await operationsSnapshot(t, world.tenant.id)).stock_mutations;
    const position = world.catalog.positionIds.get(`${world.warehouseId}:A-01`);
    const supply = (
      await call(CREATE_SUPPLY, {
        announcement_ids: [announcement.id, second.id],
        settings: { processing: 'REGISTER' },
        location_id: position,
        due_at: 1_900_000_000_000,
      })
    ).supply;
    expect(supply).toMatchObject({
      status: 'EXPECTED',
      processing: 'REGISTER',
      due_at: 1_900_000_000_000,
      received_at: null,
      announcement_ids: [announcement.id, second.id].sort(),
      position: { code: 'A-01' },
    });
    expect(await levels(t, world, 'SKU-1')).toMatchObject({ quantity: 0, available: 0, expected: 15 });
    expect(await levels(t, world, 'SKU-2')).toMatchObject({ quantity: 0, expected: 4 });
    // Expected stock is not sellable and writes no ledger row.
    expect((await operationsSnapshot(t, world.tenant.id)).stock_mutations).toEqual(ledgerBefore);
    await graphqlError(
      t,
      world.tenant.key,
      'OUT_OF_STOCK',
      `mutation($input: CreateOrderInput!) { createOrder(input: $input) { order { id } } }`,
      {
        input: {
          business_id: world.catalog.businessId,
          warehouse_id: world.warehouseId,
          channel_id: world.channelId,
          items: [{ sku: 'SKU-1', quantity: 1 }],
        },
      },
    );
    const before = await snapshot();
    await graphqlError(t, world.tenant.key, 'INVALID_STATE', ADD_ITEMS, {
      input: { announcement_id: announcement.id, items: [{ sku: 'SKU-1', quantity: 1 }] },
    });
    await graphqlError(t, world.tenant.key, 'INVALID_STATE', CREATE_SUPPLY, {
      input: { announcement_ids: [second.id], settings: { processing: 'REGISTER' } },
    });
    expect(await snapshot()).toEqual(before);

    const received = (await call(RECEIVE, { supply_id: supply.id })).supply;
    expect(received.status).toBe('RECEIVED');
    for (const item of received.items) expect(item.received_at).toEqual(expect.any(Number));
    expect(await levels(t, world, 'SKU-1')).toMatchObject({ quantity: 15, available: 15, expected: 0 });
    expect(await levels(t, world, 'SKU-2')).toMatchObject({ quantity: 4, available: 4, expected: 0 });
    const data = await graphqlData(
      t,
      world.tenant.key,
      `{ stockMutations(query: "source=REGISTER", first: 10) { edges { node {
      delta new_quantity product { sku } location { id } references { __typename ... on Supply { id status } } } } } }`,
    );
    const nodes = data.stockMutations.edges.map((e: { node: unknown }) => e.node);
    expect(nodes).toHaveLength(2);
    for (const node of nodes)
      expect(node).toMatchObject({
        location: { id: position },
        references: [{ __typename: 'Supply', id: supply.id, status: 'RECEIVED' }],
      });
    const beforeAgain = await snapshot();
    await graphqlError(t, world.tenant.key, 'INVALID_STATE', RECEIVE, { input: { supply_id: supply.id } });
    expect(await snapshot()).toEqual(beforeAgain);
    await expectStockInvariants(t, world.tenant.id);
  });

  it('with MATCH_ORDERS fills orders waiting on backorder first, then registers the rest', async () => {
    await graphqlData(
      t,
      world.tenant.key,
      `mutation($input: CreateItemPreferencesInput!) { createItemPreferences(input: $input) { preferences { id } } }`,
      {
        input: {
          preferences: [
            {
              sku: 'SKU-3',
              warehouse_id: world.warehouseId,
              business_id: world.catalog.businessId,
              minimum_quantity: 0,
              optimal_quantity: 0,
              maximum_quantity: 100,
              reorder_point: 0,
              is_backorder_allowed: true,
              is_restricted_to_single_position: false,
            },
          ],
        },
      },
    );
    const ORDER = `mutation($input: CreateOrderInput!) { createOrder(input: $input) { order { id items { id state } } } }`;
    const orderInput = (quantity: number) => ({
      business_id: world.catalog.businessId,
      warehouse_id: world.warehouseId,
      channel_id: world.channelId,
      items: [{ sku: 'SKU-3', quantity }],
    });
    const first = (await graphqlData(t, world.tenant.key, ORDER, { input: orderInput(3) })).createOrder.order;
    const second = (await graphqlData(t, world.tenant.key, ORDER, { input: orderInput(8) })).createOrder.order;
    expect([first.items[0]!.state, second.items[0]!.state]).toEqual(['BACKORDERED', 'BACKORDERED']);

    const announcement = await announce([{ sku: 'SKU-3', quantity: 5 }]);
    const supply = (
      await call(CREATE_SUPPLY, { announcement_ids: [announcement.id], settings: { processing: 'MATCH_ORDERS' } })
    ).supply;
    await call(RECEIVE, { supply_id: supply.id });
    // The first order (3) fits and is committed; the second (8) does not: it keeps waiting.
    const state = async (id: string) =>
      (await graphqlData(t, world.tenant.key, `query($id: ID!) { order(id: $id) { items { state } } }`, { id })).order
        .items[0]!.state;
    expect(await state(first.id)).toBe('ALLOCATED');
    expect(await state(second.id)).toBe('BACKORDERED');
    expect(await levels(t, world, 'SKU-3')).toMatchObject({ quantity: 5, committed: 3, available: 2 });
    const matched = await sql(
      t.databaseUrl,
      `SELECT 1 FROM stock_mutations WHERE tenant_id = $1 AND "references" @> $2::jsonb AND delta = 3`,
      [
        world.tenant.id,
        JSON.stringify([
          { type: 'Supply', id: supply.id },
          { type: 'Order', id: first.id },
        ]),
      ],
    );
    expect(matched).toHaveLength(1);
    await graphqlData(
      t,
      world.tenant.key,
      `mutation($input: ShipOrderInput!) { shipOrder(input: $input) { order { status } } }`,
      { input: { id: first.id } },
    );
    await graphqlData(
      t,
      world.tenant.key,
      `mutation($input: CancelOrderInput!) { cancelOrder(input: $input) { order { status } } }`,
      { input: { id: second.id } },
    );
    await expectStockInvariants(t, world.tenant.id);
  });

  it('books overages: expected with the rest before receipt, on hand at once after it', async () => {
    const announcement = await announce([{ sku: 'SKU-4', quantity: 2 }]);
    const supply = (
      await call(CREATE_SUPPLY, { announcement_ids: [announcement.id], settings: { processing: 'REGISTER' } })
    ).supply;
    const withOverage = (await call(OVERAGE, { supply_id: supply.id, items: [{ sku: 'SKU-4', quantity: 1 }] })).supply;
    expect(withOverage.items.map((i: { is_overage: boolean }) => i.is_overage)).toEqual([false, true]);
    expect(await levels(t, world, 'SKU-4')).toMatchObject({ quantity: 0, expected: 3 });
    await call(RECEIVE, { supply_id: supply.id });
    expect(await levels(t, world, 'SKU-4')).toMatchObject({ quantity: 3, available: 3, expected: 0 });
    await call(OVERAGE, { supply_id: supply.id, items: [{ sku: 'SKU-4', quantity: 2 }] });
    expect(await levels(t, world, 'SKU-4')).toMatchObject({ quantity: 5, available: 5, expected: 0 });
    await expectStockInvariants(t, world.tenant.id);
  });
});

describe('bad input', () => {
  it.each([
    ['an unknown announcement', 'unknown', 'input.announcement_ids[0]'],
    ['an announcement without items', 'empty', 'input.announcement_ids[0]'],
    ['announcements of two warehouses', 'mixed', 'input.announcement_ids[1]'],
    ['a location outside the warehouse', 'location', 'input.location_id'],
    ['no announcements', 'none', 'input.announcement_ids'],
  ])(
    'createSupply rejects %s with VALIDATION_ERROR naming the field and changes nothing',
    async (_name, kind, field) => {
      await addStock(t, world, 'SKU-5', 1);
      const one = await announce([{ sku: 'SKU-5', quantity: 1 }]);
      const input: Record<string, unknown> = { announcement_ids: [one.id], settings: { processing: 'REGISTER' } };
      if (kind === 'unknown') input.announcement_ids = ['0190f5b4-1c5e-7000-8000-000000000abc'];
      if (kind === 'empty') input.announcement_ids = [(await announce([])).id];
      if (kind === 'mixed')
        input.announcement_ids = [
          one.id,
          (await announce([{ sku: 'SKU-5', quantity: 1 }], world.catalog.warehouseIds[1])).id,
        ];
      if (kind === 'location')
        input.location_id = world.catalog.positionIds.get(`${world.catalog.warehouseIds[1]}:A-01`);
      if (kind === 'none') input.announcement_ids = [];
      const before = await snapshot();
      expect(await graphqlErrorField(t, world.tenant.key, 'VALIDATION_ERROR', CREATE_SUPPLY, { input })).toBe(field);
      expect(await snapshot()).toEqual(before);
    },
  );

  it.each([
    ['an unknown sku', { items: [{ sku: 'NOPE', quantity: 1 }] }, 'input.items[0].sku'],
    ['a zero quantity', { items: [{ sku: 'SKU-1', quantity: 0 }] }, 'input.items[0].quantity'],
    ['an unknown warehouse', { warehouse_id: '0190f5b4-1c5e-7000-8000-000000000abc' }, 'input.warehouse_id'],
  ])(
    'createAnnouncement rejects %s with VALIDATION_ERROR naming the field and changes nothing',
    async (_name, override, field) => {
      const before = await snapshot();
      expect(
        await graphqlErrorField(t, world.tenant.key, 'VALIDATION_ERROR', CREATE_ANNOUNCEMENT, {
          input: { business_id: world.catalog.businessId, warehouse_id: world.warehouseId, ...override },
        }),
      ).toBe(field);
      expect(await snapshot()).toEqual(before);
    },
  );
});
