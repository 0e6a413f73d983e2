import type { FastifyRequest } from 'fastify';
import { AppError, notFound } from '../../kernel/errors';
import { limitByAddress } from '../../kernel/rate-limit';
import { mountMcpEndpoint } from '../../kernel/mcp';
import { PROXY_KEY_PATTERN } from '../proxies';
import type { Module, Services } from '../context';
import type { CatalogToolContext } from './catalog-core';
import { catalogTools } from './catalog-tools';
import { UcpCatalogService } from './catalog.service';
import { storefrontLimit, ucpOperations } from './ucp.routes';
import { UCP_VERSION } from './ucp.schemas';
import {
  createStorefrontMetrics,
  storefrontCallRecorder,
  type StorefrontContext,
  type StorefrontMetrics,
} from './storefront-observability';

declare module '../context' {
  interface Services {
    ucp: UcpCatalogService;
    ucpStorefrontMetrics: StorefrontMetrics;
  }
}

export { catalogTools, tenantCatalogTools } from './catalog-tools';
export type { CatalogToolContext } from './catalog-core';
export { UCP_VERSION } from './ucp.schemas';

/** The catalog operations' context for a tenant's named catalog (its `/mcp`). */
export const tenantCatalog = (services: Services, tenantId: string): CatalogToolContext =>
  services.ucp.forTenant(tenantId);

/**
 * Whether the key serves a public storefront catalog (`/ucp/{key}`): what an anonymous lookup
 * there would be allowed.
 */
export async function servesStorefrontCatalog(services: Services, key: string): Promise<boolean> {
  try {
    await services.ucp.forProxy(key);
    return true;
  } catch (error) {
    if (error instanceof AppError) return false;
    throw error;
  }
}

/** The public storefront catalog's MCP endpoint: no token, the address's rate limit, the key's settings. */
function mountStorefrontMcp(app: Parameters<NonNullable<Module['http']>>[0], services: Services) {
  const limit = limitByAddress(services.rateLimits);
  mountMcpEndpoint<StorefrontContext>(app, {
    path: '/ucp/:key/mcp',
    serverInfo: { name: 'storefront-catalog', title: 'Storefront catalog (UCP)', version: UCP_VERSION },
    tools: catalogTools,
    async context(request: FastifyRequest) {
      await limit(storefrontLimit.name, storefrontLimit.perMinute(services), request);
      const { key } = request.params as { key: string };
      if (!PROXY_KEY_PATTERN.test(key)) throw notFound(`no search engine with key "${key}"`);
      return { ...(await services.ucp.forProxy(key)), key, log: request.log };
    },
    onToolCall: storefrontCallRecorder(services.ucpStorefrontMetrics),
    onError: (error, name, context) =>
      context.log.error(
        { err: error, operation: name, proxyKey: context.key },
        'ucp: a storefront catalog operation failed',
      ),
  });
}

/** The catalog for agents: the UCP catalog capability over a tenant's search index, with live stock. */
export const ucpModule: Module = {
  name: 'ucp',
  services: (services) => ({
    ucp: new UcpCatalogService(services as Services),
    ucpStorefrontMetrics: createStorefrontMetrics(),
  }),
  metrics(registry, { ucpStorefrontMetrics }) {
    registry.registerMetric(ucpStorefrontMetrics.calls);
    registry.registerMetric(ucpStorefrontMetrics.duration);
  },
  rest: ucpOperations,
  http: mountStorefrontMcp,
};
