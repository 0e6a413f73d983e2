import { resolve } from 'node:path';
import fastifyStatic from '@fastify/static';
import type { FastifyInstance, FastifyReply } from 'fastify';

/** Same origin only; Monaco sets styles inline and runs its workers from files of this origin. */
const CSP =
  "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; " +
  "font-src 'self' data:; connect-src 'self'; worker-src 'self' blob:; base-uri 'none'; frame-ancestors 'none'";

export const GRAPHIQL_PAGE = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>GraphiQL: Commerce Platform API</title><link rel="icon" href="data:,">
<link rel="stylesheet" href="/graphql/graphiql/assets/graphiql.css">
<style>html,body,#root{height:100%;margin:0}</style></head>
<body><div id="root">Loading GraphiQL...</div><script src="/graphql/graphiql/assets/yoga-graphiql.umd.js"></script>
<script src="/graphql/graphiql/graphiql.js"></script></body></html>`;

/** Serves GraphiQL's files (graphql-yoga's build, from node_modules) and the page's script. */
export async function mountGraphiQLAssets(app: FastifyInstance) {
  await app.register(async (scope) => {
    await scope.register(fastifyStatic, {
      root: resolve(import.meta.dirname, '../../../node_modules/@graphql-yoga/graphiql/dist'),
      prefix: '/graphql/graphiql/assets/',
      maxAge: 3_600_000,
    });
    scope.get('/graphql/graphiql/graphiql.js', (_request, reply) =>
      reply.sendFile('graphiql.js', resolve(import.meta.dirname, 'graphiql')),
    );
  });
}

export const sendGraphiQL = (reply: FastifyReply) =>
  reply.type('text/html; charset=utf-8').header('Content-Security-Policy', CSP).send(GRAPHIQL_PAGE);
