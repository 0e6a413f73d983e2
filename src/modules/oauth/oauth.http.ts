import type { FastifyInstance } from 'fastify';
import type { Services } from '../context';
import { mountOAuthPages } from './pages/pages.routes';
import { mountWellKnown } from './well-known.routes';

/** Mounts the OAuth endpoints outside /api: the login and consent page and the /.well-known documents. */
export function mountOAuthHttp(app: FastifyInstance, services: Services) {
  // RFC 6749 section 5: nothing from the OAuth API may be cached, errors included.
  app.addHook('onRequest', async (request, reply) => {
    if (request.url.startsWith('/api/oauth/')) reply.header('Cache-Control', 'no-store');
  });
  mountWellKnown(app, services);
  mountOAuthPages(app, services);
}
