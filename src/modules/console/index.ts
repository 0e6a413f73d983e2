import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import fastifyStatic from '@fastify/static';
import type { Module } from '../context';

/** The built console (scripts/build-console.mjs writes it during `npm install` and `npm start`). */
const DIST = resolve(import.meta.dirname, '../../../console/dist');

/**
 * The console calls only this service's public API (same origin), with a token it got from the
 * service's own OAuth pages: no script, style or connection goes anywhere else.
 */
export const CONSOLE_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
  "base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

const notBuilt = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Console not built</title></head>
<body><main><h1>The console is not built</h1><p>Run <code>npm install</code> (with the development
dependencies) or <code>npm start</code>, which build it from <code>console/</code>.</p></main></body></html>`;

/**
 * `GET /console/`: the shop operators' console, a single-page application built from `console/`
 * that signs in through this service's OAuth pages (authorization code with PKCE) and then works
 * only through the public REST and GraphQL APIs with the user's token.
 */
export const consoleModule: Module = {
  name: 'console',
  async http(app) {
    app.get('/console', async (_request, reply) => reply.redirect('/console/', 301));
    await app.register(async (scope) => {
      scope.addHook('onSend', async (request, reply, payload) => {
        reply.headers({
          'Content-Security-Policy': CONSOLE_CSP,
          'X-Content-Type-Options': 'nosniff',
          'Referrer-Policy': 'no-referrer',
        });
        // The page itself is never cached (a new build takes effect at once); its files are named by content.
        if (!request.url.startsWith('/console/assets/')) reply.header('Cache-Control', 'no-store');
        return payload;
      });
      if (!existsSync(resolve(DIST, 'index.html'))) {
        scope.get('/console/*', async (_request, reply) =>
          reply.status(503).type('text/html; charset=utf-8').send(notBuilt),
        );
        return;
      }
      await scope.register(fastifyStatic, {
        root: DIST,
        prefix: '/console/',
        index: ['index.html'],
        wildcard: true,
        allowedPath: (path) => !path.startsWith('/.'),
        maxAge: 31_536_000_000,
        immutable: true,
      });
    });
  },
};
