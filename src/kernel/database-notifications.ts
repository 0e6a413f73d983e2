/**
 * PostgreSQL LISTEN/NOTIFY for keeping the in-memory state of every process of a deployment in
 * step: one dedicated connection per process listens on the channels subscribed to, and anything
 * may announce a change with `notify`. When the connection drops it is opened again with growing
 * pauses, and since notifications sent in between are lost, every `onReconnect` handler is then
 * told to drop what could be stale.
 *
 * A transaction pooler (PgBouncer in transaction mode) accepts LISTEN but hands the server session
 * that ran it to other clients, and drops the notifications that session receives: the listener
 * would hear nothing, silently. So the listener proves it hears: at start, a notification sent
 * through the pool must come back on it (or the start fails), and again every `watchIntervalMs`
 * while running (when it does not, caches are dropped and the listener reconnects).
 */
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import type { DbOrTx } from './db';

/** Pauses between connection attempts: doubled after each failure, up to the maximum. */
export interface Backoff {
  initialMs: number;
  maxMs: number;
}

/** The pause before attempt `failures + 1` (pure). */
export const backoffDelay = (backoff: Backoff, failures: number): number =>
  Math.min(backoff.maxMs, backoff.initialMs * 2 ** Math.min(failures, 30));

/** NOTIFY payloads must stay under 8000 bytes. */
export const MAX_PAYLOAD_BYTES = 7_900;

const CHANNEL_PATTERN = /^[a-z_][a-z0-9_]{0,62}$/;

/** The channel of the notifications a listener sends itself through the pool, to prove it hears. */
export const PROBE_CHANNEL = 'commerce_listener_probe';

/** Raised at start when a notification sent through the pool never reached the listener. */
export class NotificationsNotHeard extends Error {}

export interface HearingCheck {
  /** Sends a notification the way the application does (through its pool). */
  send(channel: string, payload: string): Promise<void>;
  /** How long a probe may take to come back. */
  timeoutMs?: number;
  /** How often a running listener is checked again; 0: only at start. */
  watchIntervalMs?: number;
}

export class DatabaseNotifications {
  private readonly handlers = new Map<string, ((payload: string) => void)[]>();
  private readonly reconnectHandlers: (() => void)[] = [];
  private client: pg.Client | null = null;
  private failures = 0;
  private everConnected = false;
  private stopped = false;
  private retry: NodeJS.Timeout | undefined;
  private watch: NodeJS.Timeout | undefined;
  private readonly probes = new Map<string, () => void>();

  constructor(
    private readonly connection: pg.ClientConfig,
    private readonly logError: (error: unknown) => void,
    private readonly backoff: Backoff = { initialMs: 50, maxMs: 5_000 },
    private readonly hearing?: HearingCheck,
  ) {
    this.on(PROBE_CHANNEL, (payload) => this.probes.get(payload)?.());
  }

  /** Calls `handler` with the payload of every notification on `channel`, from any process; before `start`. */
  on(channel: string, handler: (payload: string) => void): void {
    if (!CHANNEL_PATTERN.test(channel)) throw new Error(`not a channel name: ${channel}`);
    this.handlers.set(channel, [...(this.handlers.get(channel) ?? []), handler]);
  }

  /** Calls `handler` after the connection came back: notifications may have been missed meanwhile. */
  onReconnect(handler: () => void): void {
    this.reconnectHandlers.push(handler);
  }

  /** The server process id of the listening connection, while connected. */
  get backendPid(): number | undefined {
    return (this.client as (pg.Client & { processID?: number }) | null)?.processID;
  }

  /**
   * Opens the listening connection; a failure to connect is logged and retried in the background.
   * Once connected, a notification sent through the pool must come back on it, or this throws
   * `NotificationsNotHeard` (the listener is behind a transaction pooler).
   */
  async start(): Promise<void> {
    this.stopped = false;
    await this.connect();
    if (!this.hearing || !this.client) return;
    if (!(await this.hears())) {
      await this.stop();
      throw new NotificationsNotHeard('a notification sent through the pool did not reach the listener');
    }
    const interval = this.hearing.watchIntervalMs ?? 30_000;
    if (interval > 0) {
      this.watch = setInterval(() => void this.checkHearing(), interval);
      this.watch.unref();
    }
  }

  /** Whether a notification sent through the pool now reaches the listener in time. */
  async hears(): Promise<boolean> {
    if (!this.hearing || !this.client) return false;
    const token = randomUUID();
    let heard!: () => void;
    const arrived = new Promise<boolean>((resolve) => (heard = () => resolve(true)));
    this.probes.set(token, heard);
    let timer: NodeJS.Timeout | undefined;
    try {
      await this.hearing.send(PROBE_CHANNEL, token);
      const timeout = new Promise<boolean>((resolve) => {
        timer = setTimeout(() => resolve(false), this.hearing!.timeoutMs ?? 2_000);
      });
      return await Promise.race([arrived, timeout]);
    } finally {
      clearTimeout(timer);
      this.probes.delete(token);
    }
  }

  /** A running listener that no longer hears drops what could be stale and connects again. */
  private async checkHearing() {
    if (this.stopped || !this.client) return;
    const heard = await this.hears().catch((error) => {
      this.logError(error);
      return true;
    });
    if (heard || this.stopped || !this.client) return;
    this.logError(new Error('database notifications went quiet: dropping cached state and reconnecting the listener'));
    // Ending the connection drops what could be stale and reconnects (see `lost`).
    await this.client.end().catch(() => {});
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.watch);
    clearTimeout(this.retry);
    const client = this.client;
    this.client = null;
    await client?.end().catch(() => {});
  }

  private async connect(): Promise<void> {
    const client = new pg.Client({ ...this.connection, application_name: 'commerce-notifications' });
    // Errors of an idle connection arrive as events; 'end' follows them.
    client.on('error', (error) => this.logError(error));
    client.on('end', () => this.lost(client));
    client.on('notification', ({ channel, payload }) => {
      for (const handler of this.handlers.get(channel) ?? []) {
        try {
          handler(payload ?? '');
        } catch (error) {
          this.logError(error);
        }
      }
    });
    try {
      await client.connect();
      for (const channel of this.handlers.keys()) await client.query(`LISTEN ${channel}`);
    } catch (error) {
      client.removeAllListeners('end');
      await client.end().catch(() => {});
      this.logError(error);
      this.scheduleRetry();
      return;
    }
    if (this.stopped) return void (await client.end().catch(() => {}));
    this.client = client;
    this.failures = 0;
    if (this.everConnected) this.dropStale();
    this.everConnected = true;
  }

  private lost(client: pg.Client) {
    if (this.client !== client) return;
    this.client = null;
    // Nothing is heard until the connection is back: what this process holds may already be stale.
    this.dropStale();
    if (!this.stopped) this.scheduleRetry();
  }

  private scheduleRetry() {
    if (this.stopped) return;
    const delay = backoffDelay(this.backoff, this.failures);
    this.failures += 1;
    this.retry = setTimeout(() => void this.connect(), delay);
    this.retry.unref();
  }

  private dropStale() {
    for (const handler of this.reconnectHandlers) {
      try {
        handler();
      } catch (error) {
        this.logError(error);
      }
    }
  }
}

/**
 * Announces `payload` on `channel` to every listening process, this one included; inside a
 * transaction, once it commits.
 */
export async function notify(db: DbOrTx, channel: string, payload: string): Promise<void> {
  await db.$executeRaw`SELECT pg_notify(${channel}, ${payload})`;
}
