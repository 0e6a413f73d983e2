/**
 * Channel broadcasts: each stock mutation's new quantity is POSTed, signed, to every channel with
 * a webhook, from an outbox written with the mutation. Real receivers on 127.0.0.1: one accepts,
 * one fails, one never answers, one is down.
 */
import { createHmac } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { BroadcastService } from '../../src/modules/broadcasts/broadcasts.service';
import { startTestApp } from '../helpers/app';
import { sql } from '../helpers/db';
import { downUrl, receiver, startBroadcastApp, until } from './broadcasts.fixtures';
import { addStock, createStockWorld, type StockWorld } from './orders.fixtures';
import { graphqlData, graphqlError } from './stock.fixtures';

const t = await startBroadcastApp();
let world: StockWorld;
const SECRET = 'channel-secret-0123456789';

async function createChannel(name: string) {
  const data = await graphqlData(
    t,
    world.tenant.key,
    `mutation($input: CreateSalesChannelInput!) { createSalesChannel(input: $input) { sales_channel { id } } }`,
    { input: { name } },
  );
  return data.createSalesChannel.sales_channel.id as string;
}

const setWebhook = (channelId: string, url: string) =>
  graphqlData(
    t,
    world.tenant.key,
    `mutation($input: SetSalesChannelWebhookInput!) { setSalesChannelWebhook(input: $input) { channel_id url } }`,
    {
      input: { channel_id: channelId, url, secret: SECRET },
    },
  );

async function mutationsOf(sku: string) {
  const data = await graphqlData(
    t,
    world.tenant.key,
    `query($q: QueryFilter) { stockMutations(query: $q, first: 50) { edges { node {
    id status new_quantity messages { channel_id status message delivery_id attempts created_at } } } } }`,
    { q: `sku=${sku}` },
  );
  return data.stockMutations.edges.map((e: { node: any }) => e.node);
}

beforeAll(async () => {
  world = await createStockWorld(t, 'Broadcast tenant', 3);
});

describe('channel broadcasts', () => {
  it('without webhooks a mutation is PROCESSED at once with no messages', async () => {
    await addStock(t, world, 'SKU-1', 2);
    const [mutation] = await mutationsOf('SKU-1');
    expect(mutation).toMatchObject({ status: 'PROCESSED', messages: [] });
  });

  it('posts signed deliveries; FAILING after bounded retries when a channel fails, times out or is down; retry once fixed', async () => {
    let failingAnswer = 500;
    const accepting = await receiver(() => 200);
    const failing = await receiver(() => failingAnswer);
    const silent = await receiver(() => undefined);
    const channels = {
      accepting: await createChannel('Accepting'),
      failing: await createChannel('Failing'),
      silent: await createChannel('Silent'),
      down: await createChannel('Down'),
    };
    await setWebhook(channels.accepting, accepting.url);
    await setWebhook(channels.failing, failing.url);
    await setWebhook(channels.silent, silent.url);
    await setWebhook(channels.down, await downUrl());

    await addStock(t, world, 'SKU-2', 7);
    const [mutation] = await until(
      () => mutationsOf('SKU-2'),
      (m) => m[0]?.status === 'FAILING',
    );
    expect(mutation.status).toBe('FAILING');
    const byChannel = Object.fromEntries(mutation.messages.map((m: { channel_id: string }) => [m.channel_id, m]));
    expect(byChannel[channels.accepting]).toMatchObject({ status: 'PROCESSED', message: 'HTTP 200', attempts: 1 });
    expect(byChannel[channels.failing]).toMatchObject({ status: 'FAILING', attempts: 3 });
    expect(byChannel[channels.failing].message).toContain('HTTP 500');
    expect(byChannel[channels.silent]).toMatchObject({
      status: 'FAILING',
      attempts: 3,
      message: 'no answer within 300 ms',
    });
    expect(byChannel[channels.down]).toMatchObject({ status: 'FAILING', attempts: 3 });
    expect(byChannel[channels.down].message).toContain('not reachable');

    // The accepting channel got one signed delivery with the new quantity.
    expect(accepting.received).toHaveLength(1);
    const [delivery] = accepting.received;
    const body = JSON.parse(delivery!.body);
    expect(body).toMatchObject({
      type: 'stock.mutation',
      stock_mutation_id: mutation.id,
      channel_id: channels.accepting,
      sku: 'SKU-2',
      new_quantity: 7,
      delta: 7,
      source: 'REGISTER',
    });
    expect(delivery!.headers['x-delivery-id']).toBe(body.delivery_id);
    expect(delivery!.headers['x-delivery-id']).toBe(byChannel[channels.accepting].delivery_id);
    expect(delivery!.headers['x-signature-256']).toBe(
      `sha256=${createHmac('sha256', SECRET).update(delivery!.body).digest('hex')}`,
    );
    // The failing channel saw the same delivery id on every attempt.
    expect(failing.received).toHaveLength(3);
    expect(new Set(failing.received.map((r) => r.headers['x-delivery-id']))).toEqual(
      new Set([byChannel[channels.failing].delivery_id]),
    );

    // Fix the failing channel, drop the two broken ones, and retry.
    failingAnswer = 204;
    for (const id of [channels.silent, channels.down]) {
      await graphqlData(
        t,
        world.tenant.key,
        `mutation($input: RemoveSalesChannelWebhookInput!) { removeSalesChannelWebhook(input: $input) { channel_id } }`,
        { input: { channel_id: id } },
      );
    }
    await graphqlError(
      t,
      world.tenant.key,
      'INVALID_STATE',
      `mutation($input: RetryStockMutationInput!) { retryStockMutation(input: $input) { id } }`,
      {
        input: { id: (await mutationsOf('SKU-1'))[0].id },
      },
    );
    await graphqlData(
      t,
      world.tenant.key,
      `mutation($input: RetryStockMutationInput!) { retryStockMutation(input: $input) { id } }`,
      { input: { id: mutation.id } },
    );
    // The removed channels' undelivered messages are dropped; the fixed channel accepts the retry.
    const [retried] = await until(
      () => mutationsOf('SKU-2'),
      (m) => m[0].status === 'PROCESSED',
    );
    expect(retried.status).toBe('PROCESSED');
    expect(retried.messages.map((x: { channel_id: string }) => x.channel_id).sort()).toEqual(
      [channels.accepting, channels.failing].sort(),
    );
    expect(retried.messages.find((x: { channel_id: string }) => x.channel_id === channels.failing)).toMatchObject({
      status: 'PROCESSED',
      message: 'HTTP 204',
    });
    expect(accepting.received).toHaveLength(1);
  });

  it('delivers each delivery once at a time even with several workers running', async () => {
    await sql(t.databaseUrl, 'DELETE FROM channel_webhooks WHERE tenant_id = $1', [world.tenant.id]);
    const accepting = await receiver(() => 200);
    await setWebhook(await createChannel('Busy'), accepting.url);
    for (let i = 0; i < 10; i += 1) await addStock(t, world, 'SKU-3', 1, { batchNumber: `B${i}` });
    const others = [0, 1, 2].map(() => new BroadcastService(t.db, t.config.broadcasts));
    await Promise.all(others.map((worker) => worker.deliverDue()));
    const mutations = await until(
      () => mutationsOf('SKU-3'),
      (m) => m.every((x: { status: string }) => x.status === 'PROCESSED'),
    );
    expect(mutations.map((m: { status: string }) => m.status)).toEqual(Array(10).fill('PROCESSED'));
    const ids = accepting.received.map((r) => r.headers['x-delivery-id']);
    expect(ids).toHaveLength(10);
    expect(new Set(ids).size).toBe(10);
    expect(accepting.received.map((r) => JSON.parse(r.body).new_quantity).sort((a, b) => a - b)).toEqual([
      1, 2, 3, 4, 5, 6, 7, 8, 9, 10,
    ]);
  });

  it('validates webhooks and changes nothing on bad input', async () => {
    const channelId = await createChannel('Invalid');
    const before = await sql(t.databaseUrl, 'SELECT * FROM channel_webhooks WHERE tenant_id = $1 ORDER BY channel_id', [
      world.tenant.id,
    ]);
    const bad = (input: Record<string, unknown>) =>
      graphqlError(
        t,
        world.tenant.key,
        'VALIDATION_ERROR',
        `mutation($input: SetSalesChannelWebhookInput!) { setSalesChannelWebhook(input: $input) { url } }`,
        { input },
      );
    expect((await bad({ channel_id: channelId, url: 'ftp://example.com', secret: SECRET })).extensions?.field).toBe(
      'input.url',
    );
    expect((await bad({ channel_id: channelId, url: 'http://example.com', secret: 'short' })).extensions?.field).toBe(
      'input.secret',
    );
    await graphqlError(
      t,
      world.tenant.key,
      'NOT_FOUND',
      `mutation($input: SetSalesChannelWebhookInput!) { setSalesChannelWebhook(input: $input) { url } }`,
      {
        input: { channel_id: '0190f5b4-1c5e-7000-8000-000000000abc', url: 'http://example.com', secret: SECRET },
      },
    );
    expect(
      await sql(t.databaseUrl, 'SELECT * FROM channel_webhooks WHERE tenant_id = $1 ORDER BY channel_id', [
        world.tenant.id,
      ]),
    ).toEqual(before);
  });
});

describe('webhooks on private addresses', () => {
  it('are refused by default: the service never connects to them, and the delivery fails at once naming BROADCAST_ALLOW_PRIVATE_WEBHOOKS', async () => {
    const strict = await startTestApp();
    const strictWorld = await createStockWorld(strict, 'Strict broadcast tenant', 1);
    const target = await receiver(() => 200);
    await graphqlData(
      strict,
      strictWorld.tenant.key,
      `mutation($input: SetSalesChannelWebhookInput!) { setSalesChannelWebhook(input: $input) { url } }`,
      {
        input: { channel_id: strictWorld.channelId, url: target.url, secret: SECRET },
      },
    );
    await addStock(strict, strictWorld, 'SKU-1', 1);
    const read = async () =>
      (
        await graphqlData(
          strict,
          strictWorld.tenant.key,
          `{ stockMutations(first: 1) { edges { node { status messages { status message attempts } } } } }`,
        )
      ).stockMutations.edges[0]!.node;
    // Refused before anything was sent: FAILING after its first attempt, however many attempts are allowed.
    const node = await until(read, (n) => n.status !== 'PENDING');
    expect(node.status).toBe('FAILING');
    expect(node.messages).toHaveLength(1);
    expect(node.messages[0]).toMatchObject({ status: 'FAILING', attempts: 1 });
    expect(node.messages[0]!.message).toContain('refused, not sent');
    expect(node.messages[0]!.message).toContain('127.0.0.1');
    expect(node.messages[0]!.message).toContain('set BROADCAST_ALLOW_PRIVATE_WEBHOOKS=true');
    expect(node.messages[0]!.message).not.toContain('EDGE_ALLOW_PRIVATE_ORIGINS');
    const [row] = await sql(strict.databaseUrl, 'SELECT status::text, attempts, claimed_until FROM stock_broadcasts');
    expect(row).toMatchObject({ status: 'FAILING', attempts: 1, claimed_until: null });
    expect(target.received).toEqual([]);
  });
});
