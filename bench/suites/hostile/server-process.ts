/**
 * The service the hostile suite loads, in a process of its own (forked by index.ts), as a
 * deployment runs it: its event loop and heap hold only this service, not what the benchmark's
 * other suites left in the benchmark's process, so the delays it reports are the service's own.
 *
 * Protocol: the parent sends `start` and gets `listening` with the port; `reset` restarts the
 * event-loop delay histogram (answered `reset`); `read` answers `figures` with the histogram's p99
 * and max and this process's CPU time so far. Disconnecting ends the process.
 */
import type { AddressInfo } from 'node:net';
import { monitorEventLoopDelay, type IntervalHistogram } from 'node:perf_hooks';
import { buildApp } from '../../../src/app';
import { loadConfig } from '../../../src/kernel/config';
import { createDb } from '../../../src/kernel/db';

export interface ServerStartMessage {
  type: 'start';
  databaseUrl: string;
  masterKey: string;
  poolSize?: number;
  /** Sampling interval of the delay histogram, in ms. */
  resolutionMs: number;
}

export type ServerRequest = ServerStartMessage | { type: 'reset' } | { type: 'read' };

export type ServerReply =
  | { type: 'listening'; port: number }
  | { type: 'reset' }
  | { type: 'figures'; p99Ns: number; maxNs: number; cpuMicros: number };

if (!process.send) throw new Error('server-process.ts must be started by bench/suites/hostile (fork with IPC)');
const reply = (message: ServerReply) => process.send!(message);
let delay: IntervalHistogram | undefined;

process.on('message', async (message: ServerRequest) => {
  if (message.type === 'start') {
    const config = loadConfig({
      DATABASE_URL: message.databaseUrl,
      MASTER_KEY: message.masterKey,
      LOG_LEVEL: 'silent',
      HOST: '127.0.0.1',
      PORT: '0',
    });
    const db = createDb(message.databaseUrl, { poolSize: message.poolSize });
    const { app } = await buildApp({ config, db, masterKey: message.masterKey });
    await app.listen({ port: 0, host: '127.0.0.1' });
    process.once('disconnect', () => {
      app.server.closeAllConnections();
      void app.close().finally(() => db.$disconnect().finally(() => process.exit(0)));
    });
    delay = monitorEventLoopDelay({ resolution: message.resolutionMs });
    delay.enable();
    reply({ type: 'listening', port: (app.server.address() as AddressInfo).port });
  } else if (message.type === 'reset') {
    delay?.reset();
    reply({ type: 'reset' });
  } else {
    const cpu = process.cpuUsage();
    reply({
      type: 'figures',
      p99Ns: delay?.percentile(99) ?? 0,
      maxNs: delay?.max ?? 0,
      cpuMicros: cpu.user + cpu.system,
    });
  }
});
