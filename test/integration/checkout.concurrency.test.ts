/**
 * Checkouts under load and failure: 200 concurrent buyers of the last 10 units make exactly 10
 * orders (every other checkout says out of stock on its line, the levels are exact), and a
 * process killed with SIGKILL during completions leaves no order without its stock and no stock
 * held for a checkout that no longer holds it.
 */
import { describe, expect, it } from 'vitest';
import { startTestApp, TEST_MASTER_KEY } from '../helpers/app';
import { sql } from '../helpers/db';
import { callService, startServiceProcess, temporaryDir } from '../helpers/service-process';
import { checkoutCall, COMPLETE, CREATE, createCheckoutWorld, GET } from './checkout.fixtures';
import { expectStockInvariants, levels } from './orders.fixtures';
import { graphql, graphqlData } from './stock.fixtures';

const t = await startTestApp();

const buyer = (n: number) => ({ email: `buyer${n}@example.com`, full_name: `Buyer ${n}` });
const destination = { country: 'FR' };

/** Active holds whose checkout does not name them as held, or is no longer open. */
const strayHolds = (tenantId: string) =>
  sql(
    t.databaseUrl,
    `SELECT r.id, r.notes FROM reservations r
      WHERE r.tenant_id = $1 AND r.status = 'ACTIVE' AND r.notes LIKE 'checkout %'
        AND NOT EXISTS (
          SELECT 1 FROM checkouts c, jsonb_array_elements(c.lines) AS line
           WHERE c.tenant_id = r.tenant_id AND r.notes = 'checkout ' || c.id
             AND c.status IN ('incomplete', 'ready_for_complete', 'complete_in_progress')
             AND line->>'holdId' = r.id::text)`,
    [tenantId],
  );

/** Orders placed from checkouts whose items hold fewer committed units than they sell. */
const ordersWithoutStock = (tenantId: string) =>
  sql(
    t.databaseUrl,
    `SELECT o.id FROM orders o JOIN order_items i ON i.tenant_id = o.tenant_id AND i.order_id = o.id
      WHERE o.tenant_id = $1 AND o.checkout_id IS NOT NULL
        AND i.quantity > (SELECT coalesce(sum(a.quantity), 0) FROM stock_allocations a
                           WHERE a.tenant_id = i.tenant_id AND a.order_item_id = i.id)`,
    [tenantId],
  );

describe('200 concurrent buyers of the last 10 units', () => {
  it('make exactly 10 orders; every other checkout is out of stock on its line; the levels are exact', async () => {
    const world = await createCheckoutWorld(t, 'Rush tenant', { 'SKU-1': 10 });
    const buyers = Array.from({ length: 200 }, (_, n) => n);
    const outcomes = await Promise.all(
      buyers.map(async (n) => {
        const created = await graphql(t, world.tenant.key, CREATE, {
          input: {
            business_id: world.catalog.businessId,
            channel_id: world.channelId,
            line_items: [{ sku: 'SKU-1', quantity: 1 }],
            buyer: buyer(n),
            destination,
            payment: { handler: 'manual' },
          },
        });
        expect(created.body.errors, created.rawBody).toBeUndefined();
        const checkout = created.body.data!.createCheckout.checkout;
        const completed = await graphql(t, world.tenant.key, COMPLETE, { input: { id: checkout.id } });
        return { checkout, completed };
      }),
    );
    const done = outcomes.filter((outcome) => !outcome.completed.body.errors);
    expect(done).toHaveLength(10);
    for (const { completed } of done) expect(completed.body.data!.completeCheckout.checkout.status).toBe('completed');
    for (const { checkout, completed } of outcomes.filter((outcome) => outcome.completed.body.errors)) {
      expect(checkout.status).toBe('incomplete');
      expect(checkout.messages).toEqual([
        expect.objectContaining({ code: 'out_of_stock', path: '$.line_items[0].quantity', severity: 'recoverable' }),
      ]);
      expect(completed.body.errors![0]!.extensions).toMatchObject({ code: 'INVALID_STATE' });
    }
    const [orders] = await sql(t.databaseUrl, 'SELECT count(*)::int AS n FROM orders WHERE tenant_id = $1', [
      world.tenant.id,
    ]);
    expect(orders).toEqual({ n: 10 });
    expect(await levels(t, world, 'SKU-1')).toMatchObject({ quantity: 10, available: 0, reserved: 0, committed: 10 });
    expect(await strayHolds(world.tenant.id)).toEqual([]);
    expect(await ordersWithoutStock(world.tenant.id)).toEqual([]);
    await expectStockInvariants(t, world.tenant.id);
  }, 120_000);

  it('a checkout completed twice at once makes one order', async () => {
    const world = await createCheckoutWorld(t, 'Twice tenant', { 'SKU-1': 5 });
    const checkout = await checkoutCall(t, world.tenant.key, CREATE, {
      business_id: world.catalog.businessId,
      channel_id: world.channelId,
      line_items: [{ sku: 'SKU-1', quantity: 2 }],
      buyer: buyer(1),
      destination,
      payment: { handler: 'manual' },
    });
    const answers = await Promise.all(
      Array.from({ length: 5 }, () => graphql(t, world.tenant.key, COMPLETE, { input: { id: checkout.id } })),
    );
    expect(answers.filter((answer) => !answer.body.errors)).toHaveLength(1);
    const [orders] = await sql(t.databaseUrl, 'SELECT count(*)::int AS n FROM orders WHERE tenant_id = $1', [
      world.tenant.id,
    ]);
    expect(orders).toEqual({ n: 1 });
    expect(await levels(t, world, 'SKU-1')).toMatchObject({ available: 3, reserved: 0, committed: 2 });
  });
});

describe('a process killed during completions', () => {
  it('leaves no order without its stock and no stock held for a checkout that does not hold it', async () => {
    const world = await createCheckoutWorld(t, 'Crash tenant', { 'SKU-1': 40 });
    const checkouts = [];
    for (let n = 0; n < 40; n++) {
      checkouts.push(
        await checkoutCall(t, world.tenant.key, CREATE, {
          business_id: world.catalog.businessId,
          channel_id: world.channelId,
          line_items: [{ sku: 'SKU-1', quantity: 1 }],
          buyer: buyer(n),
          destination,
          payment: { handler: 'manual' },
        }),
      );
    }
    const service = await startServiceProcess({
      DATABASE_URL: t.databaseUrl,
      MASTER_KEY: TEST_MASTER_KEY,
      DATA_DIR: temporaryDir('commerce-checkout-crash-'),
    });
    expect(service.child.exitCode, service.output()).toBeNull();
    const calls = checkouts.map((checkout) =>
      callService(service, 'POST', '/graphql', {
        token: world.tenant.key,
        body: { query: COMPLETE, variables: { input: { id: checkout.id } } },
      }).catch(() => null),
    );
    // Let some completions commit, then kill the process in the middle of the others.
    const first = await Promise.race(calls);
    expect(first).not.toBeNull();
    service.child.kill('SIGKILL');
    await service.exited;
    await Promise.all(calls);
    expect(await ordersWithoutStock(world.tenant.id)).toEqual([]);
    expect(await strayHolds(world.tenant.id)).toEqual([]);
    await expectStockInvariants(t, world.tenant.id);
    // A completion cut off before its transaction committed placed nothing: once it is stale, a
    // read sends it back and it completes.
    await sql(
      t.databaseUrl,
      `UPDATE checkouts SET updated_at = now() - interval '1 hour' WHERE tenant_id = $1 AND status = 'complete_in_progress'`,
      [world.tenant.id],
    );
    for (const checkout of checkouts) {
      const read = (await graphqlData(t, world.tenant.key, GET, { id: checkout.id })).checkout;
      if (read.status !== 'completed') {
        expect(read.status).toBe('ready_for_complete');
        await checkoutCall(t, world.tenant.key, COMPLETE, { id: checkout.id });
      }
    }
    const [orders] = await sql(t.databaseUrl, 'SELECT count(*)::int AS n FROM orders WHERE tenant_id = $1', [
      world.tenant.id,
    ]);
    expect(orders).toEqual({ n: 40 });
    expect(await levels(t, world, 'SKU-1')).toMatchObject({ available: 0, reserved: 0, committed: 40 });
    await expectStockInvariants(t, world.tenant.id);
  }, 120_000);
});
