/**
 * The kernel's MCP endpoint on a bare Fastify application: each way an operation can end (a value,
 * a domain error returned or thrown, a failure, refused arguments), what the caller receives for
 * it, and the count and log line `/mcp` records for it.
 */
import { Writable } from 'node:stream';
import Fastify from 'fastify';
import { Registry } from 'prom-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { AppError, notFound } from '../../src/kernel/errors';
import { defineMcpTool, exceedsElements, fail, HttpRefusal, mountMcpEndpoint, ok } from '../../src/kernel/mcp';
import type { Principal } from '../../src/kernel/principal';
import { createMcpMetrics, toolCallRecorder } from '../../src/modules/mcp/mcp-observability';

const lines: Record<string, unknown>[] = [];
const app = Fastify({
  logger: {
    level: 'info',
    stream: new Writable({
      write(chunk: Buffer, _encoding, done) {
        lines.push(JSON.parse(chunk.toString()));
        done();
      },
    }),
  },
});
const metrics = createMcpMetrics();
const registry = new Registry();
registry.registerMetric(metrics.calls);
const principal: Principal = {
  tenantId: 'tenant-1',
  scopes: new Set(['things:read']),
  actor: { type: 'user', id: 'user-1', clientId: 'https://agent.example/client.json' },
};
type Context = { principal: Principal; log: typeof app.log };

const Echo = z.object({ text: z.string().max(10) });
const tools = [
  defineMcpTool<Context, typeof Echo, typeof Echo>({
    name: 'echo',
    title: 'Echo',
    description: 'Answers its text.',
    scopes: ['things:read'],
    input: Echo,
    output: Echo,
    call: async ({ text }) => (text === 'missing' ? fail('NOT_FOUND', 'no such text', { text }) : ok({ text })),
  }),
  defineMcpTool<Context, z.ZodObject, typeof Echo>({
    name: 'thrower',
    title: 'Thrower',
    description: 'Throws what it is told.',
    scopes: [],
    input: z.object({ kind: z.enum(['not_found', 'internal', 'plain']) }),
    output: Echo,
    call: async ({ kind }) => {
      if (kind === 'not_found') throw notFound('no thing "x"');
      if (kind === 'internal') throw new AppError('INTERNAL');
      throw new Error('secret detail');
    },
  }),
  defineMcpTool<Context, z.ZodObject, typeof Echo>({
    name: 'writer',
    title: 'Writer',
    description: 'Needs a scope the caller lacks.',
    scopes: ['things:write'],
    input: z.object({}),
    output: Echo,
    call: async () => ok({ text: 'written' }),
  }),
];

mountMcpEndpoint<Context>(app, {
  path: '/mcp',
  serverInfo: { name: 'test', version: '1.0.0' },
  tools,
  context: async (request) =>
    request.headers.authorization === 'Bearer ok'
      ? { principal, log: request.log }
      : new HttpRefusal(401, { error: 'no' }, { 'WWW-Authenticate': 'Bearer' }),
  hasScope: (context, scope) => context.principal.scopes.has(scope),
  resourceMetadataUrl: 'http://test.example/.well-known/oauth-protected-resource/mcp',
  onToolCall: toolCallRecorder(metrics),
});

beforeAll(() => app.ready());
afterAll(() => app.close());

const META = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientInfo': { name: 'unit', version: '1' },
  'io.modelcontextprotocol/clientCapabilities': {},
};
async function callTool(name: string, args: unknown, authorization = 'Bearer ok') {
  const response = await app.inject({
    method: 'POST',
    url: '/mcp',
    headers: {
      authorization,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2026-07-28',
      'mcp-method': 'tools/call',
      'mcp-name': name,
    },
    payload: { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args, _meta: META } },
  });
  return { status: response.statusCode, headers: response.headers, body: response.json() };
}

const lastLog = () => lines.filter((line) => line.msg === 'mcp tool call').at(-1);

describe('mountMcpEndpoint', () => {
  it('answers a value as structured content and JSON text, counted and logged with tenant and client', async () => {
    const { status, body } = await callTool('echo', { text: 'hi' });
    expect(status).toBe(200);
    expect(body.result.structuredContent).toEqual({ text: 'hi' });
    expect(body.result.content).toEqual([{ type: 'text', text: '{"text":"hi"}' }]);
    expect(body.result.isError).toBeFalsy();
    expect(lastLog()).toMatchObject({
      tool: 'echo',
      outcome: 'ok',
      tenantId: 'tenant-1',
      clientId: 'https://agent.example/client.json',
      credential: 'user',
    });
  });

  it('answers domain errors, returned or thrown as a 4xx, as isError results with their code', async () => {
    const returned = await callTool('echo', { text: 'missing' });
    expect(returned.body.result).toMatchObject({
      isError: true,
      structuredContent: { code: 'NOT_FOUND', message: 'no such text', details: { text: 'missing' } },
    });
    const thrown = await callTool('thrower', { kind: 'not_found' });
    expect(thrown.body.result.isError).toBe(true);
    expect(thrown.body.result.structuredContent.code).toBe('NOT_FOUND');
    expect(thrown.body.result.structuredContent.message).toContain('no thing "x"');
    expect(lastLog()).toMatchObject({ tool: 'thrower', outcome: 'error', code: 'NOT_FOUND' });
  });

  it('answers a failure with the JSON-RPC internal error, its message masked', async () => {
    for (const kind of ['internal', 'plain']) {
      const { body } = await callTool('thrower', { kind });
      expect(body.error).toEqual({ code: -32603, message: 'Internal error' });
      expect(JSON.stringify(body)).not.toContain('secret');
    }
    expect(lastLog()).toMatchObject({ tool: 'thrower', outcome: 'failed' });
  });

  it('answers refused arguments and unknown operations -32602', async () => {
    for (const [name, args] of [
      ['echo', { text: 'far too long a text' }],
      ['echo', { text: 1 }],
      ['echo', []],
      ['nothing', {}],
    ] as const) {
      const { body } = await callTool(name, args);
      expect(body.error.code, `${name} ${JSON.stringify(args)}`).toBe(-32602);
    }
    expect(lastLog()).toMatchObject({ tool: 'echo', outcome: 'invalid_params' });
  });

  it('refuses before dispatch: the context refusal as given, a missing scope with the 403 challenge', async () => {
    const refused = await callTool('echo', { text: 'hi' }, 'Bearer nope');
    expect(refused.status).toBe(401);
    expect(refused.headers['www-authenticate']).toBe('Bearer');
    const before = lines.length;
    const scoped = await callTool('writer', {});
    expect(scoped.status).toBe(403);
    expect(scoped.headers['www-authenticate']).toContain('error="insufficient_scope"');
    expect(scoped.headers['www-authenticate']).toContain('scope="things:write"');
    expect(lines.slice(before).filter((line) => line.msg === 'mcp tool call')).toEqual([]);
  });

  it('counts every call by operation and outcome', async () => {
    const text = await registry.metrics();
    expect(text).toContain('commerce_mcp_tool_calls_total{tool="echo",outcome="ok"} 1');
    expect(text).toContain('commerce_mcp_tool_calls_total{tool="thrower",outcome="failed"} 2');
    // `arguments: []` is refused by the protocol's own request schema, before the operation is looked up.
    expect(text).toContain('commerce_mcp_tool_calls_total{tool="echo",outcome="invalid_params"} 2');
  });
});

describe('subscriptions/listen', () => {
  it('is acknowledged and closed at once: the operations never change, so no stream stays open', async () => {
    const response = await app.inject({
      method: 'POST',
      url: '/mcp',
      headers: {
        authorization: 'Bearer ok',
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': '2026-07-28',
        'mcp-method': 'subscriptions/listen',
      },
      payload: {
        jsonrpc: '2.0',
        id: 9,
        method: 'subscriptions/listen',
        params: { notifications: { toolsListChanged: true }, _meta: META },
      },
    });
    expect(response.statusCode).toBe(200);
    expect(response.body).toContain('notifications/subscriptions/acknowledged');
    expect(response.body).toContain('"notifications":{}');
    expect(response.body).toContain('"resultType":"complete"');
  });
});

describe('exceedsElements', () => {
  it('counts array elements and object members at every depth, stopping past the limit', () => {
    expect(exceedsElements({ a: [1, 2], b: { c: 3 } }, 5)).toBe(false);
    expect(exceedsElements({ a: [1, 2], b: { c: 3 } }, 4)).toBe(true);
    expect(exceedsElements('text', 0)).toBe(false);
    expect(
      exceedsElements(
        Array.from({ length: 10_000 }, () => ({})),
        2_000,
      ),
    ).toBe(true);
  });
});
