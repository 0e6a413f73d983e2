/**
 * Model tests: random sequences of stock operations against the services, compared after every
 * step with a model of each SKU's levels. The first works at one warehouse (registering stock,
 * reservations with removal and expiry, orders through shipping, cancelling, deallocation, picking
 * corrections, returns and restock, supplies announced and received); the second over a sales
 * channel's three warehouses (orders and reservations allocated by strategy, conversion, extension,
 * partial shipments, transfers and compare-and-set counts). Invariants: quantity = available +
 * committed + reserved + unavailable, nothing negative, every allocation on its lines, units
 * conserved by transfers, and the ledger explains the stock.
 */
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import type { Principal } from '../../src/kernel/principal';
import { AppError, errorRegistry } from '../../src/kernel/errors';
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

/**
 * The multi-warehouse model: a sales channel selling from three warehouses, fresh SKUs each run
 * (so a shrunk sequence replays from the same start), and the operations that span warehouses:
 * orders and reservations allocated by strategy, conversion of a reservation into an order,
 * extension, partial shipments, transfers and compare-and-set counts (GraphQL and REST). The model
 * predicts every outcome (success or the exact error code) and each SKU's levels per warehouse and
 * in transit.
 */
const WAREHOUSES = 3;
const MW_SKUS = 3;
const STRATEGIES = ['PRIORITY', 'MOST_STOCK', 'SINGLE_WAREHOUSE', 'FEWEST_SHIPMENTS', 'CLOSEST'] as const;
type Strategy = (typeof STRATEGIES)[number];
const WAREHOUSE_ORDERS = [
  [0, 1, 2],
  [2, 0, 1],
  [1, 2, 0],
  [2, 1],
  [0, 2],
] as const;

type ItemsInput = { sku: number; quantity: number }[];
type MwCommand =
  | { kind: 'add'; sku: number; warehouse: number; quantity: number }
  | { kind: 'reserve' | 'order'; items: ItemsInput; strategy: Strategy | null }
  | { kind: 'convert'; pick: number; fewer: boolean }
  | { kind: 'extend' | 'remove' | 'expire'; pick: number }
  | { kind: 'sweep' }
  | { kind: 'configure'; order: number; strategy: Strategy | null }
  | { kind: 'ship' | 'cancel'; pick: number }
  | { kind: 'shipPart'; pick: number; item: number; quantity: number }
  | { kind: 'transfer'; sku: number; from: number; offset: number; quantity: number }
  | { kind: 'shipTransfer' | 'cancelTransfer'; pick: number }
  | { kind: 'receiveTransfer'; pick: number; quantity: number | null }
  | { kind: 'count'; sku: number; warehouse: number; quantity: number; stale: boolean; rest: boolean };

/** Which earlier reservation, order or transfer a command acts on, counted from the latest (most often the latest). */
const recent = fc.oneof({ weight: 2, arbitrary: fc.constant(0) }, { weight: 1, arbitrary: fc.nat(20) });
const mwSku = fc.integer({ min: 0, max: MW_SKUS - 1 });
const mwWarehouse = fc.integer({ min: 0, max: WAREHOUSES - 1 });
const units = fc.integer({ min: 1, max: 5 });
const strategy = fc.constantFrom(null, ...STRATEGIES);
/** One or two items of different SKUs. */
const itemsInput = fc.uniqueArray(fc.record({ sku: mwSku, quantity: units }), {
  minLength: 1,
  maxLength: 2,
  selector: (item) => item.sku,
});
const mwCommand: fc.Arbitrary<MwCommand> = fc.oneof(
  {
    weight: 2,
    arbitrary: fc.record({ kind: fc.constant('add' as const), sku: mwSku, warehouse: mwWarehouse, quantity: units }),
  },
  {
    weight: 4,
    arbitrary: fc.record({ kind: fc.constantFrom('reserve' as const, 'order' as const), items: itemsInput, strategy }),
  },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('convert' as const), pick: recent, fewer: fc.boolean() }) },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constantFrom('extend' as const, 'remove' as const, 'expire' as const),
      pick: recent,
    }),
  },
  { weight: 1, arbitrary: fc.constant({ kind: 'sweep' as const }) },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('configure' as const),
      order: fc.integer({ min: 0, max: WAREHOUSE_ORDERS.length - 1 }),
      strategy,
    }),
  },
  { weight: 2, arbitrary: fc.record({ kind: fc.constantFrom('ship' as const, 'cancel' as const), pick: recent }) },
  {
    weight: 2,
    arbitrary: fc.record({ kind: fc.constant('shipPart' as const), pick: recent, item: pick, quantity: units }),
  },
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant('transfer' as const),
      sku: mwSku,
      from: mwWarehouse,
      offset: fc.integer({ min: 1, max: WAREHOUSES - 1 }),
      quantity: fc.integer({ min: 1, max: 3 }),
    }),
  },
  {
    weight: 3,
    arbitrary: fc.record({ kind: fc.constant('shipTransfer' as const), pick: recent }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('cancelTransfer' as const), pick: recent }) },
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant('receiveTransfer' as const),
      pick: recent,
      quantity: fc.option(fc.integer({ min: 1, max: 3 }), { nil: null }),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('count' as const),
      sku: mwSku,
      warehouse: mwWarehouse,
      quantity: fc.integer({ min: 0, max: 6 }),
      stale: fc.boolean(),
      rest: fc.boolean(),
    }),
  },
);

/** A SKU's levels at one warehouse (nothing is unavailable or expected in this model). */
interface WarehouseLevels {
  quantity: number;
  available: number;
  committed: number;
  reserved: number;
}

/** Units of one holder per warehouse index. */
type Parts = Map<number, number>;

/**
 * The model's allocation: each item's units per warehouse index, by strategy over `order` (the
 * channel's warehouses in priority order) and `available` (sku → units per warehouse index); null
 * when an item cannot be met. Written from the documented rules, independently of the service.
 */
function modelPlan(
  items: ItemsInput,
  order: readonly number[],
  available: (sku: number, w: number) => number,
  strategy: Strategy,
) {
  // The model's warehouses have no location and its orders no destination: CLOSEST ranks them in
  // priority order, so it serves from the first warehouse that has everything, else splits in order.
  const single = order.find((candidate) => items.every((item) => available(item.sku, candidate) >= item.quantity));
  if (strategy === 'SINGLE_WAREHOUSE' || (strategy === 'CLOSEST' && single !== undefined)) {
    return single === undefined ? null : items.map((item) => new Map([[single, item.quantity]]) as Parts);
  }
  let from = order;
  if (strategy === 'FEWEST_SHIPMENTS') {
    // Every set of warehouses, smallest first, then first in priority order (items are of distinct SKUs).
    const sets = [...Array(2 ** order.length).keys()]
      .map((mask) => order.filter((_, index) => mask & (2 ** index)))
      .filter((set) => set.length > 0)
      .sort(
        (a, b) =>
          a.length - b.length ||
          order.indexOf(a[0]!) - order.indexOf(b[0]!) ||
          order.indexOf(a[1] ?? -1) - order.indexOf(b[1] ?? -1),
      );
    from =
      sets.find((set) =>
        items.every((item) => set.reduce((sum, w) => sum + available(item.sku, w), 0) >= item.quantity),
      ) ?? order;
  }
  const plans: Parts[] = [];
  for (const item of items) {
    const ranked =
      strategy === 'MOST_STOCK' ? [...order].sort((a, b) => available(item.sku, b) - available(item.sku, a)) : from;
    const parts: Parts = new Map();
    let missing = item.quantity;
    for (const w of ranked) {
      const take = Math.min(missing, available(item.sku, w));
      if (take > 0) parts.set(w, take);
      missing -= take;
    }
    if (missing > 0) return null;
    plans.push(parts);
  }
  return plans;
}

describe('stock model over a sales channel with three warehouses', () => {
  it('predicts every outcome and level over random multi-warehouse sequences', { timeout: 600_000 }, async () => {
    const mw = await createStockWorld(t, 'Multi-warehouse model tenant', 0);
    const owner: Principal = {
      tenantId: mw.tenant.id,
      scopes: new Set(['*']),
      actor: { type: 'api_key', id: 'model' },
    };
    const third = await t.services.catalog.createWarehouse(owner, {
      business_id: mw.catalog.businessId,
      name: 'Warehouse 3',
    });
    const warehouseIds = [mw.catalog.warehouseIds[0], mw.catalog.warehouseIds[1], third.id];
    const warehouseIndex = new Map(warehouseIds.map((id, index) => [id, index]));
    let run = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.integer({ min: 0, max: 5 }), { minLength: MW_SKUS * WAREHOUSES, maxLength: MW_SKUS * WAREHOUSES }),
        fc.array(mwCommand, { minLength: 1, maxLength: 10, size: 'max' }),
        async (initial, commands) => {
          run += 1;
          const skus = Array.from({ length: MW_SKUS }, (_, i) => `MW-${run}-${i}`);
          const productIds: string[] = [];
          for (const sku of skus)
            productIds.push((await t.services.catalog.createProduct(owner, { sku, name: sku })).id);
          const skuOf = new Map(productIds.map((id, index) => [id, index]));
          const channel = { order: [0, 1, 2] as readonly number[], strategy: 'PRIORITY' as Strategy };
          await t.services.catalog.setSalesChannelWarehouses(owner, {
            channel_id: mw.channelId,
            warehouse_ids: warehouseIds,
            allocation_strategy: 'PRIORITY',
          });
          const seed = initial.flatMap((quantity, index) => {
            const [s, w] = [Math.floor(index / WAREHOUSES), index % WAREHOUSES];
            return quantity === 0
              ? []
              : [{ sku: skus[s]!, quantity, warehouseId: warehouseIds[w]!, businessId: mw.catalog.businessId }];
          });
          if (seed.length > 0) await t.services.stock.addItems(owner, seed);

          const levels: WarehouseLevels[][] = skus.map((_, s) =>
            warehouseIds.map((_, w) => {
              const quantity = initial[s * WAREHOUSES + w]!;
              return { quantity, available: quantity, committed: 0, reserved: 0 };
            }),
          );
          const inTransit = skus.map(() => 0);
          const at = (s: number, w: number) => levels[s]![w]!;
          const reservations: {
            id: string;
            status: 'ACTIVE' | 'EXPIRED' | 'REMOVED' | 'CONVERTED';
            items: { sku: number; quantity: number; parts: Parts }[];
            expiresAt: number;
          }[] = [];
          const orders: {
            id: string;
            status: 'OPEN' | 'PARTIALLY_SHIPPED' | 'SHIPPED' | 'CANCELLED';
            items: { id: string; sku: number; quantity: number; state: string; parts: Parts }[];
          }[] = [];
          const transfers: {
            id: string;
            itemId: string;
            status: 'REQUESTED' | 'SHIPPED' | 'PARTIALLY_RECEIVED' | 'RECEIVED' | 'CANCELLED';
            sku: number;
            from: number;
            to: number;
            quantity: number;
            received: number;
          }[] = [];
          /** The error code a client sees (GraphQL's), or null when the call succeeded; anything unexpected is thrown. */
          const outcome = async (work: () => Promise<unknown>): Promise<string | null> => {
            try {
              await work();
              return null;
            } catch (error) {
              if (error instanceof AppError) return errorRegistry[error.key].graphqlCode;
              throw error;
            }
          };
          const move = (parts: Parts, s: number, from: keyof WarehouseLevels, to: keyof WarehouseLevels | null) => {
            for (const [w, quantity] of parts) {
              at(s, w)[from] -= quantity;
              if (to) at(s, w)[to] += quantity;
              else at(s, w).quantity -= quantity;
            }
          };
          const itemsOf = (items: ItemsInput) =>
            items.map((item) => ({ sku: skus[item.sku]!, quantity: item.quantity }));
          /** Allocations of a holder in the order the service takes them (by id), as warehouse indexes. */
          const allocationOrder = async (column: 'reservation_id' | 'order_item_id', id: string) =>
            (
              await t.db.$queryRawUnsafe<{ product_id: string; warehouse_id: string; quantity: number }[]>(
                `SELECT product_id, warehouse_id, quantity::int AS quantity FROM stock_allocations
                  WHERE tenant_id = $1::uuid AND ${column} = $2::uuid ORDER BY id`,
                mw.tenant.id,
                id,
              )
            ).map((row) => ({
              sku: skuOf.get(row.product_id)!,
              w: warehouseIndex.get(row.warehouse_id)!,
              quantity: row.quantity,
            }));

          for (const c of commands) {
            const label = `${JSON.stringify(c)} in ${JSON.stringify(commands)} from ${JSON.stringify(initial)}`;
            const onHandBefore = skus.map(
              (_, s) => at(s, 0).quantity + at(s, 1).quantity + at(s, 2).quantity + inTransit[s]!,
            );
            /** The `pick`-th latest of `list`, round the list. */
            const picked = <T>(list: T[]) =>
              'pick' in c && list.length > 0 ? list[list.length - 1 - (c.pick % list.length)] : undefined;
            const reservation = picked(reservations);
            const order = picked(orders);
            const transfer = picked(transfers);
            switch (c.kind) {
              case 'add': {
                await t.services.stock.addItems(owner, [
                  {
                    sku: skus[c.sku]!,
                    quantity: c.quantity,
                    warehouseId: warehouseIds[c.warehouse]!,
                    businessId: mw.catalog.businessId,
                  },
                ]);
                at(c.sku, c.warehouse).quantity += c.quantity;
                at(c.sku, c.warehouse).available += c.quantity;
                break;
              }
              case 'reserve':
              case 'order': {
                const plan = modelPlan(
                  c.items,
                  channel.order,
                  (s, w) => at(s, w).available,
                  c.strategy ?? channel.strategy,
                );
                const input = {
                  business_id: mw.catalog.businessId,
                  channel_id: mw.channelId,
                  items: itemsOf(c.items),
                  ...(c.strategy ? { allocation_strategy: c.strategy } : {}),
                };
                let created: { id: string; warehouseId: string; items: { id?: string; sku: string }[] } | undefined;
                const expiresAt = Date.now() + 3_600_000;
                const code = await outcome(async () => {
                  created =
                    c.kind === 'reserve'
                      ? await t.services.reservations.createReservation(owner, {
                          ...input,
                          customer: { name: 'Model' },
                          expires_at: expiresAt,
                        })
                      : await t.services.orders.createOrder(owner, input);
                });
                expect(code, label).toBe(plan ? null : 'OUT_OF_STOCK');
                if (!plan || !created) break;
                // The reservation's or order's warehouse is the one its first units come from.
                expect(warehouseIndex.get(created.warehouseId), label).toBe([...plan[0]!.keys()][0]);
                c.items.forEach((item, index) =>
                  move(plan[index]!, item.sku, 'available', c.kind === 'reserve' ? 'reserved' : 'committed'),
                );
                if (c.kind === 'reserve') {
                  reservations.push({
                    id: created.id,
                    status: 'ACTIVE',
                    items: c.items.map((item, index) => ({ ...item, parts: plan[index]! })),
                    expiresAt,
                  });
                } else {
                  orders.push({
                    id: created.id,
                    status: 'OPEN',
                    items: c.items.map((item, index) => ({
                      id: created!.items.find((candidate) => candidate.sku === skus[item.sku])!.id!,
                      sku: item.sku,
                      quantity: item.quantity,
                      state: 'ALLOCATED',
                      parts: plan[index]!,
                    })),
                  });
                }
                break;
              }
              case 'convert': {
                if (!reservation) break;
                // Fewer units than reserved: one less of each item that has more than one.
                const items = reservation.items.map((item) => ({
                  sku: item.sku,
                  quantity: c.fewer && item.quantity > 1 ? item.quantity - 1 : item.quantity,
                }));
                const held =
                  reservation.status === 'ACTIVE' ? await allocationOrder('reservation_id', reservation.id) : [];
                let created: Awaited<ReturnType<typeof t.services.orders.createOrder>> | undefined;
                const code = await outcome(async () => {
                  created = await t.services.orders.createOrder(owner, {
                    reservation_id: reservation.id,
                    ...(c.fewer ? { items: itemsOf(items) } : {}),
                  });
                });
                expect(code, label).toBe(reservation.status === 'ACTIVE' ? null : 'INVALID_STATE');
                if (!created) break;
                reservation.status = 'CONVERTED';
                // The reserved units are committed in the order the reservation holds them; the rest is released.
                const left = new Map(items.map((item) => [item.sku, item.quantity]));
                const committedParts = new Map(items.map((item) => [item.sku, new Map() as Parts]));
                for (const allocation of held) {
                  const take = Math.min(allocation.quantity, left.get(allocation.sku)!);
                  left.set(allocation.sku, left.get(allocation.sku)! - take);
                  const parts = committedParts.get(allocation.sku)!;
                  parts.set(allocation.w, (parts.get(allocation.w) ?? 0) + take);
                  at(allocation.sku, allocation.w).reserved -= allocation.quantity;
                  at(allocation.sku, allocation.w).committed += take;
                  at(allocation.sku, allocation.w).available += allocation.quantity - take;
                }
                expect(created.status, label).toBe('OPEN');
                orders.push({
                  id: created.id,
                  status: 'OPEN',
                  items: items.map((item) => ({
                    id: created!.items.find((candidate) => candidate.sku === skus[item.sku])!.id,
                    sku: item.sku,
                    quantity: item.quantity,
                    state: 'ALLOCATED',
                    parts: new Map([...committedParts.get(item.sku)!].filter(([, quantity]) => quantity > 0)),
                  })),
                });
                break;
              }
              case 'extend': {
                if (!reservation) break;
                const expiresAt = reservation.expiresAt + 60_000;
                const code = await outcome(() =>
                  t.services.reservations.extendReservation(owner, reservation.id, expiresAt),
                );
                expect(code, label).toBe(reservation.status === 'ACTIVE' ? null : 'INVALID_STATE');
                if (code === null) reservation.expiresAt = expiresAt;
                break;
              }
              case 'remove':
              case 'expire': {
                if (!reservation) break;
                if (c.kind === 'remove') {
                  const code = await outcome(() => t.services.reservations.removeReservation(owner, reservation.id));
                  expect(code, label).toBe(reservation.status === 'ACTIVE' ? null : 'INVALID_STATE');
                } else {
                  await t.db.$executeRawUnsafe(
                    `UPDATE reservations SET expires_at = now() - interval '1 second' WHERE id = $1::uuid AND status = 'ACTIVE'`,
                    reservation.id,
                  );
                }
                // Removed or expired, its units count as available at once (released or not yet swept).
                if (reservation.status === 'ACTIVE') {
                  for (const item of reservation.items) move(item.parts, item.sku, 'reserved', 'available');
                  reservation.status = c.kind === 'remove' ? 'REMOVED' : 'EXPIRED';
                }
                break;
              }
              case 'sweep':
                await t.services.reservations.releaseExpired();
                break;
              case 'configure': {
                const order = WAREHOUSE_ORDERS[c.order]!;
                await t.services.catalog.setSalesChannelWarehouses(owner, {
                  channel_id: mw.channelId,
                  warehouse_ids: order.map((w) => warehouseIds[w]!),
                  ...(c.strategy ? { allocation_strategy: c.strategy } : {}),
                });
                channel.order = order;
                channel.strategy = c.strategy ?? channel.strategy;
                break;
              }
              case 'ship': {
                if (!order) break;
                const shipped = order.items.filter((item) => item.state === 'ALLOCATED');
                const code = await outcome(() => t.services.orders.shipOrder(owner, order.id));
                const allowed = (order.status === 'OPEN' || order.status === 'PARTIALLY_SHIPPED') && shipped.length > 0;
                expect(code, label).toBe(allowed ? null : 'INVALID_STATE');
                if (!allowed) break;
                for (const item of shipped) {
                  move(item.parts, item.sku, 'committed', null);
                  item.state = 'SHIPPED';
                  item.parts = new Map();
                }
                order.status = 'SHIPPED';
                break;
              }
              case 'cancel': {
                if (!order) break;
                const code = await outcome(() => t.services.orders.cancelOrder(owner, order.id));
                expect(code, label).toBe(order.status === 'CANCELLED' ? 'INVALID_STATE' : null);
                if (code !== null) break;
                for (const item of order.items) {
                  if (item.state === 'ALLOCATED') move(item.parts, item.sku, 'committed', 'available');
                  item.parts = new Map();
                  item.state = 'CANCELLED';
                }
                order.status = 'CANCELLED';
                break;
              }
              case 'shipPart': {
                if (!order) break;
                const item = order.items[c.item % order.items.length]!;
                const held = item.state === 'ALLOCATED' ? await allocationOrder('order_item_id', item.id) : [];
                let shippedIds: string[] = [];
                const code = await outcome(async () => {
                  shippedIds = (
                    await t.services.orders.createShipment(owner, order.id, [
                      { item_id: item.id, quantity: c.quantity },
                    ])
                  ).shippedItemIds;
                });
                const expected =
                  c.quantity > item.quantity
                    ? 'VALIDATION_ERROR'
                    : (order.status !== 'OPEN' && order.status !== 'PARTIALLY_SHIPPED') || item.state !== 'ALLOCATED'
                      ? 'INVALID_STATE'
                      : null;
                expect(code, label).toBe(expected);
                if (code !== null) break;
                // The units leave from the item's allocations in the order it holds them.
                let left = c.quantity;
                for (const allocation of held) {
                  const take = Math.min(left, allocation.quantity);
                  left -= take;
                  if (take === 0) continue;
                  move(new Map([[allocation.w, take]]), item.sku, 'committed', null);
                  item.parts.set(allocation.w, item.parts.get(allocation.w)! - take);
                  if (item.parts.get(allocation.w) === 0) item.parts.delete(allocation.w);
                }
                if (c.quantity === item.quantity) item.state = 'SHIPPED';
                else {
                  item.quantity -= c.quantity;
                  order.items.push({
                    id: shippedIds[0]!,
                    sku: item.sku,
                    quantity: c.quantity,
                    state: 'SHIPPED',
                    parts: new Map(),
                  });
                }
                order.status = order.items.some((candidate) => candidate.state === 'ALLOCATED')
                  ? 'PARTIALLY_SHIPPED'
                  : 'SHIPPED';
                break;
              }
              case 'transfer': {
                const to = (c.from + c.offset) % WAREHOUSES;
                let created: Awaited<ReturnType<typeof t.services.transfers.createTransfer>> | undefined;
                const code = await outcome(async () => {
                  created = await t.services.transfers.createTransfer(owner, {
                    from_warehouse_id: warehouseIds[c.from]!,
                    to_warehouse_id: warehouseIds[to]!,
                    items: [{ sku: skus[c.sku]!, quantity: c.quantity }],
                  });
                });
                expect(code, label).toBe(at(c.sku, c.from).available >= c.quantity ? null : 'OUT_OF_STOCK');
                if (!created) break;
                move(new Map([[c.from, c.quantity]]), c.sku, 'available', 'committed');
                transfers.push({
                  id: created.id,
                  itemId: created.items[0]!.id,
                  status: 'REQUESTED',
                  sku: c.sku,
                  from: c.from,
                  to,
                  quantity: c.quantity,
                  received: 0,
                });
                break;
              }
              case 'shipTransfer':
              case 'cancelTransfer': {
                if (!transfer) break;
                const code = await outcome(() =>
                  c.kind === 'shipTransfer'
                    ? t.services.transfers.shipTransfer(owner, transfer.id)
                    : t.services.transfers.cancelTransfer(owner, transfer.id),
                );
                expect(code, label).toBe(transfer.status === 'REQUESTED' ? null : 'INVALID_STATE');
                if (code !== null) break;
                const parts = new Map([[transfer.from, transfer.quantity]]);
                if (c.kind === 'shipTransfer') {
                  move(parts, transfer.sku, 'committed', null);
                  inTransit[transfer.sku]! += transfer.quantity;
                  transfer.status = 'SHIPPED';
                } else {
                  move(parts, transfer.sku, 'committed', 'available');
                  transfer.status = 'CANCELLED';
                }
                break;
              }
              case 'receiveTransfer': {
                if (!transfer) break;
                const open = transfer.quantity - transfer.received;
                const quantity = c.quantity ?? open;
                const code = await outcome(() =>
                  t.services.transfers.receiveTransfer(owner, transfer.id, {
                    items: c.quantity === null ? null : [{ item_id: transfer.itemId, quantity: c.quantity }],
                  }),
                );
                const receivable = transfer.status === 'SHIPPED' || transfer.status === 'PARTIALLY_RECEIVED';
                expect(code, label).toBe(receivable && quantity <= open ? null : 'INVALID_STATE');
                if (code !== null) break;
                at(transfer.sku, transfer.to).quantity += quantity;
                at(transfer.sku, transfer.to).available += quantity;
                inTransit[transfer.sku]! -= quantity;
                transfer.received += quantity;
                transfer.status = transfer.received === transfer.quantity ? 'RECEIVED' : 'PARTIALLY_RECEIVED';
                break;
              }
              case 'count': {
                const level = at(c.sku, c.warehouse);
                const [line] = await t.db.$queryRawUnsafe<{ id: string; quantity: number; expired: number }[]>(
                  `SELECT id, quantity::int AS quantity,
                          (SELECT coalesce(sum(a.quantity), 0)::int FROM stock_allocations a
                             JOIN reservations r ON r.tenant_id = a.tenant_id AND r.id = a.reservation_id
                            WHERE r.status = 'ACTIVE' AND r.expires_at <= now() AND a.tenant_id = i.tenant_id
                              AND a.product_id = i.product_id AND a.warehouse_id = i.warehouse_id) AS expired
                     FROM inventory_items i
                    WHERE tenant_id = $1::uuid AND product_id = $2::uuid AND warehouse_id = $3::uuid AND state = 'AVAILABLE'`,
                  mw.tenant.id,
                  productIds[c.sku],
                  warehouseIds[c.warehouse],
                );
                if (!line) break;
                // One AVAILABLE line per SKU and warehouse here: it holds what is available but for the
                // units of expired reservations not released yet (available already, still on their lines).
                expect(line.quantity + line.expired, label).toBe(level.available);
                const expected = line.quantity + (c.stale ? 1 : 0);
                // Through GraphQL's service (`change_from_quantity`) or REST (`expectedQuantity`, a 409 when stale).
                const code = c.rest
                  ? await (async () => {
                      const response = await t.rest.patch('/api/inventory/items', {
                        token: mw.tenant.key,
                        body: { data: [{ id: line.id, quantity: c.quantity, expectedQuantity: expected }] },
                      });
                      expect([200, 409], response.rawBody).toContain(response.status);
                      return response.status === 409 ? 'CONFLICT' : null;
                    })()
                  : await outcome(() =>
                      t.services.stock.setQuantities(owner, [
                        { item_id: line.id, quantity: c.quantity, change_from_quantity: expected },
                      ]),
                    );
                expect(code, label).toBe(c.stale ? 'CONFLICT' : null);
                if (code !== null) break;
                level.quantity += c.quantity - line.quantity;
                level.available += c.quantity - line.quantity;
                break;
              }
            }

            // Levels per SKU and warehouse as `inventory` reports them, and per group (position).
            const page = await t.services.stock.inventory(owner, { filters: { sku: skus } }, { size: 100 });
            const actual = skus.map(() =>
              warehouseIds.map(() => ({ quantity: 0, available: 0, committed: 0, reserved: 0 })),
            );
            for (const group of page.items) {
              expect(group.quantity, label).toBe(
                group.quantityAvailable + group.quantityCommitted + group.quantityReserved + group.quantityUnavailable,
              );
              expect(group.quantityUnavailable + group.quantityExpected, label).toBe(0);
              for (const value of [
                group.quantity,
                group.quantityAvailable,
                group.quantityCommitted,
                group.quantityReserved,
              ])
                expect(value, label).toBeGreaterThanOrEqual(0);
              const sum = actual[skuOf.get(group.productId)!]![warehouseIndex.get(group.warehouseId!)!]!;
              sum.quantity += group.quantity;
              sum.available += group.quantityAvailable;
              sum.committed += group.quantityCommitted;
              sum.reserved += group.quantityReserved;
            }
            expect(actual, label).toEqual(levels);

            // In transit: shipped and not yet received, per SKU.
            const transit = await t.db.$queryRawUnsafe<{ product_id: string; units: number }[]>(
              `SELECT i.product_id, sum(i.quantity - i.received_quantity)::int AS units
                 FROM transfer_items i JOIN transfers r ON r.tenant_id = i.tenant_id AND r.id = i.transfer_id
                WHERE i.tenant_id = $1::uuid AND i.product_id = ANY($2::uuid[]) AND r.status IN ('SHIPPED', 'PARTIALLY_RECEIVED')
                GROUP BY 1`,
              mw.tenant.id,
              productIds,
            );
            const actualTransit = skus.map(() => 0);
            for (const row of transit) actualTransit[skuOf.get(row.product_id)!] = row.units;
            expect(actualTransit, label).toEqual(inTransit);
            // Transfers conserve units: on hand over the warehouses plus in transit.
            if (['transfer', 'shipTransfer', 'cancelTransfer', 'receiveTransfer'].includes(c.kind)) {
              expect(
                skus.map((_, s) => at(s, 0).quantity + at(s, 1).quantity + at(s, 2).quantity + actualTransit[s]!),
                label,
              ).toEqual(onHandBefore);
            }

            // Every holder's units per warehouse are where the model put them.
            const held = await t.db.$queryRawUnsafe<
              { holder: string; product_id: string; warehouse_id: string; state: string; units: number }[]
            >(
              `SELECT coalesce(reservation_id, order_item_id, transfer_item_id) AS holder, product_id, warehouse_id,
                      state::text, sum(quantity)::int AS units
                 FROM stock_allocations WHERE tenant_id = $1::uuid AND product_id = ANY($2::uuid[]) GROUP BY 1, 2, 3, 4`,
              mw.tenant.id,
              productIds,
            );
            const expired = new Set(reservations.filter((r) => r.status === 'EXPIRED').map((r) => r.id));
            const describeHolding = (holder: string, s: number, w: number, state: string, quantity: number) =>
              `${holder} ${s}@${w} ${state} ${quantity}`;
            const expectedHoldings = [
              ...reservations
                .filter((r) => r.status === 'ACTIVE')
                .flatMap((r) =>
                  r.items.flatMap((item) =>
                    [...item.parts].map(([w, q]) => describeHolding(r.id, item.sku, w, 'RESERVED', q)),
                  ),
                ),
              ...orders.flatMap((o) =>
                o.items
                  .filter((item) => item.state === 'ALLOCATED')
                  .flatMap((item) =>
                    [...item.parts].map(([w, q]) => describeHolding(item.id, item.sku, w, 'COMMITTED', q)),
                  ),
              ),
              ...transfers
                .filter((transfer) => transfer.status === 'REQUESTED')
                .map((transfer) =>
                  describeHolding(transfer.itemId, transfer.sku, transfer.from, 'COMMITTED', transfer.quantity),
                ),
            ].sort();
            expect(
              held
                // An expired reservation holds its units until released: they count as available meanwhile.
                .filter((row) => !expired.has(row.holder))
                .map((row) =>
                  describeHolding(
                    row.holder,
                    skuOf.get(row.product_id)!,
                    warehouseIndex.get(row.warehouse_id)!,
                    row.state,
                    row.units,
                  ),
                )
                .sort(),
              label,
            ).toEqual(expectedHoldings);

            // The ledger explains every change: per SKU and warehouse its deltas sum to the on-hand quantity.
            const ledger = await t.db.$queryRawUnsafe<
              { product_id: string; warehouse_id: string; total: number; latest: number }[]
            >(
              `SELECT product_id, warehouse_id, sum(delta)::int AS total,
                      (array_agg(new_quantity ORDER BY sequence DESC))[1]::int AS latest
                 FROM stock_mutations WHERE tenant_id = $1::uuid AND product_id = ANY($2::uuid[]) GROUP BY 1, 2`,
              mw.tenant.id,
              productIds,
            );
            const explained = skus.map(() => warehouseIds.map(() => 0));
            for (const row of ledger) {
              expect(row.latest, label).toBe(row.total);
              explained[skuOf.get(row.product_id)!]![warehouseIndex.get(row.warehouse_id)!] = row.total;
            }
            expect(explained, label).toEqual(levels.map((perWarehouse) => perWarehouse.map((level) => level.quantity)));
          }
        },
      ),
      { numRuns: 200 },
    );
    await expectStockInvariants(t, mw.tenant.id);
  });
});
