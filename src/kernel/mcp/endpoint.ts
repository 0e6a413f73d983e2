/**
 * A Model Context Protocol endpoint (Streamable HTTP) on the Fastify application, served by the
 * official SDK: the 2026-07-28 revision (each request carries its protocol version in `_meta`, no
 * handshake) and, through the SDK's stateless fallback, 2025-11-25 clients. Nothing is kept
 * between requests: every POST is answered by a server instance built for it, so any process of a
 * deployment answers any request. Bodies arrive through the application's JSON parser, so the
 * service's body limits (size, nesting depth, hostile senders) hold here as everywhere.
 *
 * Each request is first given to `context`, which authenticates it (or not) and may refuse it
 * with an HTTP answer of its own (a 401 with its `WWW-Authenticate` challenge). A `tools/call`
 * naming an operation whose scopes the caller lacks is refused before dispatch with the SDK's 403
 * `insufficient_scope` challenge. Arguments that do not match an operation's input schema are the
 * JSON-RPC error -32602; an operation's domain errors are results with `isError`.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import {
  createMcpHandler,
  McpServer,
  ProtocolError,
  ProtocolErrorCode,
  type AuthInfo,
  type CallToolResult,
  type McpHttpHandler,
} from '@modelcontextprotocol/server';
import { AppError } from '../errors';
import { fieldProblems, safeParseInput } from '../validation';
import type { McpTool, McpToolResult } from './tool';

/** An HTTP answer given instead of serving the request (refused authentication, a missing scope). */
export class HttpRefusal {
  constructor(
    readonly status: number,
    readonly body: unknown,
    readonly headers: Record<string, string> = {},
  ) {}
}

/** How a call ended: a value, an error of the domain, arguments refused, or a failure of the service. */
export type McpCallOutcome = 'ok' | 'error' | 'invalid_params' | 'failed';

export interface McpEndpointOptions<C> {
  path: string;
  serverInfo: { name: string; version: string; title?: string };
  /** Listed in this order by `tools/list`. */
  tools: readonly McpTool<C>[];
  /** Authenticates the request (or not): its context, or the HTTP answer refusing it. */
  context: (request: FastifyRequest) => Promise<C | HttpRefusal>;
  /**
   * Whether the caller holds a scope; without it no scope is checked (public endpoints). A
   * `tools/call` of an operation needing a scope the caller lacks is answered 403 before dispatch.
   */
  hasScope?: (context: C, scope: string) => boolean;
  /** The protected resource metadata (RFC 9728) the 403 challenge names. */
  resourceMetadataUrl?: string;
  /** The OAuth client behind the context, if any (handed to the SDK as `authInfo.clientId`). */
  clientId?: (context: C) => string | undefined;
  /** Called once per `tools/call` of a known operation, after it ends. */
  onToolCall?: (name: string, outcome: McpCallOutcome, durationMs: number, context: C, code?: string) => void;
  /** An operation failed unexpectedly (answered as the JSON-RPC internal error, its message masked). */
  onError?: (error: unknown, name: string, context: C) => void;
}

/** Most array elements and object members one `tools/call` may carry in `arguments`. */
export const MAX_TOOL_INPUT_ELEMENTS = 2_000;

/** Headers of the connection, not of the message: not handed on to the SDK's web request. */
const HOP_BY_HOP = new Set(['connection', 'content-length', 'transfer-encoding', 'keep-alive', 'upgrade', 'host']);

/** Whether `value` holds more than `limit` array elements and object members (stops counting there). */
export function exceedsElements(value: unknown, limit: number): boolean {
  let count = 0;
  const pending: unknown[] = [value];
  while (pending.length > 0) {
    const current = pending.pop();
    if (current === null || typeof current !== 'object') continue;
    const members = Array.isArray(current) ? current : Object.values(current);
    count += members.length;
    if (count > limit) return true;
    pending.push(...members);
  }
  return false;
}

/** Most problems one refusal's message names; `error.data.issues` holds them all. */
const MAX_NAMED_PROBLEMS = 5;

/**
 * The message of refused arguments, naming each wrong argument and why (`Invalid arguments for
 * tool reserve_items: items[0].quantity must be a whole number from 1 to 1000000`): what a client
 * shows its user or model, which often never reads `error.data`.
 */
function invalidArgumentsMessage(name: string, error: Parameters<typeof fieldProblems>[0]): string {
  const problems = fieldProblems(error);
  const named = problems
    .slice(0, MAX_NAMED_PROBLEMS)
    .map((problem) => `${problem.field || '(arguments)'} ${problem.message}`);
  if (problems.length > MAX_NAMED_PROBLEMS) named.push(`and ${problems.length - MAX_NAMED_PROBLEMS} more`);
  return `Invalid arguments for tool ${name}: ${named.join('; ')}`;
}

const contextOf = <C>(authInfo: AuthInfo | undefined): C => authInfo?.extra?.context as C;

function asText(value: unknown): string {
  return JSON.stringify(value);
}

/** The tool result of an operation's outcome: the value as structured content and as JSON text. */
function toCallResult(result: McpToolResult<unknown>): CallToolResult {
  if (result.ok) {
    const structuredContent = result.value as Record<string, unknown>;
    return { content: [{ type: 'text', text: asText(structuredContent) }], structuredContent };
  }
  const error: Record<string, unknown> = { code: result.code, message: result.message };
  if (result.details !== undefined) error.details = result.details;
  return { content: [{ type: 'text', text: asText(error) }], structuredContent: error, isError: true };
}

/** An error a service throws for a request it refuses (4xx) becomes an error of the domain. */
function domainError(error: unknown): McpToolResult<never> | undefined {
  if (!(error instanceof AppError) || error.status >= 500) return undefined;
  return { ok: false, code: error.key, message: error.message, ...(error.details ? { details: error.details } : {}) };
}

function buildServer<C>(options: McpEndpointOptions<C>, context: C): McpServer {
  const server = new McpServer(options.serverInfo, {
    // The list of operations never changes while a process runs: nothing to listen for.
    capabilities: { tools: { listChanged: false } },
    maxToolInputElements: MAX_TOOL_INPUT_ELEMENTS,
  });
  const registered = new Map<string, { tool: McpTool<C>; outputSchemaJson: Record<string, unknown> | undefined }>();
  for (const tool of options.tools) {
    const needed = tool.scopes;
    const entry = server.registerTool(
      tool.name,
      {
        title: tool.title,
        description: tool.description,
        inputSchema: tool.input,
        outputSchema: tool.output,
        annotations: tool.annotations,
        scopeChallenge:
          needed.length === 0 || !options.hasScope
            ? undefined
            : () => {
                const hasScope = options.hasScope!;
                if (needed.every((scope) => hasScope(context, scope))) return undefined;
                const scopes = needed as [string, ...string[]];
                return { scopes, errorDescription: `this operation needs scope ${needed.join(' ')}` };
              },
      },
      // Never reached: `tools/call` is answered by the handler below.
      () => ({ content: [] }),
    );
    registered.set(tool.name, { tool, outputSchemaJson: entry.outputSchemaJson });
  }
  // The SDK answers arguments its input schema refuses with an `isError` result; the protocol's
  // answer to invalid params is the JSON-RPC error -32602, which this handler gives.
  server.server.setRequestHandler('tools/call', async (request) => {
    const name = request.params.name;
    const found = registered.get(name);
    if (!found) throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Unknown tool: ${name}`);
    const { tool } = found;
    const started = performance.now();
    const report = (outcome: McpCallOutcome, code?: string) =>
      options.onToolCall?.(name, outcome, performance.now() - started, context, code);
    const args = request.params.arguments ?? {};
    if (exceedsElements(args, MAX_TOOL_INPUT_ELEMENTS)) {
      report('invalid_params');
      throw new ProtocolError(
        ProtocolErrorCode.InvalidParams,
        `Invalid arguments for tool ${name}: more than ${MAX_TOOL_INPUT_ELEMENTS} array elements and object members`,
      );
    }
    const parsed = safeParseInput(tool.input, args);
    if (!parsed.success) {
      report('invalid_params');
      throw new ProtocolError(ProtocolErrorCode.InvalidParams, invalidArgumentsMessage(name, parsed.error), {
        issues: parsed.error.issues.map((issue) => ({
          path: issue.path.map(String).join('.'),
          message: issue.message,
        })),
      });
    }
    let result: McpToolResult<unknown>;
    try {
      result = await tool.call(parsed.data, context);
    } catch (error) {
      const refused = domainError(error);
      if (!refused) {
        report('failed');
        options.onError?.(error, name, context);
        throw new ProtocolError(ProtocolErrorCode.InternalError, 'Internal error');
      }
      result = refused;
    }
    report(result.ok ? 'ok' : 'error', result.ok ? undefined : result.code);
    return server.server.projectCallToolResult(toCallResult(result), found.outputSchemaJson);
  });
  return server;
}

/** The web request the SDK reads: the Fastify request's URL, headers and (already parsed) body. */
function webRequest(request: FastifyRequest): Request {
  const headers = new Headers();
  for (const [name, value] of Object.entries(request.headers)) {
    if (value === undefined || HOP_BY_HOP.has(name)) continue;
    for (const one of Array.isArray(value) ? value : [value]) headers.append(name, one);
  }
  let url: URL;
  try {
    url = new URL(request.url, `http://${request.headers.host ?? 'localhost'}`);
  } catch {
    url = new URL(request.url, 'http://localhost');
  }
  return new Request(url, { method: 'POST', headers, body: JSON.stringify(request.body ?? null) });
}

/**
 * Serves `tools` at `POST path` (stateless Streamable HTTP); other methods are 405
 * with `Allow: POST`: the endpoint sends nothing unasked, so there is no stream to open.
 */
export function mountMcpEndpoint<C>(app: FastifyInstance, options: McpEndpointOptions<C>): McpHttpHandler {
  const handler = createMcpHandler((ctx) => buildServer(options, contextOf<C>(ctx.authInfo)), {
    // The operations send nothing before their result, so every answer is one JSON body.
    legacy: 'stateless',
  });
  app.addHook('onClose', async () => handler.close());

  app.route({
    method: 'POST',
    url: options.path,
    handler: async (request, reply) => {
      const context = await options.context(request);
      if (context instanceof HttpRefusal) {
        return reply.code(context.status).headers(context.headers).send(context.body);
      }
      const authInfo: AuthInfo = {
        token: '',
        clientId: options.clientId?.(context) ?? '',
        scopes: [],
        ...(options.resourceMetadataUrl ? { resourceMetadataUrl: options.resourceMetadataUrl } : {}),
        extra: { context },
      };
      const response = await handler.fetch(webRequest(request), { authInfo, parsedBody: request.body });
      reply.code(response.status);
      response.headers.forEach((value, name) => {
        if (name !== 'content-length') reply.header(name, value);
      });
      return reply.send(await response.text());
    },
  });
  app.route({
    method: ['GET', 'PUT', 'PATCH', 'DELETE'],
    url: options.path,
    handler: async () => {
      throw new AppError('METHOD_NOT_ALLOWED', 'this endpoint answers POST', { headers: { Allow: 'POST' } });
    },
  });
  return handler;
}
