/**
 * Ids a client may choose (orders, reservations, item preferences, announcements, supplies) are
 * unique per tenant: another tenant's entity with the same id is neither revealed ("already
 * exists") nor touched, and the caller's own duplicate is still ID_TAKEN.
 */
import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { startTestApp } from '../helpers/app';
import { sql } from '../helpers/db';
import { addStock, createStockWorld, type StockWorld } from './orders.fixtures';
import { graphqlData, graphqlError } from './stock.fixtures';

const t = await startTestApp();
let a: StockWorld;
let b: StockWorld;

beforeAll(async () => {
  a = await createStockWorld(t, 'A');
  b = await createStockWorld(t, 'B');
  for (const world of [a, b]) await addStock(t, world, 'SKU-1', 100);
});

/** Tenant B's rows of the entity tables, to prove that nothing A did changed them. */
const tenantRows = (world: StockWorld) =>
  sql(
    t.databaseUrl,
    `SELECT 'order' AS kind, o.id::text, o.status::text AS state FROM orders o WHERE o.tenant_id = $1
     UNION ALL SELECT 'reservation', r.id::text, r.status::text FROM reservations r WHERE r.tenant_id = $1
     UNION ALL SELECT 'preference', p.id::text, p.minimum_quantity::text FROM item_preferences p WHERE p.tenant_id = $1
     UNION ALL SELECT 'announcement', n.id::text, n.status::text FROM announcements n WHERE n.tenant_id = $1
     UNION ALL SELECT 'supply', s.id::text, s.status::text FROM supplies s WHERE s.tenant_id = $1
     UNION ALL SELECT 'allocation', x.id::text, x.quantity::text FROM stock_allocations x WHERE x.tenant_id = $1
     ORDER BY 1, 2, 3`,
    [world.tenant.id],
  );

const createOrder = (world: StockWorld, id: string) =>
  `mutation { createOrder(input: { id: "${id}", business_id: "${world.catalog.businessId}",
     warehouse_id: "${world.warehouseId}", channel_id: "${world.channelId}",
     items: [{ sku: "SKU-1", quantity: 2 }] }) { order { id status } } }`;

const createReservation = (world: StockWorld, id: string) =>
  `mutation { createReservation(input: { id: "${id}", business_id: "${world.catalog.businessId}",
     warehouse_id: "${world.warehouseId}", channel_id: "${world.channelId}", customer: { name: "Ada" },
     items: [{ sku: "SKU-1", quantity: 3 }], expires_at: ${Date.now() + 3_600_000} }) { reservation { id status } } }`;

const createPreference = (world: StockWorld, id: string, sku: string) =>
  `mutation { createItemPreferences(input: { preferences: [{ id: "${id}", sku: "${sku}",
     warehouse_id: "${world.warehouseId}", business_id: "${world.catalog.businessId}", minimum_quantity: 1,
     optimal_quantity: 5, maximum_quantity: 10, reorder_point: 2, is_backorder_allowed: false,
     is_restricted_to_single_position: false }] }) { preferences { id sku } } }`;

const createAnnouncement = (world: StockWorld, id: string) =>
  `mutation { createAnnouncement(input: { id: "${id}", business_id: "${world.catalog.businessId}",
     warehouse_id: "${world.warehouseId}", items: [{ sku: "SKU-2", quantity: 4 }] }) { announcement { id status } } }`;

const createSupply = (id: string, announcementId: string) =>
  `mutation { createSupply(input: { id: "${id}", announcement_ids: ["${announcementId}"],
     settings: { processing: REGISTER } }) { supply { id status } } }`;

describe('client-chosen ids are unique per tenant', () => {
  it('an order id another tenant holds is free; cancelling it touches only the caller’s order', async () => {
    const id = randomUUID();
    expect((await graphqlData(t, b.tenant.key, createOrder(b, id))).createOrder.order).toEqual({ id, status: 'OPEN' });
    const bBefore = await tenantRows(b);
    expect((await graphqlData(t, a.tenant.key, createOrder(a, id))).createOrder.order).toEqual({ id, status: 'OPEN' });
    await graphqlError(t, a.tenant.key, 'ID_TAKEN', createOrder(a, id));

    const cancelled = await graphqlData(
      t,
      a.tenant.key,
      `mutation { cancelOrder(input: { id: "${id}" }) { order { id status } } }`,
    );
    expect(cancelled.cancelOrder.order.status).toBe('CANCELLED');
    expect((await graphqlData(t, b.tenant.key, `{ order(id: "${id}") { status items { quantity } } }`)).order).toEqual({
      status: 'OPEN',
      items: [{ quantity: 2 }],
    });
    expect(await tenantRows(b)).toEqual(bBefore);
  });

  it('a reservation id another tenant holds is free, batched or with an idempotency key', async () => {
    for (const withKey of [false, true]) {
      const id = randomUUID();
      const keyed = (query: string) => (withKey ? query.replace('{ id:', `{ idempotency_key: "k-${id}", id:`) : query);
      await graphqlData(t, b.tenant.key, keyed(createReservation(b, id)));
      const bBefore = await tenantRows(b);
      const created = await graphqlData(t, a.tenant.key, keyed(createReservation(a, id)));
      expect(created.createReservation.reservation).toEqual({ id, status: 'ACTIVE' });
      await graphqlError(t, a.tenant.key, 'ID_TAKEN', createReservation(a, id));

      await graphqlData(
        t,
        a.tenant.key,
        `mutation { removeReservation(input: { id: "${id}" }) { reservation { id } } }`,
      );
      expect((await graphqlData(t, a.tenant.key, `{ reservation(id: "${id}") { status } }`)).reservation.status).toBe(
        'REMOVED',
      );
      expect((await graphqlData(t, b.tenant.key, `{ reservation(id: "${id}") { status } }`)).reservation.status).toBe(
        'ACTIVE',
      );
      expect(await tenantRows(b)).toEqual(bBefore);
    }
  });

  it('an item preference id another tenant holds is free; a repeated one is ID_TAKEN naming the field', async () => {
    const id = randomUUID();
    await graphqlData(t, b.tenant.key, createPreference(b, id, 'SKU-1'));
    const bBefore = await tenantRows(b);
    const created = await graphqlData(t, a.tenant.key, createPreference(a, id, 'SKU-1'));
    expect(created.createItemPreferences.preferences).toEqual([{ id, sku: 'SKU-1' }]);
    const taken = await graphqlError(t, a.tenant.key, 'ID_TAKEN', createPreference(a, id, 'SKU-3'));
    expect(taken.extensions?.field).toBe('input.preferences[0].id');
    expect(await tenantRows(b)).toEqual(bBefore);
  });

  it('announcement and supply ids another tenant holds are free; receiving touches only the caller’s supply', async () => {
    const announcementId = randomUUID();
    const supplyId = randomUUID();
    await graphqlData(t, b.tenant.key, createAnnouncement(b, announcementId));
    await graphqlData(t, b.tenant.key, createSupply(supplyId, announcementId));
    const bBefore = await tenantRows(b);

    const announced = await graphqlData(t, a.tenant.key, createAnnouncement(a, announcementId));
    expect(announced.createAnnouncement.announcement).toEqual({ id: announcementId, status: 'OPEN' });
    await graphqlError(t, a.tenant.key, 'ID_TAKEN', createAnnouncement(a, announcementId));
    const supplied = await graphqlData(t, a.tenant.key, createSupply(supplyId, announcementId));
    expect(supplied.createSupply.supply).toEqual({ id: supplyId, status: 'EXPECTED' });
    await graphqlError(t, a.tenant.key, 'ID_TAKEN', createSupply(supplyId, announcementId));

    const received = await graphqlData(
      t,
      a.tenant.key,
      `mutation { receiveSupply(input: { supply_id: "${supplyId}" }) { supply { status announcement_ids } } }`,
    );
    expect(received.receiveSupply.supply).toEqual({ status: 'RECEIVED', announcement_ids: [announcementId] });
    const bSupply = await graphqlData(t, b.tenant.key, `{ supply(id: "${supplyId}") { status announcement_ids } }`);
    expect(bSupply.supply).toEqual({ status: 'EXPECTED', announcement_ids: [announcementId] });
    expect(await tenantRows(b)).toEqual(bBefore);
  });
});
