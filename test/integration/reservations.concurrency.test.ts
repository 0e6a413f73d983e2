/**
 * Many reservations at once on a hot SKU: never oversold, never lost, and no deadlock when
 * reservations name the same SKUs in different orders.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { startTestApp } from '../helpers/app';
import { sql } from '../helpers/db';
import { addStock, createStockWorld, expectStockInvariants, levels, type StockWorld } from './orders.fixtures';
import { graphql } from './stock.fixtures';

const t = await startTestApp();
let world: StockWorld;

const CREATE = `mutation($input: CreateReservationInput!) { createReservation(input: $input) { reservation { id } } }`;

const input = (items: { sku: string; quantity: number }[]) => ({
  business_id: world.catalog.businessId,
  warehouse_id: world.warehouseId,
  channel_id: world.channelId,
  customer: { name: 'Client' },
  items,
  expires_at: Date.now() + 3_600_000,
});

beforeAll(async () => {
  world = await createStockWorld(t, 'Hot SKU tenant', 3);
  await addStock(t, world, 'SKU-1', 1000);
  await addStock(t, world, 'SKU-2', 300);
  await addStock(t, world, 'SKU-3', 300, { position: 'A-01' });
});

describe('a hot SKU', () => {
  it(
    '50 clients x 100 reservations of 1 unit against 1000 available: exactly 1000 succeed, the rest are out of stock',
    { timeout: 120_000 },
    async () => {
      const outcomes: string[] = [];
      const client = async () => {
        for (let request = 0; request < 100; request += 1) {
          const response = await graphql(t, world.tenant.key, CREATE, {
            input: input([{ sku: 'SKU-1', quantity: 1 }]),
          });
          const error = response.body.errors?.[0];
          if (!error) outcomes.push('ok');
          else
            outcomes.push(
              `${error.extensions?.code}:${error.message.includes('out of stock') ? 'out of stock' : error.message}`,
            );
        }
      };
      await Promise.all(Array.from({ length: 50 }, client));
      const counts = outcomes.reduce<Record<string, number>>(
        (acc, outcome) => ({ ...acc, [outcome]: (acc[outcome] ?? 0) + 1 }),
        {},
      );
      expect(counts).toEqual({ ok: 1000, 'OUT_OF_STOCK:out of stock': 4000 });
      expect(await levels(t, world, 'SKU-1')).toMatchObject({ quantity: 1000, available: 0, reserved: 1000 });
      const [count] = await sql<{ n: string }>(
        t.databaseUrl,
        `SELECT count(*)::text AS n FROM reservations WHERE tenant_id = $1`,
        [world.tenant.id],
      );
      expect(count!.n).toBe('1000');
      await expectStockInvariants(t, world.tenant.id);
    },
  );

  it('does not deadlock when reservations name the same SKUs in different orders', { timeout: 60_000 }, async () => {
    const orders = [
      [
        { sku: 'SKU-2', quantity: 1 },
        { sku: 'SKU-3', quantity: 1 },
      ],
      [
        { sku: 'SKU-3', quantity: 1 },
        { sku: 'SKU-2', quantity: 1 },
      ],
    ];
    const responses = await Promise.all(
      Array.from({ length: 200 }, (_, i) => graphql(t, world.tenant.key, CREATE, { input: input(orders[i % 2]!) })),
    );
    expect(responses.filter((r) => r.body.errors).map((r) => r.rawBody)).toEqual([]);
    expect(await levels(t, world, 'SKU-2')).toMatchObject({ available: 100, reserved: 200 });
    expect(await levels(t, world, 'SKU-3')).toMatchObject({ available: 100, reserved: 200 });
    await expectStockInvariants(t, world.tenant.id);
  });
});
