/**
 * One schema per input, every interface: a reservation an agent asks for through MCP's
 * `reserve_items` is refused for exactly what GraphQL's `createReservation` refuses (the same field,
 * the same rule, the same message), and a refused request changes nothing. Reservations have no
 * REST operation.
 */
import type { AddressInfo } from 'node:net';
import { Client, ProtocolError, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { beforeAll, describe, expect, it } from 'vitest';
import { startTestApp } from '../helpers/app';
import { addStock, createStockWorld, operationsSnapshot, type StockWorld } from './orders.fixtures';
import { graphqlError } from './stock.fixtures';

const t = await startTestApp();
await t.app.listen({ host: '127.0.0.1', port: 0 });
const base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;

let world: StockWorld;
let mcp: Client;

const CREATE = `mutation($input: CreateReservationInput!) { createReservation(input: $input) { reservation { id } } }`;

/** The fields both interfaces share, valid; each case breaks one. */
const shared = () => ({
  business_id: world.catalog.businessId,
  warehouse_id: world.warehouseId,
  channel_id: world.channelId,
  items: [{ sku: 'SKU-1', quantity: 1 }],
  customer: { name: 'Ada Lovelace', email: 'ada@example.com', phone: '+44 20 7946 0000' },
  notes: 'by the window',
});

/** A refusal as one field and one message, whichever interface gave it. */
interface Refusal {
  field: string;
  message: string;
}

/**
 * GraphQL's refusal of `createReservation`: VALIDATION_ERROR naming the field (`extensions.field`,
 * under `input.`) and, in its message, the field followed by the rule's message.
 */
async function graphqlRefusal(input: Record<string, unknown>, expected: Refusal) {
  const error = await graphqlError(t, world.tenant.key, 'VALIDATION_ERROR', CREATE, {
    input: { ...input, expires_at: Date.now() + 3_600_000 },
  });
  expect(error.extensions?.field).toBe(`input.${expected.field}`);
  expect(error.message).toContain(`input.${expected.field} ${expected.message}`);
}

/** MCP's refusal of `reserve_items`: the JSON-RPC error -32602 and its first issue. */
async function mcpRefusal(args: Record<string, unknown>): Promise<Refusal> {
  const thrown = await mcp
    .callTool({ name: 'reserve_items', arguments: { ...args, idempotency_key: `key-${Math.random()}` } })
    .then(
      (result) => result,
      (error: unknown) => error,
    );
  expect(thrown, JSON.stringify(thrown)).toBeInstanceOf(ProtocolError);
  expect((thrown as ProtocolError).code).toBe(-32602);
  const issues = ((thrown as ProtocolError).data as { issues: { path: string; message: string }[] }).issues;
  const path = issues[0]!.path.replace(/\.(\d+)(?=\.|$)/g, '[$1]');
  return { field: path, message: issues[0]!.message };
}

beforeAll(async () => {
  world = await createStockWorld(t, 'Input rules tenant', 2);
  await addStock(t, world, 'SKU-1', 10);
  mcp = new Client(
    { name: 'input-rules-test', version: '1.0.0' },
    { versionNegotiation: { mode: { pin: '2026-07-28' } } },
  );
  await mcp.connect(
    new StreamableHTTPClientTransport(new URL(`${base}/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${world.tenant.key}` } },
    }),
  );
});

describe('a reservation refused alike by GraphQL and MCP', () => {
  const many = (count: number) => Array.from({ length: count }, (_, index) => ({ sku: `SKU-${index}`, quantity: 1 }));
  const cases: [string, (input: ReturnType<typeof shared>) => Record<string, unknown>, Refusal][] = [
    [
      'a bad e-mail address',
      (input) => ({ ...input, customer: { ...input.customer, email: 'ada at example' } }),
      { field: 'customer.email', message: 'must be an e-mail address' },
    ],
    [
      'a name of spaces only',
      (input) => ({ ...input, customer: { ...input.customer, name: '   ' } }),
      { field: 'customer.name', message: 'must be 1 to 255 characters, not only spaces' },
    ],
    [
      'a name longer than 255 characters',
      (input) => ({ ...input, customer: { ...input.customer, name: 'A'.repeat(256) } }),
      { field: 'customer.name', message: 'must be 1 to 255 characters, not only spaces' },
    ],
    [
      'a bad phone number',
      (input) => ({ ...input, customer: { ...input.customer, phone: 'call me' } }),
      { field: 'customer.phone', message: 'must be a phone number' },
    ],
    [
      'more items than a reservation may hold',
      (input) => ({ ...input, items: many(101) }),
      { field: 'items', message: 'may hold at most 100 items' },
    ],
    ['no items', (input) => ({ ...input, items: [] }), { field: 'items', message: 'must hold at least one item' }],
    [
      'a quantity beyond the most one item may ask for',
      (input) => ({ ...input, items: [{ sku: 'SKU-1', quantity: 1_000_001 }] }),
      { field: 'items[0].quantity', message: 'must be a whole number from 1 to 1000000' },
    ],
    [
      'a business id that is not an id',
      (input) => ({ ...input, business_id: 'shop-1' }),
      { field: 'business_id', message: 'is not a valid id' },
    ],
    [
      'notes longer than 2000 characters',
      (input) => ({ ...input, notes: 'n'.repeat(2001) }),
      { field: 'notes', message: 'must be at most 2000 characters' },
    ],
  ];

  it.each(cases)('%s: the same field and rule, and nothing changes', async (_what, breakIt, expected) => {
    const before = await operationsSnapshot(t, world.tenant.id);
    const input = breakIt(shared());
    await graphqlRefusal(input, expected);
    expect(await mcpRefusal(input)).toEqual(expected);
    expect(await operationsSnapshot(t, world.tenant.id)).toEqual(before);
  });

  it('accepts through both what both accept, so the cases above differ from a valid request by one field only', async () => {
    const graphql = await t.app.inject({
      method: 'POST',
      url: '/graphql',
      headers: { authorization: `Bearer ${world.tenant.key}`, 'content-type': 'application/json' },
      payload: { query: CREATE, variables: { input: { ...shared(), expires_at: Date.now() + 3_600_000 } } },
    });
    expect(graphql.json().errors, graphql.body).toBeUndefined();
    const result = await mcp.callTool({
      name: 'reserve_items',
      arguments: { ...shared(), idempotency_key: `key-${Math.random()}` },
    });
    expect(result.isError ?? false, JSON.stringify(result)).toBe(false);
  });
});
