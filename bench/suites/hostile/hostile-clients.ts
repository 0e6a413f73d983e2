/**
 * Child process that sends the hostile requests (forked by index.ts). Its sending and its timers
 * stay off the event loop being measured, and its CPU time off the servers' CPU per request: a
 * blocked server cannot delay the timeouts that give up on it.
 *
 * Protocol: the parent sends `start`, gets `started` once every loop has sent its first request,
 * later sends `stop` and gets `stopped` with the counts once no request is in flight any more.
 */
import { Agent, request } from 'node:http';

export interface HostileRequest {
  url: string;
  method: 'POST' | 'PUT' | 'PATCH';
  headers: Record<string, string>;
  /** The bodies sent, one after another in turn. */
  bodies: string[];
}

export interface StartMessage {
  type: 'start';
  request: HostileRequest;
  /** Loops sending `request` one after another, each over its own keep-alive connection. */
  clients: number;
  /** A request not answered after this long is given up (its connection closed) and counted as a timeout. */
  timeoutMs: number;
  /** No loop starts a request after this long, even without `stop`: the parent may be blocked. */
  maxSeconds: number;
}

export interface StopMessage {
  type: 'stop';
}

export interface HostileSummary {
  sent: number;
  /** Requests answered, by HTTP status. */
  statuses: Record<string, number>;
  timeouts: number;
  /** Requests that failed otherwise (connection reset before an answer, say), by error code. */
  errors: Record<string, number>;
  /** Median and slowest time to a complete answer, in milliseconds (null when none was answered). */
  answerMs: { p50: number; max: number } | null;
  /** Seconds from `start` to the last request's end. */
  seconds: number;
  /** Whether `maxSeconds` ended the sending before `stop` came. */
  stoppedByLimit: boolean;
  /** CPU time (user + system) this process of hostile clients took, in seconds: the cores it took from the rest. */
  cpuSeconds: number;
}

export type ReplyMessage = { type: 'started' } | { type: 'stopped'; summary: HostileSummary };

type Outcome = { kind: 'answered'; status: number; ms: number } | { kind: 'timeout' } | { kind: 'error'; code: string };

if (!process.send) throw new Error('hostile-clients.ts must be started by bench/suites/hostile (fork with IPC)');
const reply = (message: ReplyMessage) => process.send!(message);

let stopping = false;
let stoppedByLimit = false;
let finished: Promise<HostileSummary> | undefined;

/** Sends `hostile` once: resolves with its status once its answer is read, or with why there is none. */
function send(agent: Agent, hostile: HostileRequest, body: Buffer, timeoutMs: number): Promise<Outcome> {
  const started = performance.now();
  const signal = AbortSignal.timeout(timeoutMs);
  return new Promise((resolve) => {
    const outgoing = request(
      hostile.url,
      {
        method: hostile.method,
        headers: { ...hostile.headers, 'content-length': String(body.length) },
        agent,
        signal,
      },
      (response) => {
        const status = response.statusCode ?? 0;
        // The status is the answer; a connection closed while the rest is read still answered it.
        response.on('error', () => {});
        response.once('close', () => resolve({ kind: 'answered', status, ms: performance.now() - started }));
        response.resume();
      },
    );
    outgoing.on('error', (error: NodeJS.ErrnoException) =>
      resolve(signal.aborted ? { kind: 'timeout' } : { kind: 'error', code: error.code ?? error.name }),
    );
    outgoing.end(body);
  });
}

async function run({ request: hostile, clients, timeoutMs, maxSeconds }: StartMessage): Promise<HostileSummary> {
  const startedAt = performance.now();
  const cpuAtStart = process.cpuUsage();
  const limit = setTimeout(() => {
    stoppedByLimit = !stopping;
    stopping = true;
  }, maxSeconds * 1000);
  const agent = new Agent({ keepAlive: true, maxSockets: clients });
  const bodies = hostile.bodies.map((body) => Buffer.from(body));
  const statuses: Record<string, number> = {};
  const errors: Record<string, number> = {};
  const answerMs: number[] = [];
  let sent = 0;
  let timeouts = 0;

  const loop = async () => {
    while (!stopping) {
      const outcome = send(agent, hostile, bodies[sent % bodies.length]!, timeoutMs);
      if (++sent === clients) reply({ type: 'started' });
      const result = await outcome;
      if (result.kind === 'answered') {
        statuses[result.status] = (statuses[result.status] ?? 0) + 1;
        answerMs.push(result.ms);
      } else if (result.kind === 'timeout') timeouts += 1;
      else errors[result.code] = (errors[result.code] ?? 0) + 1;
    }
  };
  await Promise.all(Array.from({ length: clients }, loop));
  clearTimeout(limit);
  agent.destroy();

  answerMs.sort((a, b) => a - b);
  return {
    sent,
    statuses,
    timeouts,
    errors,
    answerMs: answerMs.length > 0 ? { p50: answerMs[Math.floor(answerMs.length / 2)]!, max: answerMs.at(-1)! } : null,
    seconds: (performance.now() - startedAt) / 1000,
    stoppedByLimit,
    cpuSeconds: (({ user, system }) => (user + system) / 1e6)(process.cpuUsage(cpuAtStart)),
  };
}

process.on('message', (message: StartMessage | StopMessage) => {
  if (message.type === 'start') finished = run(message);
  else {
    stopping = true;
    void finished?.then((summary) => reply({ type: 'stopped', summary }));
  }
});
// The parent closing the IPC channel (on exit or teardown) ends this process.
process.on('disconnect', () => process.exit(0));
