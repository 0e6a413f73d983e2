import { Counter } from 'prom-client';
import { METRICS_PREFIX } from '../../kernel/metrics';
import { tracedRawAnswerer } from '../../kernel/tracing/http-server';
import type { Module } from '../context';
import { answerOnRawServer, mountEdgeDataPlane, rewriteEdgeHost } from './edge.http';
import { edgeOperations } from './edge.routes';
import { EDGE_PURGE_CHANNEL, EdgeService, PROXY_CHANGED_CHANNEL } from './edge.service';

declare module '../context' {
  interface Services {
    edge: EdgeService;
  }
}

/** The data plane: `/edge/{key}/...` and `{key}.{EDGE_DOMAIN}` served from the proxies' origins, cached. */
export const edgeModule: Module = {
  name: 'edge',
  services: ({ db, authenticator, config, notifications, log }) => {
    const edge = new EdgeService(db, authenticator, config.edge, (error) =>
      log.warn({ err: error }, 'edge: a cache invalidation was not announced to the other processes'),
    );
    // Changes and purges made by any process reach this one's configurations and cache.
    notifications.on(PROXY_CHANGED_CHANNEL, (key) => edge.forgetProxy(key));
    notifications.on(EDGE_PURGE_CHANNEL, (payload) => edge.receivePurge(payload));
    notifications.onReconnect(() => edge.forgetEverything());
    return { edge };
  },
  rest: edgeOperations,
  http: mountEdgeDataPlane,
  rewriteUrl: ({ config }) => rewriteEdgeHost(config.edge.domain),
  // Traced under the route of the data plane's Fastify routes, which answer the other requests.
  rawAnswerer: (services, kit) => tracedRawAnswerer(answerOnRawServer(services, kit), '/edge/:key/*'),
  metrics(registry, { edge }) {
    new Counter({
      name: `${METRICS_PREFIX}edge_cache_responses_total`,
      help:
        'Data plane answers by how the cache took part: HIT, STALE (expired, served while it is refreshed or ' +
        'on an origin failure), REVALIDATED (expired, confirmed by the origin with a 304) or MISS.',
      labelNames: ['result'],
      registers: [registry],
      // Totals kept by the service, copied on scrape.
      collect() {
        this.reset();
        for (const [result, count] of Object.entries(edge.stats.responses)) this.inc({ result }, count);
      },
    });
    new Counter({
      name: `${METRICS_PREFIX}edge_cache_served_bytes_total`,
      help: 'Body bytes the data plane answered from its cache.',
      registers: [registry],
      collect() {
        this.reset();
        this.inc(edge.stats.cachedBytes);
      },
    });
  },
};
