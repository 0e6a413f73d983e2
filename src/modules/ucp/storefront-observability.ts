/**
 * What the public storefront catalogs' MCP endpoints (`/ucp/{key}/mcp`) tell the operator: calls
 * per operation and outcome and their duration in `/metrics` (series of their own, apart from the
 * authenticated `/mcp`), and one log line per call naming the operation, its outcome and the key.
 */
import type { FastifyBaseLogger } from 'fastify';
import { Counter, Histogram } from 'prom-client';
import type { McpCallOutcome } from '../../kernel/mcp';
import { METRICS_PREFIX } from '../../kernel/metrics';
import type { CatalogToolContext } from './catalog-core';

/** A storefront operation's context: the key's catalog, the key, and the request's logger. */
export interface StorefrontContext extends CatalogToolContext {
  key: string;
  log: FastifyBaseLogger;
}

export interface StorefrontMetrics {
  calls: Counter<'tool' | 'outcome'>;
  duration: Histogram<'tool'>;
}

/** The metrics, not yet in a registry (the module's `metrics` registers them). */
export const createStorefrontMetrics = (): StorefrontMetrics => ({
  calls: new Counter({
    name: `${METRICS_PREFIX}ucp_storefront_tool_calls_total`,
    help: 'Calls of the operations of the storefront catalogs (/ucp/{key}/mcp), by operation and outcome.',
    labelNames: ['tool', 'outcome'],
    registers: [],
  }),
  duration: new Histogram({
    name: `${METRICS_PREFIX}ucp_storefront_tool_call_duration_seconds`,
    help: 'Time spent in the operations of the storefront catalogs (/ucp/{key}/mcp), by operation.',
    labelNames: ['tool'],
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registers: [],
  }),
});

/** Counts a call and logs it (`onToolCall` of the endpoint). */
export const storefrontCallRecorder =
  (metrics: StorefrontMetrics) =>
  (name: string, outcome: McpCallOutcome, ms: number, context: StorefrontContext, code?: string) => {
    metrics.calls.inc({ tool: name, outcome });
    metrics.duration.observe({ tool: name }, ms / 1000);
    context.log.info(
      { tool: name, outcome, ...(code ? { code } : {}), proxyKey: context.key, durationMs: Math.round(ms) },
      'storefront catalog tool call',
    );
  };
