import { mountMcpEndpoint, type McpTool } from '../../kernel/mcp';
import { packageInfo } from '../../kernel/package-info';
import { hasScope, type Scope } from '../../kernel/scopes';
import type { Module, Services } from '../context';
import { authenticateMcp, MCP_PATH, resourceMetadataUrl, type McpContext } from './mcp-auth';
import { clientIdOf, createMcpMetrics, toolCallRecorder, type McpMetrics } from './mcp-observability';
import { tenantCatalog, tenantCatalogTools } from '../ucp';
import { stockTools } from './stock-tools';

declare module '../context' {
  interface Services {
    mcpMetrics: McpMetrics;
    /** Every scope an operation of `/mcp` needs, in a stable order: its challenge and metadata name them. */
    mcpScopes: string[];
  }
}

/**
 * The operations of `/mcp`, in the order `tools/list` gives them: the UCP catalog operations over
 * the catalog the token's tenant names (the same operations the public storefront serves), then
 * the stock operations.
 */
const tools = (): McpTool<McpContext>[] => [
  ...tenantCatalogTools.map((tool): McpTool<McpContext> => ({
    ...tool,
    call: (args, { services, principal }) => tool.call(args, tenantCatalog(services, principal.tenantId)),
  })),
  ...stockTools,
];

/** The authenticated MCP endpoint: `POST /mcp`, each operation gated by scopes and scoped to the tenant. */
export const mcpModule: Module = {
  name: 'mcp',
  services: () => ({
    mcpMetrics: createMcpMetrics(),
    mcpScopes: [...new Set(tools().flatMap((tool) => tool.scopes))].sort(),
  }),
  metrics(registry, { mcpMetrics }) {
    registry.registerMetric(mcpMetrics.calls);
    registry.registerMetric(mcpMetrics.duration);
  },
  http(app, services: Services) {
    mountMcpEndpoint<McpContext>(app, {
      path: MCP_PATH,
      serverInfo: { name: 'commerce-platform-api', version: packageInfo.version },
      tools: tools(),
      context: (request) => authenticateMcp(services, request),
      hasScope: (context, scope) => hasScope(context.principal, scope as Scope),
      resourceMetadataUrl: resourceMetadataUrl(services),
      clientId: (context) => clientIdOf(context.principal),
      onToolCall: toolCallRecorder(services.mcpMetrics),
      onError: (error, name, context) => context.log.error({ err: error, tool: name }, 'mcp tool failed'),
    });
  },
};
