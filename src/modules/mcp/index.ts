import { Counter, Histogram } from 'prom-client';
import { METRICS_PREFIX } from '../../kernel/metrics';
import { mountMcpEndpoint, type McpCallOutcome, type McpTool } from '../../kernel/mcp';
import { packageInfo } from '../../kernel/package-info';
import { hasScope, type Scope } from '../auth/scopes';
import type { Module, Services } from '../context';
import { authenticateMcp, clientIdOf, MCP_PATH, resourceMetadataUrl, type McpContext } from './mcp-auth';
import { stockTools } from './stock-tools';

/** The counters of `/mcp`'s operations, created with the services and registered with the metrics. */
interface McpMetrics {
  calls: Counter<'tool' | 'outcome'>;
  duration: Histogram<'tool'>;
}

declare module '../context' {
  interface Services {
    mcpMetrics: McpMetrics;
  }
}

/**
 * The operations of `/mcp`, in the order `tools/list` gives them.
 * Catalog operations (search_catalog, lookup_catalog, get_product) join here once the UCP module
 * exports them, through a context adapter from `McpContext` to theirs.
 */
const tools = (): McpTool<McpContext>[] => [...stockTools];

/** The authenticated MCP endpoint: `POST /mcp`, each operation gated by scopes and scoped to the tenant. */
export const mcpModule: Module = {
  name: 'mcp',
  services: () => ({
    mcpMetrics: {
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
    },
  }),
  metrics(registry, { mcpMetrics }) {
    registry.registerMetric(mcpMetrics.calls);
    registry.registerMetric(mcpMetrics.duration);
  },
  http(app, services: Services) {
    const onToolCall = (name: string, outcome: McpCallOutcome, ms: number, context: McpContext, code?: string) => {
      services.mcpMetrics.calls.inc({ tool: name, outcome });
      services.mcpMetrics.duration.observe({ tool: name }, ms / 1000);
      const { principal } = context;
      context.log.info(
        {
          tool: name,
          outcome,
          code,
          tenantId: principal.tenantId,
          clientId: clientIdOf(principal),
          actor: principal.actor.type,
          durationMs: Math.round(ms),
        },
        'mcp tool call',
      );
    };
    mountMcpEndpoint<McpContext>(app, {
      path: MCP_PATH,
      serverInfo: { name: 'commerce-platform-api', version: packageInfo.version },
      tools: tools(),
      context: (request) => authenticateMcp(services, request),
      hasScope: (context, scope) => hasScope(context.principal, scope as Scope),
      resourceMetadataUrl: resourceMetadataUrl(services),
      clientId: (context) => clientIdOf(context.principal),
      onToolCall,
      onError: (error, name, context) => context.log.error({ err: error, tool: name }, 'mcp tool failed'),
    });
  },
};
