import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { buildApp } from '../../../src/app';
import type { LoadRequest } from '../../lib/load';
import type { Measurement } from '../../lib/report';
import { startNodeServer, type RunningServer } from '../../lib/stack';
import type { Suite } from '../../lib/suite';
import type { Fixture } from '../../lib/fixture';
import type { Teardown } from '../../lib/teardown';
import sharp from 'sharp';
import { findNginx, startNginxCache } from './nginx';

/** Size of the page the origin serves: a small HTML page or JSON document. */
const BODY_BYTES = 4 * 1024;
const PROXY_KEY = 'bench-edge';

/** A photo for the image variant rows, made once. */
const photo = await sharp({ create: { width: 1600, height: 1200, channels: 3, background: '#c85028' } })
  .jpeg()
  .toBuffer();

/** The origin: a fixed page, and a photo under `.jpg` paths, answered from memory. */
function createOriginListener(): http.RequestListener {
  const body = Buffer.alloc(BODY_BYTES, 'a');
  return (request, response) => {
    if (request.url?.endsWith('.jpg')) {
      response.writeHead(200, { 'content-type': 'image/jpeg', 'content-length': String(photo.length) });
      return void response.end(photo);
    }
    response.writeHead(200, {
      'content-type': 'text/html; charset=utf-8',
      'content-length': String(body.length),
      etag: '"v1"',
    });
    response.end(body);
  };
}

/**
 * The floor for a reverse proxy: node:http passing each request to the origin over kept-alive
 * connections and piping the answer back, with no routing, no cache and no header rewriting.
 */
function createBareReverseProxy(origin: URL): http.RequestListener {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 256 });
  return (request, response) => {
    const upstream = http.request(
      {
        agent,
        host: origin.hostname,
        port: origin.port,
        method: request.method,
        path: request.url,
        headers: { ...request.headers, host: origin.host },
      },
      (answer) => {
        response.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(response);
      },
    );
    upstream.on('error', () => response.writeHead(502).end());
    request.pipe(upstream);
  };
}

/** The application as main.ts builds it, except that its origins may be on 127.0.0.1 (the benchmark's are). */
async function startEdgeStack(fixture: Fixture, teardown: Teardown): Promise<RunningServer> {
  const config = { ...fixture.config, edge: { ...fixture.config.edge, allowPrivateOrigins: true } };
  const { app } = await buildApp({ config, db: fixture.db, masterKey: fixture.masterKey });
  teardown.add('close the edge stack', () => app.close());
  await app.listen({ port: 0, host: '127.0.0.1' });
  return { origin: `http://127.0.0.1:${(app.server.address() as AddressInfo).port}` };
}

/**
 * The edge data plane: a cached hit and an uncached pass-through against the origin served
 * directly and against a bare node:http reverse proxy, all in one run.
 */
export const edgeSuite: Suite = {
  name: 'edge proxy data plane',
  notes: [
    `Edge rows: GET through /edge/${PROXY_KEY}/... of the full application; the origin is a node:http server in the same process answering a ${BODY_BYTES / 1024} KiB page from memory.`,
    '"bare reverse proxy" is node:http piping to the origin over kept-alive connections with no routing, cache, header rewriting or safety checks: the floor for a pass-through, not a competitor.',
    'The cached-hit row never reaches the origin (X-Cache: HIT), so it is bounded by the HTTP stack, not by the origin; the pass-through row goes to the origin on every request.',
    '"nginx proxy_cache" is nginx (one worker process, access log off) caching the same page of the same origin: the yardstick for the cached hit, present when an nginx binary is on the PATH (Debian: nginx-light).',
  ],
  async run({ fixture, teardown, measure, log }) {
    const origin = await startNodeServer(createOriginListener(), 'edge origin', teardown);
    const bare = await startNodeServer(createBareReverseProxy(new URL(origin.origin)), 'bare reverse proxy', teardown);
    const edge = await startEdgeStack(fixture, teardown);
    const nginxBinary = findNginx();
    const nginx = nginxBinary && (await startNginxCache(nginxBinary, new URL(origin.origin), '/page', teardown));
    if (!nginx)
      log('edge: no nginx binary on the PATH, so the nginx proxy_cache row is skipped (apt-get install nginx-light)');
    await fixture.services.proxies.create(fixture.principal, {
      key: PROXY_KEY,
      routes: [
        {
          path: '/cached',
          origin: { uri: `${origin.origin}/page` },
          settings: { cache: { age: 3600, is_public: true } },
        },
        { path: '/live', origin: { uri: `${origin.origin}/page` } },
        {
          path: '/compressed',
          origin: { uri: `${origin.origin}/page` },
          settings: { cache: { age: 3600, is_public: true, compression: { is_enabled: true } } },
        },
        {
          path: '/images',
          origin: { uri: `${origin.origin}/page` },
          settings: { cache: { age: 3600, is_public: true }, image: { is_enabled: true, sizes: ['320x0'] } },
        },
      ],
    });

    /** `bytes`: the body length each case answers, BODY_BYTES unless said (fetch undoes the compression). */
    const cases: (Omit<Measurement, 'result'> & { request: LoadRequest; cache?: string; bytes?: number })[] = [
      {
        id: 'edge.origin',
        label: 'GET page: origin served directly',
        request: { url: `${origin.origin}/page/index.html` },
      },
      {
        id: 'edge.bare-proxy',
        label: 'GET page: bare node:http reverse proxy',
        request: { url: `${bare.origin}/page/index.html` },
        baselines: ['edge.origin'],
      },
      ...(nginx
        ? [
            {
              id: 'edge.nginx',
              label: 'GET page: nginx proxy_cache, cached hit',
              request: { url: `${nginx.origin}/index.html` },
              baselines: ['edge.origin'],
              cache: 'HIT',
            },
          ]
        : []),
      {
        id: 'edge.pass',
        label: 'GET page: edge, uncached route (to origin)',
        request: { url: `${edge.origin}/edge/${PROXY_KEY}/live/index.html` },
        baselines: ['edge.origin', 'edge.bare-proxy'],
        cache: 'MISS',
      },
      {
        id: 'edge.hit',
        label: 'GET page: edge, cached hit',
        request: { url: `${edge.origin}/edge/${PROXY_KEY}/cached/index.html` },
        baselines: ['edge.origin', 'edge.bare-proxy', ...(nginx ? ['edge.nginx'] : [])],
        cache: 'HIT',
      },
      {
        id: 'edge.hit-compressed',
        label: 'GET page: edge, cached hit, brotli (Accept-Encoding: gzip, br)',
        request: {
          url: `${edge.origin}/edge/${PROXY_KEY}/compressed/index.html`,
          headers: { 'accept-encoding': 'gzip, deflate, br' },
        },
        baselines: ['edge.hit', ...(nginx ? ['edge.nginx'] : [])],
        cache: 'HIT',
      },
      {
        id: 'edge.image-hit',
        label: 'GET image: edge, cached 320 px WebP variant of a 1600 × 1200 JPEG',
        request: { url: `${edge.origin}/edge/${PROXY_KEY}/images/photo.jpg?w=320&format=webp` },
        baselines: ['edge.hit'],
        cache: 'HIT',
        bytes: -1,
      },
    ];

    // Each case must answer the page before it is loaded; the cached case is warmed into the cache.
    for (const { id, request, cache, bytes = BODY_BYTES } of cases) {
      if (cache === 'HIT') await (await fetch(request.url, { headers: request.headers })).arrayBuffer();
      const response = await fetch(request.url, { headers: request.headers });
      const body = Buffer.from(await response.arrayBuffer());
      if (response.status !== 200 || (bytes !== -1 && body.length !== bytes))
        throw new Error(`${id}: ${request.url} answered ${response.status} with ${body.length} bytes`);
      if (cache && response.headers.get('x-cache') !== cache)
        throw new Error(`${id}: expected X-Cache ${cache}, got ${response.headers.get('x-cache')}`);
    }
    log('edge: every case answers the page');

    const results = await measure(cases.map((c) => c.request));
    return cases.map(({ id, label, baselines }, index) => ({ id, label, baselines, result: results[index]! }));
  },
};
