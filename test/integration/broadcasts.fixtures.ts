/**
 * Shared by the broadcast test files: an app whose webhooks may reach 127.0.0.1 with short
 * timeouts and backoffs, real HTTP receivers, and waiting for the background worker.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll } from 'vitest';
import { buildApp } from '../../src/app';
import { loadConfig } from '../../src/kernel/config';
import { createDb } from '../../src/kernel/db';
import { TEST_MASTER_KEY, type TestApp } from '../helpers/app';
import { createTestDatabase } from '../helpers/db';
import { createRestClient } from '../helpers/rest';

// The receivers run on 127.0.0.1, which webhooks may only reach when private addresses are allowed.
const env = {
  BROADCAST_TIMEOUT_MS: '300',
  BROADCAST_BACKOFF_MS: '20',
  BROADCAST_MAX_ATTEMPTS: '3',
  BROADCAST_ALLOW_PRIVATE_WEBHOOKS: 'true',
};

/** An app (closed after the file) that delivers broadcasts to 127.0.0.1 within milliseconds. */
export async function startBroadcastApp(): Promise<TestApp> {
  const databaseUrl = await createTestDatabase();
  const config = loadConfig({ DATABASE_URL: databaseUrl, MASTER_KEY: TEST_MASTER_KEY, LOG_LEVEL: 'silent', ...env });
  const db = createDb(databaseUrl, { poolSize: 5 });
  const { app, services } = await buildApp({ config, db, masterKey: TEST_MASTER_KEY });
  await app.ready();
  afterAll(async () => {
    await app.close();
    await db.$disconnect();
  });
  return { app, services, db, databaseUrl, config, rest: createRestClient(app) };
}

export interface Received {
  headers: IncomingMessage['headers'];
  body: string;
}

/** An HTTP receiver on 127.0.0.1 answering with `answer()` (undefined: never answers). */
export async function receiver(answer: () => number | undefined) {
  const received: Received[] = [];
  const hanging: ServerResponse[] = [];
  const server = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk) => (body += chunk));
    request.on('end', () => {
      received.push({ headers: request.headers, body });
      const status = answer();
      if (status === undefined) hanging.push(response);
      else response.writeHead(status).end(status >= 400 ? 'refused' : 'ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/stock`;
  afterAll(() => {
    for (const response of hanging) response.destroy();
    server.closeAllConnections();
    return new Promise<void>((resolve) => server.close(() => resolve()));
  });
  return { url, received, server };
}

/** A URL on 127.0.0.1 where nothing listens. */
export async function downUrl() {
  const server: Server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return `http://127.0.0.1:${port}/stock`;
}

/** Reads until `done` holds (the worker delivers in the background), for at most about 10 seconds. */
export async function until<T>(read: () => Promise<T>, done: (value: T) => boolean) {
  for (let attempt = 0; attempt < 200; attempt += 1) {
    const value = await read();
    if (done(value)) return value;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return read();
}
