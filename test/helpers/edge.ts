/**
 * Helpers for the edge data-plane tests: the application listening on 127.0.0.1 (the data plane
 * streams, so it is called over real sockets), origins on 127.0.0.1 that record what reached them,
 * and a plain node:http client that sends exactly the headers it is given.
 */
import http, { type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll } from 'vitest';
import { buildApp } from '../../src/app';
import { loadConfig } from '../../src/kernel/config';
import { createDb } from '../../src/kernel/db';
import type { TestApp } from './app';
import { TEST_MASTER_KEY } from './app';
import { createTestDatabase } from './db';
import { createRestClient } from './rest';

export interface EdgeTestApp extends TestApp {
  /** http://127.0.0.1:<port> */
  baseUrl: string;
  port: number;
}

/**
 * The whole application on a fresh database (or on `databaseUrl`, for a second process of a
 * deployment), listening on a free loopback port. Origins in the tests are on 127.0.0.1, so
 * private origins are allowed unless `env` says otherwise.
 */
export async function startEdgeApp(
  env: Record<string, string> = {},
  options: { databaseUrl?: string; authCacheTtlMs?: number } = {},
): Promise<EdgeTestApp> {
  const databaseUrl = options.databaseUrl ?? (await createTestDatabase());
  const config = loadConfig({
    DATABASE_URL: databaseUrl,
    MASTER_KEY: TEST_MASTER_KEY,
    LOG_LEVEL: 'silent',
    EDGE_ALLOW_PRIVATE_ORIGINS: 'true',
    ...env,
  });
  const db = createDb(databaseUrl, { poolSize: 5 });
  const { app, services } = await buildApp({
    config,
    db,
    masterKey: TEST_MASTER_KEY,
    authCacheTtlMs: options.authCacheTtlMs,
  });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const { port } = app.server.address() as AddressInfo;
  afterAll(async () => {
    await app.close();
    await db.$disconnect();
  });
  return {
    app,
    services,
    db,
    databaseUrl,
    config,
    rest: createRestClient(app),
    baseUrl: `http://127.0.0.1:${port}`,
    port,
  };
}

export interface OriginRequestRecord {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
}

export interface TestOrigin {
  /** http://127.0.0.1:<port> */
  url: string;
  port: number;
  /** Every request that reached the origin, in order. */
  requests: OriginRequestRecord[];
  close(): Promise<void>;
}

/** An origin server on 127.0.0.1 answering with `handler`; closed after the test file. */
export async function startOrigin(
  handler: (request: IncomingMessage, response: ServerResponse) => void,
): Promise<TestOrigin> {
  const requests: OriginRequestRecord[] = [];
  const server = http.createServer((request, response) => {
    requests.push({ method: request.method!, url: request.url!, headers: request.headers });
    handler(request, response);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  afterAll(close);
  return { url: `http://127.0.0.1:${port}`, port, requests, close };
}

export interface EdgeResponse {
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
  text: string;
  /** Parsed when the body is JSON. */
  json: any;
}

/** Sends one request and reads the whole answer. Rejects when the connection breaks mid-answer. */
export function edgeRequest(
  url: string,
  options: { method?: string; headers?: Record<string, string>; body?: string | Buffer } = {},
): Promise<EdgeResponse> {
  return new Promise((resolve, reject) => {
    // A body is sent with its length: node:http would send DELETE and OPTIONS bodies unframed.
    const length = options.body === undefined ? {} : { 'content-length': String(Buffer.byteLength(options.body)) };
    const request = http.request(
      url,
      { method: options.method ?? 'GET', headers: { ...length, ...options.headers }, agent: false },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('error', reject);
        response.on('end', () => {
          const body = Buffer.concat(chunks);
          const text = body.toString('utf8');
          let json: unknown;
          if (String(response.headers['content-type'] ?? '').includes('json') && text !== '') json = JSON.parse(text);
          resolve({ status: response.statusCode!, headers: response.headers, body, text, json });
        });
      },
    );
    request.on('error', reject);
    request.end(options.body);
  });
}

export const edgeGet = (url: string, headers: Record<string, string> = {}) => edgeRequest(url, { headers });

/** A proxy body for the REST API. */
export const proxyWith = (key: string, routes: unknown, extra: Record<string, unknown> = {}) => ({
  data: { key, routes, ...extra },
});
