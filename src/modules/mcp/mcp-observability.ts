/**
 * What `/mcp` tells the operator: a counter of calls per operation and outcome and a histogram of
 * their duration in `/metrics`, and one log line per call naming the operation, its outcome, the
 * tenant and the client (the OAuth client, or the API key) behind the token.
 */
import { Counter, Histogram } from 'prom-client';
import type { FastifyBaseLogger } from 'fastify';
import { METRICS_PREFIX } from '../../kernel/metrics';
import type { McpCallOutcome } from '../../kernel/mcp';
import type { Principal } from '../../kernel/principal';

export interface McpMetrics {
  calls: Counter<'tool' | 'outcome'>;
  duration: Histogram<'tool'>;
}

/** The metrics, not yet in a registry (the module's `metrics` registers them). */
export const createMcpMetrics = (): McpMetrics => ({
  calls: new Counter({
    name: `${METRICS_PREFIX}mcp_tool_calls_total`,
    help: 'Calls of the operations of /mcp, by operation and outcome (ok, error, invalid_params, failed).',
    labelNames: ['tool', 'outcome'],
    registers: [],
  }),
  duration: new Histogram({
    name: `${METRICS_PREFIX}mcp_tool_call_duration_seconds`,
    help: 'Time spent in the operations of /mcp, by operation.',
    labelNames: ['tool'],
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registers: [],
  }),
});

/** The OAuth client behind the credential, or the API key's id. */
export function clientIdOf(principal: Principal): string {
  const { actor } = principal;
  return actor.type === 'user' ? actor.clientId : actor.id;
}

/** Counts a call and logs it (`onToolCall` of the endpoint). */
export const toolCallRecorder =
  (metrics: McpMetrics) =>
  (
    name: string,
    outcome: McpCallOutcome,
    ms: number,
    context: { principal: Principal; log: FastifyBaseLogger },
    code?: string,
  ) => {
    metrics.calls.inc({ tool: name, outcome });
    metrics.duration.observe({ tool: name }, ms / 1000);
    const { principal } = context;
    context.log.info(
      {
        tool: name,
        outcome,
        ...(code ? { code } : {}),
        tenantId: principal.tenantId,
        clientId: clientIdOf(principal),
        credential: principal.actor.type,
        durationMs: Math.round(ms),
      },
      'mcp tool call',
    );
  };
