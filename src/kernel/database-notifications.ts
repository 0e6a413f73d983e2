/**
 * PostgreSQL LISTEN/NOTIFY for keeping the in-memory state of every process of a deployment in
 * step: one dedicated connection per process listens on the channels subscribed to, and anything
 * may announce a change with `notify`. When the connection drops it is opened again with growing
 * pauses, and since notifications sent in between are lost, every `onReconnect` handler is then
 * told to drop what could be stale.
 */
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

export class DatabaseNotifications {
  private readonly handlers = new Map<string, ((payload: string) => void)[]>();
  private readonly reconnectHandlers: (() => void)[] = [];
  private client: pg.Client | null = null;
  private failures = 0;
  private everConnected = false;
  private stopped = false;
  private retry: NodeJS.Timeout | undefined;

  constructor(
    private readonly connection: pg.ClientConfig,
    private readonly logError: (error: unknown) => void,
    private readonly backoff: Backoff = { initialMs: 50, maxMs: 5_000 },
  ) {}

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

  /** Opens the listening connection; a failure is logged and retried in the background. */
  async start(): Promise<void> {
    this.stopped = false;
    await this.connect();
  }

  async stop(): Promise<void> {
    this.stopped = true;
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
