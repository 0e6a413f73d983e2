/**
 * Transfers between warehouses: committed at the source on creation, gone from it when shipped,
 * on hand at the destination as received (in part or whole), released when cancelled before
 * shipping. Units are conserved across warehouses and every step is in the ledger.
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
let source: string;
let destination: string;

const TRANSFER = `id status shipped_at received_at from_warehouse { id } to_warehouse { id }
  items { id sku quantity received_quantity }`;
const CREATE = `mutation($input: CreateTransferInput!) { createTransfer(input: $input) { transfer { ${TRANSFER} } } }`;
const SHIP = `mutation($input: ShipTransferInput!) { shipTransfer(input: $input) { transfer { ${TRANSFER} } } }`;
const RECEIVE = `mutation($input: ReceiveTransferInput!) { receiveTransfer(input: $input) { transfer { ${TRANSFER} } } }`;
const CANCEL = `mutation($input: CancelTransferInput!) { cancelTransfer(input: $input) { transfer { ${TRANSFER} } } }`;

interface Transfer {
  id: string;
  status: string;
  shipped_at: number | null;
  received_at: number | null;
  items: { id: string; sku: string; quantity: number; received_quantity: number }[];
}

const run = async (query: string, input: Record<string, unknown>) =>
  Object.values(await graphqlData<Record<string, { transfer: Transfer }>>(t, world.tenant.key, query, { input }))[0]!
    .transfer;
const create = (items: { sku: string; quantity: number }[], extra: Record<string, unknown> = {}) =>
  run(CREATE, { from_warehouse_id: source, to_warehouse_id: destination, items, ...extra });
const position = (warehouseId: string, code: string) => world.catalog.positionIds.get(`${warehouseId}:${code}`)!;
const onHand = async (sku: string) =>
  (await levels(t, world, sku, source)).quantity + (await levels(t, world, sku, destination)).quantity;

beforeAll(async () => {
  world = await createStockWorld(t, 'Transfer tenant', 4);
  [source, destination] = world.catalog.warehouseIds;
  await addStock(t, world, 'SKU-1', 10, { warehouseId: source });
  await addStock(t, world, 'SKU-2', 5, { warehouseId: source });
});

describe('a transfer', () => {
  it('commits at the source, ships, and is received at the destination in two parts', async () => {
    const created = await create([
      { sku: 'SKU-1', quantity: 4 },
      { sku: 'SKU-2', quantity: 2 },
    ]);
    expect(created.status).toBe('REQUESTED');
    expect(await levels(t, world, 'SKU-1', source)).toMatchObject({ quantity: 10, available: 6, committed: 4 });

    const shipped = await run(SHIP, { id: created.id });
    expect(shipped).toMatchObject({ status: 'SHIPPED', shipped_at: expect.any(Number), received_at: null });
    expect(await levels(t, world, 'SKU-1', source)).toMatchObject({ quantity: 6, available: 6, committed: 0 });
    expect(await onHand('SKU-1')).toBe(6); // 4 in transit

    const [first, second] = created.items;
    const partial = await run(RECEIVE, {
      id: created.id,
      location_id: position(destination, 'A-01'),
      items: [{ item_id: first!.id, quantity: 1 }],
    });
    expect(partial.status).toBe('PARTIALLY_RECEIVED');
    expect(partial.items.map((item) => item.received_quantity)).toEqual([1, 0]);
    expect(await levels(t, world, 'SKU-1', destination)).toMatchObject({ quantity: 1, available: 1 });

    const rest = await run(RECEIVE, { id: created.id });
    expect(rest).toMatchObject({ status: 'RECEIVED', received_at: expect.any(Number) });
    expect(rest.items.map((item) => item.received_quantity)).toEqual([4, 2]);
    expect(await levels(t, world, 'SKU-1', destination)).toMatchObject({ quantity: 4, available: 4 });
    expect(await levels(t, world, 'SKU-2', destination)).toMatchObject({ quantity: 2, available: 2 });
    expect(await onHand('SKU-1')).toBe(10);
    expect(await onHand('SKU-2')).toBe(5);
    expect(second!.sku).toBe('SKU-2');

    const ledger = await sql<{ source: string; delta: string; warehouse_id: string }>(
      t.databaseUrl,
      `SELECT source::text, delta::text, warehouse_id FROM stock_mutations
        WHERE tenant_id = $1 AND "references" @> $2::jsonb ORDER BY sequence`,
      [world.tenant.id, JSON.stringify([{ type: 'Transfer', id: created.id }])],
    );
    expect(ledger.filter((row) => row.source === 'REGISTER').map((row) => [row.delta, row.warehouse_id])).toEqual([
      ['1', destination],
      ['3', destination],
      ['2', destination],
    ]);
    expect(ledger.filter((row) => row.source === 'ALLOCATION' && row.delta !== '0').map((row) => row.delta)).toEqual([
      '-4',
      '-2',
    ]);
    const references = await graphqlData(
      t,
      world.tenant.key,
      `query($q: QueryFilter) { stockMutations(query: $q, first: 1) { edges { node {
        references { __typename ... on Transfer { id status } } } } } }`,
      { q: 'source=REGISTER&sort=-created_at' },
    );
    expect(references.stockMutations.edges[0]!.node.references).toEqual([
      { __typename: 'Transfer', id: created.id, status: 'RECEIVED' },
    ]);
    await expectStockInvariants(t, world.tenant.id);
  });

  it('cancelled before shipping, releases its units at the source', async () => {
    const before = await levels(t, world, 'SKU-1', source);
    const created = await create([{ sku: 'SKU-1', quantity: 3 }]);
    const cancelled = await run(CANCEL, { id: created.id });
    expect(cancelled.status).toBe('CANCELLED');
    expect(await levels(t, world, 'SKU-1', source)).toEqual(before);
    const snapshot = await operationsSnapshot(t, world.tenant.id);
    await graphqlError(t, world.tenant.key, 'INVALID_STATE', SHIP, { input: { id: created.id } });
    await graphqlError(t, world.tenant.key, 'INVALID_STATE', RECEIVE, { input: { id: created.id } });
    await graphqlError(t, world.tenant.key, 'INVALID_STATE', CANCEL, { input: { id: created.id } });
    expect(await operationsSnapshot(t, world.tenant.id)).toEqual(snapshot);
    await expectStockInvariants(t, world.tenant.id);
  });

  it('refuses bad input with the precise code and changes nothing', async () => {
    const requested = await create([{ sku: 'SKU-2', quantity: 1 }]);
    const shipped = await create([{ sku: 'SKU-2', quantity: 1 }]);
    await run(SHIP, { id: shipped.id });
    const before = await operationsSnapshot(t, world.tenant.id);
    const field = (code: string, query: string, input: Record<string, unknown>) =>
      graphqlErrorField(t, world.tenant.key, code, query, { input });
    const items = [{ sku: 'SKU-1', quantity: 1 }];
    expect(await field('VALIDATION_ERROR', CREATE, { from_warehouse_id: source, to_warehouse_id: source, items })).toBe(
      'input.to_warehouse_id',
    );
    const other = await createStockWorld(t, 'Other transferrer', 1);
    expect(
      await field('VALIDATION_ERROR', CREATE, {
        from_warehouse_id: other.warehouseId,
        to_warehouse_id: destination,
        items,
      }),
    ).toBe('input.from_warehouse_id');
    expect(
      await field('VALIDATION_ERROR', CREATE, {
        from_warehouse_id: source,
        to_warehouse_id: destination,
        items: [{ sku: 'NOPE', quantity: 1 }],
      }),
    ).toBe('input.items[0].sku');
    expect(
      await field('OUT_OF_STOCK', CREATE, {
        from_warehouse_id: source,
        to_warehouse_id: destination,
        items: [{ sku: 'SKU-2', quantity: 50 }],
      }),
    ).toBe('input.items[0].quantity');
    expect(
      await field('INVALID_STATE', RECEIVE, {
        id: shipped.id,
        items: [{ item_id: shipped.items[0]!.id, quantity: 2 }],
      }),
    ).toBe('input.items[0].quantity');
    expect(await field('VALIDATION_ERROR', RECEIVE, { id: shipped.id, location_id: position(source, 'A-01') })).toBe(
      'input.location_id',
    );
    expect(
      await field('VALIDATION_ERROR', RECEIVE, {
        id: shipped.id,
        items: [{ item_id: requested.items[0]!.id, quantity: 1 }],
      }),
    ).toBe('input.items[0].item_id');
    expect(await field('INVALID_STATE', RECEIVE, { id: requested.id })).toBe('input.id');
    await graphqlError(t, world.tenant.key, 'NOT_FOUND', SHIP, {
      input: { id: '0190f5b4-1c5e-7000-8000-0000000000cd' },
    });
    await graphqlError(t, other.tenant.key, 'NOT_FOUND', SHIP, { input: { id: requested.id } });
    expect(await operationsSnapshot(t, world.tenant.id)).toEqual(before);
  });

  it('respects a single-position preference at the destination', async () => {
    await addStock(t, world, 'SKU-3', 5, { warehouseId: source });
    await addStock(t, world, 'SKU-3', 1, { warehouseId: destination, position: 'A-01' });
    await graphqlData(
      t,
      world.tenant.key,
      `mutation($input: CreateItemPreferencesInput!) { createItemPreferences(input: $input) { preferences { id } } }`,
      {
        input: {
          preferences: [
            {
              sku: 'SKU-3',
              warehouse_id: destination,
              business_id: world.catalog.businessId,
              minimum_quantity: 0,
              optimal_quantity: 5,
              maximum_quantity: 10,
              reorder_point: 1,
              is_backorder_allowed: false,
              is_restricted_to_single_position: true,
            },
          ],
        },
      },
    );
    const transfer = await create([{ sku: 'SKU-3', quantity: 2 }]);
    await run(SHIP, { id: transfer.id });
    const before = await operationsSnapshot(t, world.tenant.id);
    // The warehouse without a position would be a second place for the SKU besides A-01.
    await graphqlError(t, world.tenant.key, 'CONFLICT', RECEIVE, {
      input: { id: transfer.id, location_id: destination },
    });
    expect(await operationsSnapshot(t, world.tenant.id)).toEqual(before);
    const received = await run(RECEIVE, { id: transfer.id, location_id: position(destination, 'A-01') });
    expect(received.status).toBe('RECEIVED');
    expect(await levels(t, world, 'SKU-3', destination)).toMatchObject({ quantity: 3 });
    await expectStockInvariants(t, world.tenant.id);
  });
});
