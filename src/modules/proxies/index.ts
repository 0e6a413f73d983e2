import type { Module } from '../context';
import { proxyOperations } from './proxies.routes';
import { ProxyService } from './proxies.service';

declare module '../context' {
  interface Services {
    proxies: ProxyService;
  }
}

/** Edge proxy configuration: which origin serves each path of a proxy key, cached and authenticated how. */
export const proxiesModule: Module = {
  name: 'proxies',
  // A changed proxy is served in its new form at once by this process's edge.
  services: (services) => ({
    proxies: new ProxyService(services.db, services.cursors, (key) => services.edge.forgetProxy(key)),
  }),
  rest: proxyOperations,
};

/** What a proxy key may look like, for the modules that take one in a URL. */
export { PROXY_KEY_PATTERN } from './proxies.schemas';
/** How the edge's data plane and searching through a proxy key read a proxy (see `proxy-reads.ts`). */
export { proxyOfKey, proxyVersionOfKey, proxyWithSearchSettings, tenantHoldsProxy } from './proxy-reads';
export type { ProxyVersionRow } from './proxy-reads';
