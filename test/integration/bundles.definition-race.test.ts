/**
 * A bundle's definition and the writes that read it: a stock write reads whether a SKU is a bundle,
 * and of what, under the definition's shared lock and keeps it to its commit, and
 * `setBundleComponents` takes it exclusive. A definition changed while a write of the bundle waits
 * for its components' stock locks therefore applies after the write, and a write that arrives while
 * a definition is being changed reads the new one. Two connections on the real database.
 */
import pg from 'pg';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startTestApp } from '../helpers/app';
import { sql } from '../helpers/db';
import { addStock, createStockWorld, expectStockInvariants, levels, type StockWorld } from './orders.fixtures';
import { graphql, graphqlData } from './stock.fixtures';

const t = await startTestApp();
let world: StockWorld;
let kitId: string;
let blocker: pg.Client | undefined;

const located = (items: { sku: string; quantity: number }[]) => ({
  business_id: world.catalog.businessId,
  warehouse_id: world.warehouseId,
  channel_id: world.channelId,
  items,
});
const RESERVE = `mutation($input: CreateReservationInput!) { createReservation(input: $input) { reservation { id } } }`;
const ORDER = `mutation($input: CreateOrderInput!) { createOrder(input: $input) { order { id } } }`;
const SET = `mutation($input: SetBundleComponentsInput!) { setBundleComponents(input: $input) { product { id } } }`;

const reserveKit = (quantity: number) =>
  graphql(t, world.tenant.key, RESERVE, {
    input: { ...located([{ sku: 'KIT', quantity }]), customer: { name: 'Ada' }, expires_at: Date.now() + 3_600_000 },
  });
const orderKit = (quantity: number) =>
  graphql(t, world.tenant.key, ORDER, { input: located([{ sku: 'KIT', quantity }]) });
const setKit = (sku: string) =>
  graphql(t, world.tenant.key, SET, { input: { sku: 'KIT', components: [{ sku, quantity: 1 }] } });

/** Opens a transaction on another connection that runs `statement` and holds what it locked until `release`. */
async function hold(statement: string, values: unknown[]) {
  blocker = new pg.Client({ connectionString: t.databaseUrl });
  await blocker.connect();
  await blocker.query('BEGIN');
  await blocker.query(statement, values);
  const pid = (blocker as unknown as { processID: number }).processID;
  return {
    client: blocker,
    /** Backends other than the holder waiting on an advisory lock. */
    waiting: async () =>
      (
        await sql<{ pid: number }>(
          t.databaseUrl,
          `SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' AND wait_event = 'advisory' AND pid <> $1`,
          [pid],
        )
      ).length,
    end: async (how: 'COMMIT' | 'ROLLBACK') => {
      await blocker!.query(how);
      await blocker!.end();
      blocker = undefined;
    },
  };
}

/** The stock lock of a SKU at the warehouse, held from another connection. */
const holdStockLock = (sku: string) =>
  hold('SELECT stock_lock($1, ARRAY[$2]::uuid[], ARRAY[$3]::uuid[])', [
    world.tenant.id,
    world.catalog.productIds.get(sku)!,
    world.warehouseId,
  ]);

/** Polls `read` until `done` holds of its value (at most ~5 s). */
async function until<T>(read: () => Promise<T>, done: (value: T) => boolean): Promise<T> {
  let value = await read();
  for (let attempt = 0; attempt < 200 && !done(value); attempt += 1) {
    await new Promise((resolve) => setTimeout(resolve, 25));
    value = await read();
  }
  return value;
}

/** Runs `request`, recording `name` in `finished` when it answers. */
const tracked = <T>(finished: string[], name: string, request: Promise<T>) =>
  request.then((value) => {
    finished.push(name);
    return value;
  });

const ok = (response: Awaited<ReturnType<typeof graphql>>) => {
  expect(response.body.errors, response.rawBody).toBeUndefined();
};

beforeEach(async () => {
  world = await createStockWorld(t, `Bundle race tenant ${Math.random()}`, 2);
  await addStock(t, world, 'SKU-1', 10);
  await addStock(t, world, 'SKU-2', 10);
  const created = await graphqlData(
    t,
    world.tenant.key,
    `mutation($input: CreateProductInput!) { createProduct(input: $input) { product { id } } }`,
    { input: { sku: 'KIT', name: 'Kit' } },
  );
  kitId = created.createProduct.product.id;
  ok(await setKit('SKU-1'));
});

afterEach(async () => {
  if (blocker) {
    await blocker.query('ROLLBACK').catch(() => undefined);
    await blocker.end();
    blocker = undefined;
  }
});

describe('a bundle definition changed while a write of the bundle waits for its components’ locks', () => {
  it.each([
    ['a reservation (the batched path)', reserveKit],
    ['an order (the general path)', orderKit],
  ])('applies after %s, which holds the components it read', async (_name, write) => {
    const lock = await holdStockLock('SKU-1');
    const finished: string[] = [];
    const written = tracked(finished, 'write', write(2));
    // The write read KIT = SKU-1 and waits for SKU-1's stock lock.
    expect(await until(lock.waiting, (n) => n >= 1)).toBe(1);
    const defined = tracked(finished, 'definition', setKit('SKU-2'));
    // The definition waits for the write's shared definition lock.
    expect(await until(lock.waiting, (n) => n >= 2)).toBe(2);
    expect(finished).toEqual([]);
    await lock.end('ROLLBACK');
    ok(await written);
    ok(await defined);
    expect(finished).toEqual(['write', 'definition']);

    // The write holds 2 of SKU-1, the component it read; KIT is now made of SKU-2.
    const sku1 = await levels(t, world, 'SKU-1');
    const sku2 = await levels(t, world, 'SKU-2');
    expect(sku1.reserved + sku1.committed).toBe(2);
    expect(sku2.reserved + sku2.committed).toBe(0);
    expect(await levels(t, world, 'KIT')).toMatchObject({ available: 10 });
    await expectStockInvariants(t, world.tenant.id);
  });
});

describe('a write of a bundle that arrives while its definition is being changed', () => {
  it.each([
    ['a reservation (the batched path)', reserveKit],
    ['an order (the general path)', orderKit],
  ])('waits, and %s takes the components of the new definition', async (_name, write) => {
    // Another transaction changes KIT from SKU-1 to SKU-2 under the definition's exclusive lock.
    const definition = await hold('SELECT bundle_definition_lock($1, ARRAY[$2]::uuid[], true)', [
      world.tenant.id,
      kitId,
    ]);
    await definition.client.query(
      'UPDATE bundle_components SET component_id = $1 WHERE tenant_id = $2 AND bundle_id = $3',
      [world.catalog.productIds.get('SKU-2')!, world.tenant.id, kitId],
    );
    const written = write(3);
    expect(await until(definition.waiting, (n) => n >= 1)).toBe(1);
    await definition.end('COMMIT');
    ok(await written);

    const sku1 = await levels(t, world, 'SKU-1');
    const sku2 = await levels(t, world, 'SKU-2');
    expect(sku1.reserved + sku1.committed).toBe(0);
    expect(sku2.reserved + sku2.committed).toBe(3);
    await expectStockInvariants(t, world.tenant.id);
  });
});
