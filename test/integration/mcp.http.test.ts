/**
 * `/mcp` at the HTTP level: the 401 and 403 challenges, the methods it refuses, hostile bodies
 * (each answered with its documented error while no stock moves), the per-operation metrics, and
 * statelessness: two instances of the application answering alternate requests of one client.
 */
import type { AddressInfo } from 'node:net';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { beforeAll, describe, expect, it } from 'vitest';
import { MAX_TOOL_INPUT_ELEMENTS } from '../../src/kernel/mcp';
import { createKey, startTestApp, type TestApp } from '../helpers/app';
import { addStock, createStockWorld, levels, type StockWorld } from './orders.fixtures';

const t = await startTestApp();
const second = await startTestApp({ databaseUrl: t.databaseUrl });
let world: StockWorld;

const META = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientInfo': { name: 'mcp-http-test', version: '1.0.0' },
  'io.modelcontextprotocol/clientCapabilities': {},
};

/** A 2026-07-28 request: its body and the standard headers naming its method (and operation). */
function modern(token: string | undefined, method: string, params: Record<string, unknown> = {}, id = 1) {
  const name: Record<string, string> = typeof params.name === 'string' ? { 'mcp-name': params.name } : {};
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    'mcp-protocol-version': '2026-07-28',
    'mcp-method': method,
    ...name,
    ...(token ? { authorization: `Bearer ${token}` } : {}),
  };
  return { headers, body: { jsonrpc: '2.0', id, method, params: { ...params, _meta: META } } as unknown };
}

const post = (request: { headers: Record<string, string>; body: unknown }, app: TestApp = t) =>
  app.app.inject({
    method: 'POST',
    url: '/mcp',
    headers: request.headers,
    payload: typeof request.body === 'string' ? request.body : JSON.stringify(request.body),
  });

const reserveArgs = (extra: Record<string, unknown> = {}) => ({
  business_id: world.catalog.businessId,
  warehouse_id: world.warehouseId,
  channel_id: world.channelId,
  items: [{ sku: 'SKU-1', quantity: 2 }],
  customer: { name: 'Ada Lovelace' },
  idempotency_key: `http-${Math.random()}`,
  ...extra,
});

const RESOURCE_METADATA = `resource_metadata="${t.services.baseUrl}/.well-known/oauth-protected-resource/mcp"`;
/** The scopes the operations of /mcp need, which its 401 challenge names. */
const MCP_SCOPES = 'scope="inventory:read inventory:write orders:read search"';

beforeAll(async () => {
  world = await createStockWorld(t, 'MCP HTTP tenant', 2);
  await addStock(t, world, 'SKU-1', 10);
});

describe('authentication', () => {
  it('answers a request without a token 401 with a challenge naming the resource metadata', async () => {
    const response = await post(modern(undefined, 'tools/list'));
    expect(response.statusCode).toBe(401);
    expect(response.headers['www-authenticate']).toBe(`Bearer ${RESOURCE_METADATA}, ${MCP_SCOPES}`);
    expect(response.json().error.code).toBe(401);
  });

  it('answers an invalid token 401 with error="invalid_token"', async () => {
    const response = await post(modern('not-a-credential', 'tools/list'));
    expect(response.statusCode).toBe(401);
    expect(response.headers['www-authenticate']).toBe(
      `Bearer ${RESOURCE_METADATA}, ${MCP_SCOPES}, error="invalid_token"`,
    );
  });

  it('answers an operation needing a scope the token lacks 403 insufficient_scope, on both revisions', async () => {
    const key = await createKey(t.rest, world.tenant.id, ['inventory:read']);
    const before = await levels(t, world, 'SKU-1');
    const legacy = {
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        authorization: `Bearer ${key}`,
      },
      body: {
        jsonrpc: '2.0',
        id: 7,
        method: 'tools/call',
        params: { name: 'reserve_items', arguments: reserveArgs() },
      },
    };
    for (const request of [modern(key, 'tools/call', { name: 'reserve_items', arguments: reserveArgs() }), legacy]) {
      const response = await post(request);
      expect(response.statusCode).toBe(403);
      const challenge = response.headers['www-authenticate'] as string;
      expect(challenge).toMatch(/^Bearer error="insufficient_scope"/);
      expect(challenge).toContain('scope="inventory:write"');
      expect(challenge).toContain(RESOURCE_METADATA);
    }
    // A read the key allows passes.
    const read = await post(modern(key, 'tools/call', { name: 'check_availability', arguments: { skus: ['SKU-1'] } }));
    expect(read.statusCode).toBe(200);
    expect(read.json().result.isError).toBeFalsy();
    expect(await levels(t, world, 'SKU-1')).toEqual(before);
  });
});

describe('methods', () => {
  it('answers GET, PUT, PATCH and DELETE 405 with Allow: POST', async () => {
    for (const method of ['GET', 'PUT', 'PATCH', 'DELETE'] as const) {
      const response = await t.app.inject({
        method,
        url: '/mcp',
        headers: { authorization: `Bearer ${world.tenant.key}` },
      });
      expect(response.statusCode, method).toBe(405);
      expect(response.headers.allow).toBe('POST');
      expect(response.json().error.code).toBe(405);
    }
  });
});

describe('hostile bodies', () => {
  const reserve = (args: unknown) =>
    modern(world.tenant.key, 'tools/call', { name: 'reserve_items', arguments: args as Record<string, unknown> });

  it('refuses each with its documented error and moves no stock', async () => {
    const before = await levels(t, world, 'SKU-1');
    let deep: unknown = 'SKU-1';
    for (let level = 0; level < 100; level += 1) deep = [deep];
    // 3 000 keys in groups of 1 000: within the members of an object at the door, past the tool's limit.
    const manyKeys = Object.fromEntries(
      [0, 1, 2].map((group) => [
        `g${group}`,
        Object.fromEntries(Array.from({ length: 1_000 }, (_, index) => [`k${index}`, index])),
      ]),
    );
    const cases: [string, { headers: Record<string, string>; body: unknown }, number, (body: any) => void][] = [
      ['deep nesting', reserve({ ...reserveArgs(), notes: deep }), 400, (body) => expect(body.error.code).toBe(400)],
      [
        'a 1 MiB string',
        reserve(reserveArgs({ notes: 'x'.repeat(1024 * 1024) })),
        413,
        (body) => expect(body.error.code).toBe(413),
      ],
      [
        '3,000 keys in arguments',
        reserve({ ...reserveArgs(), ...manyKeys }),
        200,
        (body) => {
          expect(body.error.code).toBe(-32602);
          expect(body.error.message).toContain(`more than ${MAX_TOOL_INPUT_ELEMENTS}`);
        },
      ],
      [
        'a string of 900 KiB where 2000 characters are allowed',
        reserve(reserveArgs({ notes: 'x'.repeat(900 * 1024) })),
        200,
        (body) => expect(body.error.code).toBe(-32602),
      ],
      [
        'wrong types',
        reserve(reserveArgs({ items: { sku: 'SKU-1', quantity: 2 } })),
        200,
        (body) => expect(body.error.code).toBe(-32602),
      ],
      [
        'a batch (the 2026-07-28 revision has none)',
        { headers: reserve(reserveArgs()).headers, body: [reserve(reserveArgs()).body, reserve(reserveArgs()).body] },
        400,
        (body) => expect(body.error.code).toBe(-32600),
      ],
      [
        'text that is not JSON',
        { headers: reserve(reserveArgs()).headers, body: '{"jsonrpc":' },
        400,
        (body) => expect(body.error.code).toBe(400),
      ],
      [
        'headers that disagree with the body',
        {
          headers: { ...reserve(reserveArgs()).headers, 'mcp-name': 'check_availability' },
          body: reserve(reserveArgs()).body,
        },
        400,
        (body) => expect(body.error.code).toBe(-32020),
      ],
    ];
    for (const [label, request, status, check] of cases) {
      const response = await post(request);
      expect(response.statusCode, label).toBe(status);
      check(response.json());
    }
    const other = await t.app.inject({
      method: 'POST',
      url: '/mcp',
      headers: { ...reserve(reserveArgs()).headers, 'content-type': 'text/plain' },
      payload: 'hello',
    });
    expect(other.statusCode).toBe(415);
    expect(await levels(t, world, 'SKU-1')).toEqual(before);
  });
});

describe('metrics', () => {
  it('counts calls per operation and outcome, with their duration', async () => {
    const call = (args: Record<string, unknown>) =>
      post(modern(world.tenant.key, 'tools/call', { name: 'check_availability', arguments: args }));
    expect((await call({ skus: ['SKU-1'] })).statusCode).toBe(200);
    expect((await call({ skus: ['NOPE'] })).json().result.isError).toBe(true);
    expect((await call({ skus: 'SKU-1' })).json().error.code).toBe(-32602);
    const text = (await t.app.inject({ method: 'GET', url: '/metrics' })).body;
    const value = (series: string) => {
      const line = text.split('\n').find((candidate) => candidate.startsWith(`${series} `));
      return line === undefined ? undefined : Number(line.slice(series.length + 1));
    };
    const calls = (outcome: string) =>
      value(`commerce_mcp_tool_calls_total{tool="check_availability",outcome="${outcome}"}`);
    expect(calls('ok')).toBeGreaterThanOrEqual(1);
    expect(calls('error')).toBeGreaterThanOrEqual(1);
    expect(calls('invalid_params')).toBeGreaterThanOrEqual(1);
    expect(value('commerce_mcp_tool_call_duration_seconds_count{tool="check_availability"}')).toBeGreaterThanOrEqual(3);
  });
});

describe('statelessness', () => {
  it('serves one client from two instances answering alternate requests, on both revisions', async () => {
    await t.app.listen({ host: '127.0.0.1', port: 0 });
    await second.app.listen({ host: '127.0.0.1', port: 0 });
    const ports = [t, second].map((app) => (app.app.server.address() as AddressInfo).port);
    for (const legacy of [false, true]) {
      const served: number[] = [];
      let next = 0;
      const alternating: typeof fetch = (input, init) => {
        const url = new URL(input instanceof Request ? input.url : String(input));
        url.port = String(ports[next % 2]);
        served.push(ports[next % 2]!);
        next += 1;
        return fetch(url, init);
      };
      const client = new Client(
        { name: 'mcp-http-test', version: '1.0.0' },
        { versionNegotiation: { mode: legacy ? 'legacy' : { pin: '2026-07-28' } } },
      );
      await client.connect(
        new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${ports[0]}/mcp`), {
          requestInit: { headers: { authorization: `Bearer ${world.tenant.key}` } },
          fetch: alternating,
        }),
      );
      const { tools } = await client.listTools();
      expect(tools).toHaveLength(9);
      const reserved = await client.callTool({ name: 'reserve_items', arguments: reserveArgs() });
      expect(reserved.isError ?? false).toBe(false);
      const id = (reserved.structuredContent as { reservation: { id: string } }).reservation.id;
      const released = await client.callTool({ name: 'release_reservation', arguments: { reservation_id: id } });
      expect((released.structuredContent as { reservation: { status: string } }).reservation.status).toBe('REMOVED');
      expect(new Set(served)).toEqual(new Set(ports));
      await client.close();
    }
  });
});
