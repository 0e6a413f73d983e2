import { Counter } from 'prom-client';
import { METRICS_PREFIX } from '../../kernel/metrics';
import { tracedRawAnswerer } from '../../kernel/tracing/http-server';
import type { Module } from '../context';
import { EdgeAnalyticsService } from './analytics/analytics.service';
import { MAX_METRIC_PROXIES, OTHER_PROXIES } from './analytics/traffic-log';
import { answerOnRawServer, mountEdgeDataPlane, rewriteEdgeHost } from './edge.http';
import { edgeOperations } from './edge.routes';
import { EDGE_PURGE_CHANNEL, EdgeService, PROXY_CHANGED_CHANNEL } from './edge.service';

declare module '../context' {
  interface Services {
    edge: EdgeService;
    edgeAnalytics: EdgeAnalyticsService;
  }
}

/** The data plane: `/edge/{key}/...` and `{key}.{EDGE_DOMAIN}` served from the proxies' origins, cached. */
export const edgeModule: Module = {
  name: 'edge',
  services: ({ db, authenticator, config, notifications, log }) => {
    const edge = new EdgeService(db, authenticator, config.edge, (error, what) =>
      log.warn({ err: error }, `edge: ${what}`),
    );
    // Changes and purges made by any process reach this one's configurations and cache.
    notifications.on(PROXY_CHANGED_CHANNEL, (payload) => {
      const [key = '', version] = payload.split(' ');
      edge.forgetProxy(key, version);
    });
    notifications.on(EDGE_PURGE_CHANNEL, (payload) => edge.receivePurge(payload));
    notifications.onReconnect(() => edge.forgetEverything());
    return { edge, edgeAnalytics: new EdgeAnalyticsService(db, edge.traffic) };
  },
  rest: edgeOperations,
  // Traffic counted since the last batch is written before the database closes.
  close: ({ edge }) => edge.traffic.flush(),
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
    // Per proxy, bounded: the first MAX_METRIC_PROXIES proxies served have series of their own.
    new Counter({
      name: `${METRICS_PREFIX}edge_proxy_responses_total`,
      help:
        `Data plane answers per proxy and cache result (HIT, MISS, STALE, REVALIDATED): the first ` +
        `${MAX_METRIC_PROXIES} proxies this process served, the others added up under proxy="${OTHER_PROXIES}".`,
      labelNames: ['proxy', 'result'],
      registers: [registry],
      collect() {
        this.reset();
        for (const [proxy, counts] of edge.traffic.totals) {
          this.inc({ proxy, result: 'HIT' }, counts.hits);
          this.inc({ proxy, result: 'MISS' }, counts.misses);
          this.inc({ proxy, result: 'STALE' }, counts.stale);
          this.inc({ proxy, result: 'REVALIDATED' }, counts.revalidated);
        }
      },
    });
    new Counter({
      name: `${METRICS_PREFIX}edge_proxy_bytes_total`,
      help:
        'Body bytes per proxy: served to clients (direction="served") and received from the origin ' +
        `(direction="origin"), for the same proxies as ${METRICS_PREFIX}edge_proxy_responses_total.`,
      labelNames: ['proxy', 'direction'],
      registers: [registry],
      collect() {
        this.reset();
        for (const [proxy, counts] of edge.traffic.totals) {
          this.inc({ proxy, direction: 'served' }, counts.bytesServed);
          this.inc({ proxy, direction: 'origin' }, counts.bytesFromOrigin);
        }
      },
    });
    new Counter({
      name: `${METRICS_PREFIX}edge_proxy_origin_errors_total`,
      help: 'Origin requests per proxy that failed or timed out, and 5xx answers, for the same proxies.',
      labelNames: ['proxy'],
      registers: [registry],
      collect() {
        this.reset();
        for (const [proxy, counts] of edge.traffic.totals) this.inc({ proxy }, counts.originErrors);
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

/**
 * Which addresses an origin may have (public ones only, unless EDGE_ALLOW_PRIVATE_ORIGINS), for
 * every module that connects to an address a tenant gave (channels' webhooks).
 */
export { OriginAddressError, resolveOrigin } from './origin-address';
