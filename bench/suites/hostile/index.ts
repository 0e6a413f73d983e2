import { fork, type ChildProcess } from 'node:child_process';
import type { LoadRequest, LoadResult } from '../../lib/load';
import type { Measurement } from '../../lib/report';
import { probe, type Suite } from '../../lib/suite';
import type { Teardown } from '../../lib/teardown';
import type { HostileSummary, ReplyMessage, StartMessage, StopMessage } from './hostile-clients';
import type { ServerReply, ServerRequest } from './server-process';

const PROXIES_PATH = '/api/storage/edge/proxies';
const INDEXES_PATH = '/api/instant/indexes';
const MEASURED_CLIENTS = 50;
const HOSTILE_CLIENTS = 10;
const DEPTH = 100_000;
const HOSTILE_TIMEOUT_MS = 30_000;
/**
 * Seconds the hostile clients may outlast the phase's nominal length (warm-up + duration) when no
 * stop comes: shorter than the timeout, so when a server stuck on the bodies times out the first
 * requests of a short phase, no second round of bodies follows them.
 */
const STOP_MARGIN_SECONDS = 10;
/** Sampling interval of the event-loop delay histogram: 1 ms keeps a 50 ms goal well above its granularity. */
const RESOLUTION_MS = 1;
const GOAL = { ratio: 0.9, maxDelayMs: 50 };

/** `{"data":[[[…]]]}` nested `depth` deep: valid JSON of about 2 × depth bytes. */
const deepBody = (depth: number) => `{"data":${'['.repeat(depth)}${']'.repeat(depth)}}`;
/** Bodies just under the 1 MiB limit, of the cheap-to-send shapes that are costly to walk. */
const WIDE_BYTES = 1024 * 1024 - 100;
/** `{"data":{"k0":0,"k1":0,…}}`: about 90 000 small keys. */
const manyKeysBody = (bytes: number) => {
  const members: string[] = [];
  for (let index = 0, size = 12; size < bytes; index += 1) {
    const member = `"k${index}":0`;
    members.push(member);
    size += member.length + 1;
  }
  return `{"data":{${members.join(',')}}}`;
};
/** `{"data":[0,0,…]}` and `{"data":["a","a",…]}`: half a million small values, a quarter million small strings. */
const longArrayBody = (bytes: number) => `{"data":[${new Array(Math.floor((bytes - 11) / 2)).fill('0').join(',')}]}`;
const manyStringsBody = (bytes: number) =>
  `{"data":[${new Array(Math.floor((bytes - 11) / 4)).fill('"a"').join(',')}]}`;
const WIDE_SHAPES =
  'about 90 000 small keys, half a million 0s in an array, a quarter of a million one-character strings';
const spaced = (value: number) => String(value).replace(/\B(?=(\d{3})+$)/g, ' ');
const ms = (value: number) => (value >= 100 ? value.toFixed(0) : value.toFixed(1));

/** The hostile clients' process (hostile-clients.ts): started for one phase, stopped at its end. */
class HostileClients {
  private constructor(private readonly child: ChildProcess) {}

  /** Forks the clients and resolves once each has sent its first request. */
  static async start(teardown: Teardown, start: Omit<StartMessage, 'type'>): Promise<HostileClients> {
    const child = fork(new URL('./hostile-clients.ts', import.meta.url), [], {
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    teardown.add('stop the hostile clients', () => {
      if (child.connected) child.disconnect();
    });
    const clients = new HostileClients(child);
    await clients.exchange({ type: 'start', ...start }, 'started');
    return clients;
  }

  /** Stops the sending and resolves, once no request is in flight, with what the clients saw. */
  async stop(): Promise<HostileSummary> {
    const reply = await this.exchange({ type: 'stop' }, 'stopped');
    this.child.disconnect();
    return (reply as Extract<ReplyMessage, { type: 'stopped' }>).summary;
  }

  private exchange(message: StartMessage | StopMessage, expected: ReplyMessage['type']): Promise<ReplyMessage> {
    return new Promise((resolve, reject) => {
      const onMessage = (reply: ReplyMessage) => {
        if (reply.type !== expected) return;
        this.child.off('exit', onExit);
        this.child.off('message', onMessage);
        resolve(reply);
      };
      const onExit = (code: number | null, signal: NodeJS.Signals | null) =>
        reject(new Error(`hostile clients exited (${signal ?? code}) before "${expected}"`));
      this.child.on('message', onMessage);
      this.child.once('exit', onExit);
      this.child.send(message);
    });
  }
}

/**
 * The service under load, in a process of its own (server-process.ts), as a deployment runs it:
 * its event loop and heap hold nothing of the benchmark's other suites.
 */
class ServiceProcess {
  private constructor(
    private readonly child: ChildProcess,
    readonly origin: string,
  ) {}

  static async start(teardown: Teardown, databaseUrl: string, masterKey: string): Promise<ServiceProcess> {
    const child = fork(new URL('./server-process.ts', import.meta.url), [], {
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
      execArgv: [...process.execArgv],
    });
    teardown.add('stop the service process', () => {
      if (child.connected) child.disconnect();
    });
    const reply = await exchange(
      child,
      { type: 'start', databaseUrl, masterKey, resolutionMs: RESOLUTION_MS },
      'listening',
    );
    return new ServiceProcess(child, `http://127.0.0.1:${(reply as { port: number }).port}`);
  }

  async resetDelay(): Promise<void> {
    await exchange(this.child, { type: 'reset' }, 'reset');
  }

  async figures(): Promise<{ p99Ms: number; maxMs: number; cpuMicros: number }> {
    const reply = (await exchange(this.child, { type: 'read' }, 'figures')) as Extract<
      ServerReply,
      { type: 'figures' }
    >;
    // How late the histogram's timer fired, in ms: its interval minus its resolution.
    return {
      p99Ms: Math.max(0, reply.p99Ns / 1e6 - RESOLUTION_MS),
      maxMs: Math.max(0, reply.maxNs / 1e6 - RESOLUTION_MS),
      cpuMicros: reply.cpuMicros,
    };
  }
}

function exchange(child: ChildProcess, message: ServerRequest, expected: ServerReply['type']): Promise<ServerReply> {
  return new Promise((resolve, reject) => {
    const onMessage = (reply: ServerReply) => {
      if (reply.type !== expected) return;
      child.off('exit', onExit);
      child.off('message', onMessage);
      resolve(reply);
    };
    const onExit = (code: number | null, signal: NodeJS.Signals | null) =>
      reject(new Error(`service process exited (${signal ?? code}) before "${expected}"`));
    child.on('message', onMessage);
    child.once('exit', onExit);
    child.send(message);
  });
}

function describeHostile(summary: HostileSummary, what = 'bodies'): string {
  const count = (record: Record<string, number>) => Object.values(record).reduce((sum, n) => sum + n, 0);
  const list = (record: Record<string, number>) =>
    Object.entries(record)
      .map(([key, n]) => `${key}: ${n}`)
      .join(', ');
  const answered = count(summary.statuses);
  const failed = count(summary.errors);
  return (
    `Hostile input: the ${HOSTILE_CLIENTS} hostile clients sent ${summary.sent} ${what} in ${summary.seconds.toFixed(1)} s; ` +
    `${answered} answered${summary.answerMs ? ` (${list(summary.statuses)}; p50 ${ms(summary.answerMs.p50)} ms, slowest ${ms(summary.answerMs.max)} ms)` : ''}, ` +
    `${summary.timeouts} timed out after ${HOSTILE_TIMEOUT_MS / 1000} s; their process took ` +
    `${Math.round((summary.cpuSeconds / summary.seconds) * 100)}% of a core` +
    `${failed > 0 ? `, ${failed} failed otherwise (${list(summary.errors)})` : ''}.` +
    (summary.stoppedByLimit
      ? ` They stopped sending at their time limit (the phase's length + ${STOP_MARGIN_SECONDS} s), before the phase ended: part of it ran without them.`
      : '')
  );
}

const notes = [
  `Hostile input: GET ${PROXIES_PATH}/{key} (full stack, API key, as in the HTTP stack rows, served by the service in a process of its own as a deployment runs it, so its heap and event loop hold nothing of the other suites) from ${MEASURED_CLIENTS} autocannon clients, first alone, then while ${HOSTILE_CLIENTS} more clients, in a process of their own, each POST ${PROXIES_PATH} with the API key and {"data":[[[…]]]} nested ${spaced(DEPTH)} deep (${Math.round(deepBody(DEPTH).length / 1024)} KiB), one request after another over keep-alive connections, each given up after ${HOSTILE_TIMEOUT_MS / 1000} s (a timeout). The two phases run one after the other, not interleaved: the hostile clients send through the whole of theirs, warm-up included, and the requests in flight when it ends are waited for. CPU µs/req is the service process's, and in the second row includes its work on the hostile bodies.`,
  `Hostile input, event-loop delay: monitorEventLoopDelay (${RESOLUTION_MS} ms resolution) in the service process, reset when a phase's measured rounds begin; a figure is how late its timer fired, i.e. how long anything arriving then waited before the server could look at it.`,
];

/**
 * Whether hostile input starves everyone else: the rate and latency of normal requests, and the
 * event-loop delay of the server, with and without clients sending deeply nested JSON bodies, and
 * while they send bodies of the widest cheap shapes (small keys, long arrays of small values, many
 * small strings) just under the size limit.
 */
export const hostileSuite: Suite = {
  name: 'hostile input',
  notes,
  async run({ fixture, teardown, load, measure, log }) {
    const full = await ServiceProcess.start(teardown, fixture.databaseUrl, fixture.masterKey);
    const authorization = `Bearer ${fixture.apiKey}`;
    const get: LoadRequest = {
      url: `${full.origin}${PROXIES_PATH}/${encodeURIComponent(fixture.proxyKey)}`,
      headers: { authorization },
      connections: MEASURED_CLIENTS,
    };
    const answer = await probe(get);
    if (answer.status !== 200) throw new Error(`GET proxy answered ${answer.status}: ${JSON.stringify(answer.body)}`);

    const measurePhase = async (): Promise<{ result: LoadResult; delay: { p99Ms: number; maxMs: number } }> => {
      const [result] = await measure([get], {
        beforeMeasuring: () => full.resetDelay(),
        cpuMicros: async () => (await full.figures()).cpuMicros,
      });
      return { result: result!, delay: await full.figures() };
    };

    log('phase 1: no hostile clients');
    const alone = await measurePhase();
    log(`phase 2: ${HOSTILE_CLIENTS} clients sending ${spaced(DEPTH)}-deep bodies`);
    const hostile = await HostileClients.start(teardown, {
      request: {
        url: `${full.origin}${PROXIES_PATH}`,
        method: 'POST',
        headers: { authorization, 'content-type': 'application/json' },
        bodies: [deepBody(DEPTH)],
      },
      clients: HOSTILE_CLIENTS,
      timeoutMs: HOSTILE_TIMEOUT_MS,
      // A server stuck on the bodies delays the end of the phase (and the stop) by as long as it walks them.
      maxSeconds: load.warmupSeconds + load.durationSeconds + STOP_MARGIN_SECONDS,
    });
    const attacked = await measurePhase();
    log('waiting for the hostile requests in flight');
    const summary = await hostile.stop();

    log(`phase 3: ${HOSTILE_CLIENTS} clients sending 1 MiB bodies of small keys, values and strings`);
    const wideClients = await HostileClients.start(teardown, {
      request: {
        url: `${full.origin}${INDEXES_PATH}`,
        method: 'POST',
        headers: { authorization, 'content-type': 'application/json' },
        bodies: [manyKeysBody(WIDE_BYTES), longArrayBody(WIDE_BYTES), manyStringsBody(WIDE_BYTES)],
      },
      clients: HOSTILE_CLIENTS,
      timeoutMs: HOSTILE_TIMEOUT_MS,
      maxSeconds: load.warmupSeconds + load.durationSeconds + STOP_MARGIN_SECONDS,
    });
    const wide = await measurePhase();
    log('waiting for the hostile requests in flight');
    const wideSummary = await wideClients.stop();
    const wideRatio = wide.result.requestsPerSecond / alone.result.requestsPerSecond;

    const ratio = attacked.result.requestsPerSecond / alone.result.requestsPerSecond;
    notes.push(
      `Hostile input, figures: event-loop delay p99 / max ${ms(alone.delay.p99Ms)} / ${ms(alone.delay.maxMs)} ms with no hostile clients, ` +
        `${ms(attacked.delay.p99Ms)} / ${ms(attacked.delay.maxMs)} ms while they send; GET rate ${ratio.toFixed(2)}× and p99 ${ms(attacked.result.p99Ms)} ms ` +
        `(${ms(alone.result.p99Ms)} ms alone). Goal: at least ${GOAL.ratio.toFixed(2)}× the rate and a max delay under ${GOAL.maxDelayMs} ms.`,
      describeHostile(summary),
      `Hostile input, wide bodies: while ${HOSTILE_CLIENTS} clients POST ${INDEXES_PATH} bodies of about 1 MiB in turn (${WIDE_SHAPES}), ` +
        `event-loop delay p99 / max ${ms(wide.delay.p99Ms)} / ${ms(wide.delay.maxMs)} ms; GET rate ${wideRatio.toFixed(2)}× and p99 ${ms(wide.result.p99Ms)} ms. ` +
        `Goal: at least ${GOAL.ratio.toFixed(2)}× the rate and a max delay under ${GOAL.maxDelayMs} ms.`,
      describeHostile(wideSummary, 'wide bodies'),
    );
    return [
      {
        id: 'hostile.none',
        label: `GET proxy, ${MEASURED_CLIENTS} clients: no hostile clients`,
        result: alone.result,
      },
      {
        id: 'hostile.deep',
        label: `GET proxy, ${MEASURED_CLIENTS} clients, while ${HOSTILE_CLIENTS} clients send ${spaced(DEPTH)}-deep bodies`,
        result: attacked.result,
        baselines: ['hostile.none'],
      },
      {
        id: 'hostile.wide',
        label: `GET proxy, ${MEASURED_CLIENTS} clients, while ${HOSTILE_CLIENTS} clients send 1 MiB bodies of small keys, values and strings`,
        result: wide.result,
        baselines: ['hostile.none'],
      },
    ] satisfies Measurement[];
  },
};
