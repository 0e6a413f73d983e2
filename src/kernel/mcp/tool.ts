/**
 * An operation of an MCP endpoint (a "tool" in the protocol's words): its name, its input and
 * output schemas (zod, advertised as JSON Schema), the scopes a caller needs, and what it does. A
 * module declares its operations with this contract; `mountMcpEndpoint` serves them.
 */
import type { z } from 'zod';

/** What an operation answers: a value of its output schema, or an error of the domain. */
export type McpToolResult<T> = { ok: true; value: T } | { ok: false; code: string; message: string; details?: unknown };

export interface McpTool<C, I extends z.ZodType = z.ZodType, O extends z.ZodType = z.ZodType> {
  name: string;
  title: string;
  description: string;
  /** Every scope the caller's token needs (empty for public endpoints). */
  scopes: readonly string[];
  input: I;
  output: O;
  annotations?: { readOnlyHint?: boolean; destructiveHint?: boolean; idempotentHint?: boolean };
  call(args: z.output<I>, context: C): Promise<McpToolResult<z.output<O>>>;
}

/** Declares an operation with its schemas' types inferred (the result is assignable to `McpTool<C>`). */
export const defineMcpTool = <C, I extends z.ZodType, O extends z.ZodType>(tool: McpTool<C, I, O>): McpTool<C> =>
  tool as unknown as McpTool<C>;

/** A successful result. */
export const ok = <T>(value: T): McpToolResult<T> => ({ ok: true, value });

/** An error of the domain: answered as a result with `isError`, never as a protocol error. */
export const fail = (code: string, message: string, details?: unknown): McpToolResult<never> =>
  details === undefined ? { ok: false, code, message } : { ok: false, code, message, details };
