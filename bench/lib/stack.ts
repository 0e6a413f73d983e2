import { createServer, type RequestListener, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { buildApp } from '../../src/app';
import type { Fixture } from './fixture';
import type { Teardown } from './teardown';

/** A server under test: where to send requests. */
export interface RunningServer {
  /** e.g. http://127.0.0.1:41234 (no trailing slash). */
  origin: string;
}

/** The whole application exactly as src/main.ts builds it, listening on a free loopback port. */
export async function startFullStack(fixture: Fixture, teardown: Teardown): Promise<RunningServer> {
  // config.logLevel is 'silent' (see the fixture): log lines would cost throughput and clutter output.
  const { app } = await buildApp({ config: fixture.config, db: fixture.db, masterKey: fixture.masterKey });
  teardown.add('close the full stack', () => app.close());
  await app.listen({ port: 0, host: '127.0.0.1' });
  const { port } = app.server.address() as AddressInfo;
  return { origin: `http://127.0.0.1:${port}` };
}

/** Serves `listener` (or a prepared server) with plain node:http on a free loopback port. */
export async function startNodeServer(
  listener: RequestListener | Server,
  name: string,
  teardown: Teardown,
): Promise<RunningServer> {
  const server = typeof listener === 'function' ? createServer(listener) : listener;
  teardown.add(`close ${name}`, () => closeNodeServer(server));
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  return { origin: `http://127.0.0.1:${port}` };
}

function closeNodeServer(server: Server): Promise<void> {
  if (!server.listening) return Promise.resolve();
  return new Promise((resolve, reject) => {
    server.close((error) => (error ? reject(error) : resolve()));
    // Load generators leave keep-alive sockets open; close() alone would wait for them.
    server.closeAllConnections();
  });
}
