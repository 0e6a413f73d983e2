/**
 * Child process that generates the load (forked by load.ts). Keeping autocannon out of the
 * benchmark process leaves that process's CPU time to the servers under test, so the CPU time it
 * spends per request can be measured with process.cpuUsage().
 *
 * Protocol: the parent sends { id, options } and gets back { id, result } or { id, error }.
 */
import autocannon, { type Options, type Result } from 'autocannon';

export interface RunMessage {
  id: number;
  options: Options;
}

export interface ResultMessage {
  id: number;
  /** The parts of autocannon's result that load.ts reads (the full one is large). */
  result?: Pick<Result, 'duration' | 'errors' | 'timeouts' | 'non2xx' | 'statusCodeStats'> & {
    completed: number;
    p50: number;
    p99: number;
  };
  error?: string;
}

if (!process.send) throw new Error('load-runner.ts must be started by bench/lib/load.ts (fork with IPC)');

process.on('message', (message: RunMessage) => {
  const reply = (response: ResultMessage) => process.send!(response);
  Promise.resolve(autocannon(message.options)).then(
    (result) =>
      reply({
        id: message.id,
        result: {
          duration: result.duration,
          errors: result.errors,
          timeouts: result.timeouts,
          non2xx: result.non2xx,
          statusCodeStats: result.statusCodeStats,
          completed: result.requests.total,
          p50: result.latency.p50,
          p99: result.latency.p99,
        },
      }),
    (error: unknown) => reply({ id: message.id, error: String((error as Error)?.stack ?? error) }),
  );
});
// The parent closing the IPC channel (on exit or teardown) ends this process.
process.on('disconnect', () => process.exit(0));
