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
