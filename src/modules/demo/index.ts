import { resolve } from 'node:path';
import fastifyStatic from '@fastify/static';
import type { FastifyReply } from 'fastify';
import { AppError } from '../../kernel/errors';
import type { Module } from '../context';
import { servesStorefrontCatalog } from '../ucp';
import { DEMO_CSP, demoPage, missingPage } from './demo.page';

/** A proxy key, as the proxies module allows it (a DNS label): anything else is no key at all. */
const PROXY_KEY = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;

function sendPage(reply: FastifyReply, status: number, html: string) {
  return reply
    .status(status)
    .headers({
      'Content-Type': 'text/html; charset=utf-8',
      'Cache-Control': 'no-store',
      'Content-Security-Policy': DEMO_CSP,
      'X-Content-Type-Options': 'nosniff',
      'Referrer-Policy': 'no-referrer',
    })
    .send(html);
}

/**
 * `GET /demo/{proxy key}`: a storefront over a public search engine (search as you type, facets,
 * sorts, highlights, clicks and views measured, and whether each product is in stock when the key
 * serves a storefront catalog), built only on the public endpoints, as a shop's own front end would be.
 */
export const demoModule: Module = {
  name: 'demo',
  async http(app, services) {
    app.get<{ Params: { key: string } }>('/demo/:key', async (request, reply) => {
      const { key } = request.params;
      if (!PROXY_KEY.test(key)) return sendPage(reply, 404, missingPage(key, 'No search engine has this key'));
      try {
        // The engine's access rule decides: unknown, inactive, private or without search settings is no storefront.
        await services.search.search.getSettings(null, key);
      } catch (error) {
        if (!(error instanceof AppError)) throw error;
        const reason =
          error.key === 'UNAUTHORIZED'
            ? 'This search engine is private (its proxy requires a token); the demo store shows public ones'
            : error.key === 'FORBIDDEN'
              ? 'This search engine is suspended'
              : 'No public search engine has this key';
        return sendPage(reply, error.key === 'UNAUTHORIZED' ? 403 : error.status, missingPage(key, reason));
      }
      return sendPage(reply, 200, demoPage(key, { catalog: await servesStorefrontCatalog(services, key) }));
    });
    await app.register(async (assets) => {
      await assets.register(fastifyStatic, {
        root: resolve(import.meta.dirname, 'assets'),
        prefix: '/demo/assets/',
        allowedPath: (path) => ['/demo.js', '/demo.css'].includes(path),
        maxAge: 3_600_000,
      });
    });
  },
};
