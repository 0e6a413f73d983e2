/**
 * `POST /mcp` driven by the official MCP client over Streamable HTTP, against the application
 * listening on a port: the operations' list, each stock operation, domain errors as `isError`
 * results, invalid arguments as -32602, and the tenant's boundary.
 */
import type { AddressInfo } from 'node:net';
import { Client, ProtocolError, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { beforeAll, describe, expect, it } from 'vitest';
import { stockTools } from '../../src/modules/mcp/stock-tools';
import { createKey, startTestApp } from '../helpers/app';
import { graphqlData } from './stock.fixtures';
import { addStock, createStockWorld, type StockWorld } from './orders.fixtures';

const t = await startTestApp();
await t.app.listen({ host: '127.0.0.1', port: 0 });
const base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;

let world: StockWorld;
let other: StockWorld;

export const MODERN = { pin: '2026-07-28' } as const;

/** A client of `/mcp` with the bearer `token`, on the 2026-07-28 revision unless `legacy`. */
async function connect(token: string, options: { legacy?: boolean; fetch?: typeof fetch } = {}) {
  const client = new Client(
    { name: 'mcp-test', version: '1.0.0' },
    { versionNegotiation: { mode: options.legacy ? 'legacy' : MODERN } },
  );
  const transport = new StreamableHTTPClientTransport(new URL(`${base}/mcp`), {
    requestInit: { headers: { authorization: `Bearer ${token}` } },
    ...(options.fetch ? { fetch: options.fetch } : {}),
  });
  await client.connect(transport);
  return client;
}

const outputOf = (name: string) => stockTools.find((tool) => tool.name === name)!.output;

/** Calls an operation and checks its structured content against the operation's own output schema. */
async function call(client: Client, name: string, args: Record<string, unknown>) {
  const result = await client.callTool({ name, arguments: args });
  expect(result.isError ?? false, JSON.stringify(result)).toBe(false);
  const parsed = outputOf(name).safeParse(result.structuredContent);
  expect(parsed.success, JSON.stringify(parsed.error?.issues)).toBe(true);
  expect(JSON.parse((result.content as { text: string }[])[0]!.text)).toEqual(result.structuredContent);
  return result.structuredContent as Record<string, any>;
}

/** Calls an operation expected to fail in the domain: its error's code and message. */
async function callFailing(client: Client, name: string, args: Record<string, unknown>) {
  const result = await client.callTool({ name, arguments: args });
  expect(result.isError, JSON.stringify(result)).toBe(true);
  const error = result.structuredContent as { code: string; message: string };
  expect(typeof error.message).toBe('string');
  return error;
}

async function sellable(client: Client, sku: string, warehouseId = world.warehouseId): Promise<number> {
  const out = await call(client, 'check_availability', { skus: [sku], warehouse_id: warehouseId });
  return out.items[0].sellable;
}

const reservation = (extra: Record<string, unknown> = {}) => ({
  business_id: world.catalog.businessId,
  warehouse_id: world.warehouseId,
  channel_id: world.channelId,
  items: [{ sku: 'SKU-1', quantity: 3 }],
  customer: { name: 'Ada Lovelace', email: 'ada@example.com' },
  idempotency_key: `key-${Math.random()}`,
  ...extra,
});

beforeAll(async () => {
  world = await createStockWorld(t, 'MCP tenant', 4);
  other = await createStockWorld(t, 'Other MCP tenant', 2);
  await addStock(t, world, 'SKU-1', 10);
  await addStock(t, world, 'SKU-2', 4);
  await addStock(t, other, 'SKU-1', 5);
});

describe('tools/list', () => {
  it('lists the catalog and stock operations in a fixed order, each with its input and output schemas', async () => {
    for (const legacy of [false, true]) {
      const client = await connect(world.tenant.key, { legacy });
      const { tools } = await client.listTools();
      expect(tools.map((tool) => tool.name)).toEqual([
        'search_catalog',
        'lookup_catalog',
        'get_product',
        'list_locations',
        'check_availability',
        'reserve_items',
        'extend_reservation',
        'release_reservation',
        'get_order_status',
      ]);
      for (const tool of tools) {
        expect(tool.outputSchema?.type, tool.name).toBe('object');
        expect(tool.inputSchema.type, tool.name).toBe('object');
        expect(tool.title && tool.description, tool.name).toBeTruthy();
      }
      expect(tools.find((tool) => tool.name === 'check_availability')!.annotations?.readOnlyHint).toBe(true);
      await client.close();
    }
  });
});

describe('stock operations', () => {
  it('check_availability counts sellable units per SKU and warehouse; an unknown SKU is NOT_FOUND', async () => {
    const client = await connect(world.tenant.key);
    const out = await call(client, 'check_availability', { skus: ['SKU-2'] });
    expect(out.items).toEqual([
      expect.objectContaining({
        sku: 'SKU-2',
        is_bundle: false,
        sellable: 4,
        warehouses: [{ warehouse_id: world.warehouseId, sellable: 4 }],
      }),
    ]);
    const missing = await callFailing(client, 'check_availability', { skus: ['SKU-2', 'NOPE'] });
    expect(missing).toMatchObject({ code: 'NOT_FOUND', details: { skus: ['NOPE'] } });
  });

  it('check_availability over a sales channel counts its warehouses, and a bundle by what its components make', async () => {
    const client = await connect(world.tenant.key);
    const mutate = (mutation: string, input: Record<string, unknown>) =>
      graphqlData(t, world.tenant.key, mutation, { input });
    await mutate(`mutation($input: CreateProductInput!) { createProduct(input: $input) { product { id } } }`, {
      sku: 'KIT-1',
      name: 'Kit of two SKU-3',
    });
    await mutate(
      `mutation($input: SetBundleComponentsInput!) { setBundleComponents(input: $input) { product { id } } }`,
      { sku: 'KIT-1', components: [{ sku: 'SKU-3', quantity: 2 }] },
    );
    await mutate(
      `mutation($input: SetSalesChannelWarehousesInput!) { setSalesChannelWarehouses(input: $input) { sales_channel { id } } }`,
      { channel_id: world.channelId, warehouse_ids: [world.warehouseId] },
    );
    await addStock(t, world, 'SKU-3', 7);
    await addStock(t, world, 'SKU-3', 50, { warehouseId: world.catalog.warehouseIds[1] });
    const perWarehouse = await call(client, 'check_availability', { skus: ['KIT-1', 'SKU-3'] });
    expect(perWarehouse.items.map((item: { sellable: number }) => item.sellable)).toEqual([3 + 25, 57]);
    const out = await call(client, 'check_availability', { skus: ['KIT-1', 'SKU-3'], channel_id: world.channelId });
    expect(out).toEqual({
      channel_id: world.channelId,
      items: [
        expect.objectContaining({ sku: 'KIT-1', is_bundle: true, sellable: 3, warehouses: [] }),
        expect.objectContaining({ sku: 'SKU-3', is_bundle: false, sellable: 7, warehouses: [] }),
      ],
    });
    // Reserving two kits through the channel holds four units of the component.
    const { reservation: kits } = await call(
      client,
      'reserve_items',
      reservation({ warehouse_id: undefined, items: [{ sku: 'KIT-1', quantity: 2 }] }),
    );
    const after = await call(client, 'check_availability', { skus: ['KIT-1', 'SKU-3'], channel_id: world.channelId });
    expect(after.items.map((item: { sellable: number }) => item.sellable)).toEqual([1, 3]);
    await call(client, 'release_reservation', { reservation_id: kits.id });
  });

  it('reserve_items holds units until expiry, replays a repeated key and refuses the key with other arguments', async () => {
    const client = await connect(world.tenant.key);
    const before = await sellable(client, 'SKU-1');
    const args = reservation({ expires_in_seconds: 600 });
    const first = await call(client, 'reserve_items', args);
    expect(first.reservation).toMatchObject({
      status: 'ACTIVE',
      warehouse_id: world.warehouseId,
      items: [{ sku: 'SKU-1', quantity: 3 }],
    });
    const expiresIn = Date.parse(first.reservation.expires_at) - Date.now();
    expect(expiresIn).toBeGreaterThan(500_000);
    expect(expiresIn).toBeLessThanOrEqual(600_000);
    expect(await sellable(client, 'SKU-1')).toBe(before - 3);

    const replay = await call(client, 'reserve_items', args);
    expect(replay.reservation.id).toBe(first.reservation.id);
    expect(await sellable(client, 'SKU-1')).toBe(before - 3);

    const reused = await callFailing(client, 'reserve_items', { ...args, items: [{ sku: 'SKU-1', quantity: 1 }] });
    expect(reused.code).toBe('UNPROCESSABLE_ENTITY');
    expect(await sellable(client, 'SKU-1')).toBe(before - 3);
  });

  it('reserve_items answers OUT_OF_STOCK as an error result and holds nothing', async () => {
    const client = await connect(world.tenant.key);
    const before = await sellable(client, 'SKU-2');
    const error = await callFailing(client, 'reserve_items', reservation({ items: [{ sku: 'SKU-2', quantity: 500 }] }));
    expect(error.code).toBe('OUT_OF_STOCK');
    expect(await sellable(client, 'SKU-2')).toBe(before);
  });

  it('extend_reservation moves the expiry; release_reservation frees the units and cannot run twice', async () => {
    const client = await connect(world.tenant.key);
    const before = await sellable(client, 'SKU-1');
    const { reservation: created } = await call(client, 'reserve_items', reservation({ expires_in_seconds: 120 }));
    const { reservation: extended } = await call(client, 'extend_reservation', {
      reservation_id: created.id,
      expires_in_seconds: 7200,
    });
    expect(Date.parse(extended.expires_at)).toBeGreaterThan(Date.parse(created.expires_at));
    const { reservation: released } = await call(client, 'release_reservation', { reservation_id: created.id });
    expect(released).toMatchObject({ id: created.id, status: 'REMOVED' });
    expect(released.released_at).not.toBeNull();
    expect(await sellable(client, 'SKU-1')).toBe(before);
    const again = await callFailing(client, 'release_reservation', { reservation_id: created.id });
    expect(again.code).toBe('INVALID_STATE');
  });

  it('get_order_status reads an order and its items; an unknown order is NOT_FOUND', async () => {
    const client = await connect(world.tenant.key);
    const data = await graphqlData<{ createOrder: { order: { id: string } } }>(
      t,
      world.tenant.key,
      `mutation($input: CreateOrderInput!) { createOrder(input: $input) { order { id } } }`,
      {
        input: {
          business_id: world.catalog.businessId,
          warehouse_id: world.warehouseId,
          channel_id: world.channelId,
          items: [{ sku: 'SKU-2', quantity: 1 }],
        },
      },
    );
    const { order } = await call(client, 'get_order_status', { order_id: data.createOrder.order.id });
    expect(order).toMatchObject({
      id: data.createOrder.order.id,
      status: 'OPEN',
      items: [{ sku: 'SKU-2', quantity: 1, shipped_at: null }],
    });
    const missing = await callFailing(client, 'get_order_status', { order_id: '0190f5b4-1c5e-7000-8000-0000000000ff' });
    expect(missing.code).toBe('NOT_FOUND');
  });
});

describe('boundaries', () => {
  it("answers another tenant's reservation as NOT_FOUND and changes nothing", async () => {
    const owner = await connect(world.tenant.key);
    const stranger = await connect(other.tenant.key);
    const { reservation: mine } = await call(owner, 'reserve_items', reservation());
    for (const [name, args] of [
      ['release_reservation', { reservation_id: mine.id }],
      ['extend_reservation', { reservation_id: mine.id, expires_in_seconds: 7200 }],
    ] as const) {
      expect((await callFailing(stranger, name, args)).code).toBe('NOT_FOUND');
    }
    const after = await call(owner, 'extend_reservation', { reservation_id: mine.id, expires_in_seconds: 3600 });
    expect(after.reservation.status).toBe('ACTIVE');
    await call(owner, 'release_reservation', { reservation_id: mine.id });
  });

  it('answers invalid arguments with the JSON-RPC error -32602, for every operation, and reserves nothing', async () => {
    const client = await connect(world.tenant.key);
    const before = await sellable(client, 'SKU-1');
    const invalid: [string, Record<string, unknown>][] = [
      ['check_availability', { skus: [] }],
      ['check_availability', { skus: 'SKU-1' }],
      ['reserve_items', reservation({ idempotency_key: undefined })],
      ['reserve_items', reservation({ items: [{ sku: 'SKU-1', quantity: '3' }] })],
      ['reserve_items', reservation({ items: [{ sku: 'SKU-1', quantity: 0 }] })],
      ['reserve_items', reservation({ expires_in_seconds: 10 })],
      ['extend_reservation', { reservation_id: 'x' }],
      ['release_reservation', {}],
      ['get_order_status', { order_id: 42 }],
      ['no_such_tool', {}],
    ];
    for (const [name, args] of invalid) {
      const error = await client.callTool({ name, arguments: args }).then(
        (result) => result,
        (thrown: unknown) => thrown,
      );
      expect(error, `${name} ${JSON.stringify(args)}`).toBeInstanceOf(ProtocolError);
      expect((error as ProtocolError).code).toBe(-32602);
    }
    expect(await sellable(client, 'SKU-1')).toBe(before);
  });

  it('serves a key limited to reading: reads pass, writes are refused with the scope challenge', async () => {
    const key = await createKey(t.rest, world.tenant.id, ['inventory:read']);
    const client = await connect(key);
    expect(await sellable(client, 'SKU-1')).toBeGreaterThan(0);
    const refused = await client.callTool({ name: 'reserve_items', arguments: reservation() }).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(refused).toBeDefined();
  });
});
