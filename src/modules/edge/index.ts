import type { Module } from '../context';
import { mountEdgeDataPlane, rewriteEdgeHost } from './edge.http';
import { edgeOperations } from './edge.routes';
import { EdgeService } from './edge.service';

declare module '../context' {
  interface Services {
    edge: EdgeService;
  }
}

/** The data plane: `/edge/{key}/...` and `{key}.{EDGE_DOMAIN}` served from the proxies' origins, cached. */
export const edgeModule: Module = {
  name: 'edge',
  services: ({ db, authenticator, config }) => ({ edge: new EdgeService(db, authenticator, config.edge) }),
  rest: edgeOperations,
  http: mountEdgeDataPlane,
  rewriteUrl: ({ config }) => rewriteEdgeHost(config.edge.domain),
};
