import { resolve } from 'node:path';
import fastifyStatic from '@fastify/static';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { packageInfo } from '../../kernel/package-info';
import type { Module } from '../context';
import { loadContracts, type ServedDocument } from './contracts';
import { documentationPages, documentationRenderer } from './documentation';
import { docsPage, documentationPage, homePage, PAGE_CSP, type Link } from './pages';

const root = resolve(import.meta.dirname, '../../..');
const { name, version } = packageInfo;
const TITLE = 'Commerce Platform API';

const LINKS: Link[] = [
  { rel: 'docs', href: '/docs', title: 'API reference' },
  { rel: 'graphiql', href: '/graphql', title: 'GraphiQL' },
  { rel: 'health', href: '/healthz', title: 'Health' },
  { rel: 'openapi-yaml', href: '/openapi.yaml', title: 'OpenAPI contract (YAML)' },
  { rel: 'openapi-json', href: '/openapi.json', title: 'OpenAPI contract (JSON)' },
  { rel: 'graphql-schema', href: '/graphql/schema.graphql', title: 'GraphQL schema (SDL)' },
];

/** Answers a document with its ETag, or 304 when the client has it already. */
function sendDocument(request: FastifyRequest, reply: FastifyReply, document: ServedDocument) {
  reply.header('ETag', document.etag).header('Cache-Control', 'public, max-age=300');
  const known = request.headers['if-none-match'];
  if (known && known.split(',').some((tag) => tag.trim() === document.etag)) return reply.status(304).send();
  return reply.type(document.type).send(document.body);
}

/** A browser asks for HTML; curl and API clients (any or JSON accepted) get JSON. */
const prefersHtml = (request: FastifyRequest) => String(request.headers.accept ?? '').includes('text/html');

/**
 * What a person or a code generator opens first: the home page, the API reference, the contracts
 * and the documentation.
 */
export const referenceModule: Module = {
  name: 'reference',
  async http(app, services) {
    // Built on the first request: parsing and printing the contracts takes a few hundred
    // milliseconds that a start need not spend.
    let contracts: ReturnType<typeof loadContracts> | undefined;
    const loaded = () => (contracts ??= loadContracts(services.baseUrl));
    app.get('/openapi.yaml', (request, reply) => sendDocument(request, reply, loaded().yaml));
    app.get('/openapi.json', (request, reply) => sendDocument(request, reply, loaded().json));
    app.get('/graphql/schema.graphql', (request, reply) => sendDocument(request, reply, loaded().sdl));
    // The repository's documentation, read-only at its own paths (see documentation.ts).
    const documentation = documentationPages(root);
    const render = documentationRenderer(root);
    app.get('/', (request, reply) => {
      if (!prefersHtml(request)) return reply.send({ name, version, links: LINKS });
      return reply
        .type('text/html; charset=utf-8')
        .header('Content-Security-Policy', PAGE_CSP)
        .send(homePage(TITLE, version, LINKS, documentation));
    });
    for (const page of documentation)
      app.get(page.path, (_request, reply) =>
        reply
          .type('text/html; charset=utf-8')
          .header('Content-Security-Policy', PAGE_CSP)
          .send(documentationPage(TITLE, page, render(page))),
      );
    app.get('/docs', (_request, reply) =>
      reply.type('text/html; charset=utf-8').header('Content-Security-Policy', PAGE_CSP).send(docsPage(TITLE)),
    );
    // The renderer's bundle from node_modules and the page's own script, from this origin.
    await app.register(async (assets) => {
      await assets.register(fastifyStatic, {
        root: [
          resolve(import.meta.dirname, 'assets'),
          resolve(root, 'node_modules/@scalar/api-reference/dist/browser'),
        ],
        prefix: '/docs/assets/',
        allowedPath: (path) => ['/docs.js', '/standalone.js'].includes(path),
        maxAge: 3_600_000,
      });
    });
  },
};
