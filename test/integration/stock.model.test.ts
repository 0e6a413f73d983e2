/**
 * Model test: random sequences of stock operations (registering stock, reservations with removal
 * and expiry, orders through shipping, cancelling, deallocation, picking corrections, returns and
 * restock, supplies announced and received) against the services, compared after every step with a model of each SKU's levels:
 * quantity = available + committed + reserved + unavailable, nothing negative, every allocation on
 * its lines, and the ledger explains the stock.
 */
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import type { Principal } from '../../src/modules/auth/scopes';
import { AppError } from '../../src/kernel/errors';
import { startTestApp } from '../helpers/app';
import { sql } from '../helpers/db';
import { createStockWorld, expectStockInvariants, type StockWorld } from './orders.fixtures';

const t = await startTestApp();
let world: StockWorld;
let principal: Principal;
const SKUS = ['SKU-1', 'SKU-2'] as const;

interface Levels {
  quantity: number;
  available: number;
  committed: number;
  reserved: number;
  unavailable: number;
  expected: number;
}

type Command =
  | { kind: 'add'; sku: number; quantity: number }
  | { kind: 'reserve'; sku: number; quantity: number }
  | { kind: 'removeReservation' | 'expireReservation'; pick: number }
  | { kind: 'sweep' }
  | { kind: 'supply'; sku: number; quantity: number }
  | { kind: 'receive'; pick: number }
  | { kind: 'order'; sku: number; quantity: number }
  | {
      kind: 'ship' | 'cancel' | 'deallocate' | 'missing' | 'unavailable' | 'available' | 'returnAndRestock';
      pick: number;
    };

const sku = fc.integer({ min: 0, max: SKUS.length - 1 });
const quantity = fc.integer({ min: 1, max: 4 });
const pick = fc.nat(20);
const command: fc.Arbitrary<Command> = fc.oneof(
  fc.record({ kind: fc.constant('add' as const), sku, quantity }),
  fc.record({ kind: fc.constant('reserve' as const), sku, quantity }),
  fc.record({ kind: fc.constantFrom('removeReservation' as const, 'expireReservation' as const), pick }),
  fc.constant({ kind: 'sweep' as const }),
  fc.record({ kind: fc.constant('supply' as const), sku, quantity }),
  fc.record({ kind: fc.constant('receive' as const), pick }),
  fc.record({ kind: fc.constant('order' as const), sku, quantity }),
  fc.record({
    kind: fc.constantFrom(
      'ship' as const,
      'cancel' as const,
      'deallocate' as const,
      'missing' as const,
      'unavailable' as const,
      'available' as const,
      'returnAndRestock' as const,
    ),
    pick,
  }),
);

/** Each SKU's levels at the warehouse as the `inventory` query computes them. */
async function actualLevels(): Promise<Record<string, Levels>> {
  const page = await t.services.stock.inventory(principal, { warehouse_id: world.warehouseId }, { size: 100 });
  const result: Record<string, Levels> = Object.fromEntries(
    SKUS.map((s) => [s, { quantity: 0, available: 0, committed: 0, reserved: 0, unavailable: 0, expected: 0 }]),
  );
  for (const group of page.items) {
    const levels = result[group.sku]!;
    levels.quantity += group.quantity;
    levels.available += group.quantityAvailable;
    levels.committed += group.quantityCommitted;
    levels.reserved += group.quantityReserved;
    levels.unavailable += group.quantityUnavailable;
    levels.expected += group.quantityExpected;
  }
  return result;
}

beforeAll(async () => {
  world = await createStockWorld(t, 'Model tenant', 2);
  principal = { tenantId: world.tenant.id, scopes: new Set(['*']), actor: { type: 'api_key', id: 'model' } };
});

describe('stock model', () => {
  it('keeps every invariant over random operation sequences', { timeout: 300_000 }, async () => {
    const target = {
      business_id: world.catalog.businessId,
      warehouse_id: world.warehouseId,
      channel_id: world.channelId,
    };
    const positionA01 = world.catalog.positionIds.get(`${world.warehouseId}:A-01`)!;
    await fc.assert(
      fc.asyncProperty(fc.array(command, { minLength: 1, maxLength: 6 }), async (commands) => {
        const model = await actualLevels();
        const reservations: { id: string; sku: string; quantity: number; active: boolean }[] = [];
        const supplies: { id: string; sku: string; quantity: number; received: boolean }[] = [];
        const orders: { id: string; itemId: string; sku: string; quantity: number; state: string; status: string }[] =
          [];
        const refused = async (work: () => Promise<unknown>) => {
          try {
            await work();
            return false;
          } catch (error) {
            if (error instanceof AppError && ['CONFLICT', 'OUT_OF_STOCK', 'INVALID_STATE'].includes(error.key))
              return true;
            throw error;
          }
        };
        for (const c of commands) {
          const chosenOrder = 'pick' in c && orders.length > 0 ? orders[c.pick % orders.length]! : undefined;
          const chosenReservation =
            'pick' in c && reservations.length > 0 ? reservations[c.pick % reservations.length]! : undefined;
          const level = (name: string) => model[name]!;
          switch (c.kind) {
            case 'add': {
              const name = SKUS[c.sku]!;
              await t.services.stock.addItems(principal, [
                {
                  sku: name,
                  quantity: c.quantity,
                  warehouseId: world.warehouseId,
                  businessId: world.catalog.businessId,
                },
              ]);
              level(name).quantity += c.quantity;
              level(name).available += c.quantity;
              break;
            }
            case 'reserve': {
              const name = SKUS[c.sku]!;
              const input = {
                ...target,
                customer: { name: 'Model' },
                items: [{ sku: name, quantity: c.quantity }],
                expires_at: Date.now() + 3_600_000,
              };
              let id = '';
              const wasRefused = await refused(
                async () => (id = (await t.services.reservations.createReservation(principal, input)).id),
              );
              expect(wasRefused).toBe(level(name).available < c.quantity);
              if (!wasRefused) {
                reservations.push({ id, sku: name, quantity: c.quantity, active: true });
                level(name).available -= c.quantity;
                level(name).reserved += c.quantity;
              }
              break;
            }
            case 'removeReservation':
            case 'expireReservation': {
              if (!chosenReservation) break;
              if (c.kind === 'removeReservation') {
                const wasRefused = await refused(() =>
                  t.services.reservations.removeReservation(principal, chosenReservation.id),
                );
                expect(wasRefused).toBe(!chosenReservation.active);
              } else {
                await sql(
                  t.databaseUrl,
                  `UPDATE reservations SET expires_at = now() - interval '1 second' WHERE id = $1 AND status = 'ACTIVE'`,
                  [chosenReservation.id],
                );
              }
              if (chosenReservation.active) {
                chosenReservation.active = false;
                level(chosenReservation.sku).reserved -= chosenReservation.quantity;
                level(chosenReservation.sku).available += chosenReservation.quantity;
              }
              break;
            }
            case 'sweep':
              await t.services.reservations.releaseExpired();
              break;
            case 'supply': {
              const name = SKUS[c.sku]!;
              const announcement = await t.services.supply.createAnnouncement(principal, {
                ...target,
                items: [{ sku: name, quantity: c.quantity }],
              });
              const supply = await t.services.supply.createSupply(principal, {
                announcement_ids: [announcement.id],
                settings: { processing: 'REGISTER' },
              });
              supplies.push({ id: supply.id, sku: name, quantity: c.quantity, received: false });
              level(name).expected += c.quantity;
              break;
            }
            case 'receive': {
              const supply = supplies.length > 0 ? supplies[c.pick % supplies.length]! : undefined;
              if (!supply) break;
              const wasRefused = await refused(() => t.services.supply.receiveSupply(principal, supply.id));
              expect(wasRefused).toBe(supply.received);
              if (!supply.received) {
                supply.received = true;
                level(supply.sku).expected -= supply.quantity;
                level(supply.sku).quantity += supply.quantity;
                level(supply.sku).available += supply.quantity;
              }
              break;
            }
            case 'order': {
              const name = SKUS[c.sku]!;
              let created: Awaited<ReturnType<typeof t.services.orders.createOrder>> | undefined;
              const wasRefused = await refused(
                async () =>
                  (created = await t.services.orders.createOrder(principal, {
                    ...target,
                    items: [{ sku: name, quantity: c.quantity }],
                  })),
              );
              expect(wasRefused).toBe(level(name).available < c.quantity);
              if (created) {
                orders.push({
                  id: created.id,
                  itemId: created.items[0]!.id,
                  sku: name,
                  quantity: c.quantity,
                  state: 'ALLOCATED',
                  status: 'OPEN',
                });
                level(name).available -= c.quantity;
                level(name).committed += c.quantity;
              }
              break;
            }
            default: {
              if (!chosenOrder) break;
              const o = chosenOrder;
              const l = level(o.sku);
              const items = [{ item_id: o.itemId }];
              const expectRefusal = async (work: () => Promise<unknown>, allowed: boolean) => {
                expect(await refused(work)).toBe(!allowed);
                return allowed;
              };
              if (c.kind === 'ship') {
                if (
                  await expectRefusal(
                    () => t.services.orders.shipOrder(principal, o.id),
                    o.status === 'OPEN' && o.state === 'ALLOCATED',
                  )
                ) {
                  l.quantity -= o.quantity;
                  l.committed -= o.quantity;
                  o.state = 'SHIPPED';
                  o.status = 'SHIPPED';
                }
              } else if (c.kind === 'cancel') {
                if (
                  await expectRefusal(() => t.services.orders.cancelOrder(principal, o.id), o.status !== 'CANCELLED')
                ) {
                  if (o.state === 'ALLOCATED') {
                    l.committed -= o.quantity;
                    l.available += o.quantity;
                  }
                  o.state = o.state === 'RESTOCKED' || o.state === 'RETURNED' ? o.state : 'CANCELLED';
                  if (o.status === 'SHIPPED' && o.state === 'CANCELLED') o.state = 'CANCELLED_SHIPPED';
                  o.status = 'CANCELLED';
                }
              } else if (c.kind === 'deallocate' || c.kind === 'missing' || c.kind === 'unavailable') {
                const allowed = o.status === 'OPEN' && o.state === 'ALLOCATED';
                const work = {
                  deallocate: () => t.services.orders.deallocateOrderItems(principal, o.id, items),
                  missing: () => t.services.orders.markItemsAsMissing(principal, o.id, items),
                  unavailable: () => t.services.orders.markItemsAsUnavailable(principal, o.id, items),
                }[c.kind];
                if (await expectRefusal(work, allowed)) {
                  l.committed -= o.quantity;
                  if (c.kind === 'deallocate') l.available += o.quantity;
                  if (c.kind === 'missing') l.quantity -= o.quantity;
                  if (c.kind === 'unavailable') l.unavailable += o.quantity;
                  o.state = { deallocate: 'DEALLOCATED', missing: 'MISSING', unavailable: 'UNAVAILABLE' }[c.kind];
                }
              } else if (c.kind === 'available') {
                const allowed = o.status === 'OPEN' && o.state === 'UNAVAILABLE';
                if (
                  await expectRefusal(
                    () =>
                      t.services.orders.markItemsAsAvailable(principal, o.id, [
                        { item_id: o.itemId, location_id: positionA01 },
                      ]),
                    allowed,
                  )
                ) {
                  l.unavailable -= o.quantity;
                  l.available += o.quantity;
                  o.state = 'DEALLOCATED';
                }
              } else if (c.kind === 'returnAndRestock') {
                if (o.state === 'SHIPPED' && o.status === 'SHIPPED') {
                  await t.services.orders.returnOrderItems(principal, o.id, items);
                  o.state = 'RETURNED';
                }
                const allowed = o.state === 'RETURNED' || o.state === 'CANCELLED_SHIPPED';
                if (
                  await expectRefusal(
                    () =>
                      t.services.orders.restockOrderItems(principal, o.id, [
                        { item_id: o.itemId, location_id: world.warehouseId },
                      ]),
                    allowed,
                  )
                ) {
                  l.quantity += o.quantity;
                  l.available += o.quantity;
                  o.state = 'RESTOCKED';
                }
              }
            }
          }
          const actual = await actualLevels();
          for (const name of SKUS) {
            const a = actual[name]!;
            expect(a, `${name} after ${JSON.stringify(c)}`).toEqual(model[name]);
            expect(a.quantity).toBe(a.available + a.committed + a.reserved + a.unavailable);
            for (const value of Object.values(a)) expect(value).toBeGreaterThanOrEqual(0);
          }
          // The ledger explains the change: per SKU its deltas sum to the on-hand quantity, and its latest row says so.
          const ledger = await sql<{ sku: string; total: string; latest: string }>(
            t.databaseUrl,
            `SELECT p.sku, sum(m.delta)::text AS total, (array_agg(m.new_quantity ORDER BY m.sequence DESC))[1]::text AS latest
               FROM stock_mutations m JOIN products p ON p.id = m.product_id
              WHERE m.tenant_id = $1 AND m.warehouse_id = $2 GROUP BY p.sku`,
            [world.tenant.id, world.warehouseId],
          );
          for (const row of ledger) {
            expect(Number(row.total), `ledger of ${row.sku}`).toBe(actual[row.sku]!.quantity);
            expect(Number(row.latest), `latest new_quantity of ${row.sku}`).toBe(actual[row.sku]!.quantity);
          }
        }
        await expectStockInvariants(t, world.tenant.id);
      }),
      { numRuns: 200 },
    );
  });
});
