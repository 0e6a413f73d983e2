/**
 * The data plane's traffic per proxy, counted in memory on the request path (a hit costs a map
 * lookup and a few increments) and added to PostgreSQL per hour in batches, as upserts that add,
 * so the processes of a deployment merge their counts. What a crashed process had not written yet
 * is lost, which analytics tolerate. Totals since the start feed the metrics, for a bounded number
 * of proxies.
 */
import type { Db } from '../../../kernel/db';
import * as repository from './traffic.repository';

const FLUSH_INTERVAL_MS = 10_000;
/** Rows (distinct proxy and hour) one statement writes. */
const MAX_BATCH = 1000;
const HOUR_MS = 3_600_000;
/** Proxies with series of their own in the metrics; the others are added up under OTHER_PROXIES. */
export const MAX_METRIC_PROXIES = 50;
export const OTHER_PROXIES = '_other';

export type TrafficResult = 'HIT' | 'MISS' | 'STALE' | 'REVALIDATED';

/** Counts of one proxy: for the hour under way (to be written) or since the start (metrics). */
export interface TrafficCounts {
  hits: number;
  misses: number;
  stale: number;
  revalidated: number;
  bytesServed: number;
  bytesFromOrigin: number;
  originErrors: number;
}

const zero = (): TrafficCounts => ({
  hits: 0,
  misses: 0,
  stale: 0,
  revalidated: 0,
  bytesServed: 0,
  bytesFromOrigin: 0,
  originErrors: 0,
});

interface Pending {
  tenantId: string;
  proxyKey: string;
  hour: number;
  counts: TrafficCounts;
}

export class TrafficLog {
  /** Counts of the current hour per proxy key; moved to `done` when the hour turns. */
  private current = new Map<string, Pending>();
  private currentHour = 0;
  private done: Pending[] = [];
  /** Since the start, per proxy (at most MAX_METRIC_PROXIES of them, then OTHER_PROXIES). */
  readonly totals = new Map<string, TrafficCounts>();
  private timer: NodeJS.Timeout | undefined;
  private writing: Promise<void> = Promise.resolve();

  constructor(
    private readonly db: Db,
    private readonly onError: (error: unknown) => void,
  ) {}

  /** The counts a request for the proxy adds to, at `now`. */
  private countsOf(tenantId: string, proxyKey: string, now: number): Pending {
    if (now >= this.currentHour + HOUR_MS) {
      for (const pending of this.current.values()) this.done.push(pending);
      this.current = new Map();
      this.currentHour = now - (now % HOUR_MS);
    }
    let pending = this.current.get(proxyKey);
    if (pending === undefined || pending.tenantId !== tenantId) {
      if (pending !== undefined) this.done.push(pending);
      pending = { tenantId, proxyKey, hour: this.currentHour, counts: zero() };
      this.current.set(proxyKey, pending);
      this.timer ??= setTimeout(() => void this.flush(), FLUSH_INTERVAL_MS).unref();
    }
    return pending;
  }

  private totalsOf(proxyKey: string): TrafficCounts {
    let totals = this.totals.get(proxyKey);
    if (totals === undefined) {
      const key = this.totals.size < MAX_METRIC_PROXIES ? proxyKey : OTHER_PROXIES;
      totals = this.totals.get(key) ?? zero();
      this.totals.set(key, totals);
    }
    return totals;
  }

  /** Counts an answer of the proxy: how the cache took part and the body bytes sent. */
  answered(tenantId: string, proxyKey: string, result: TrafficResult, bytes: number, now = Date.now()): void {
    const { counts } = this.countsOf(tenantId, proxyKey, now);
    const totals = this.totalsOf(proxyKey);
    const field =
      result === 'HIT' ? 'hits' : result === 'STALE' ? 'stale' : result === 'REVALIDATED' ? 'revalidated' : 'misses';
    counts[field] += 1;
    totals[field] += 1;
    counts.bytesServed += bytes;
    totals.bytesServed += bytes;
  }

  /** Counts body bytes of the proxy's origin, streamed to a client (`served`) or only into the cache. */
  fromOrigin(tenantId: string, proxyKey: string, bytes: number, served: boolean): void {
    const { counts } = this.countsOf(tenantId, proxyKey, Date.now());
    const totals = this.totalsOf(proxyKey);
    counts.bytesFromOrigin += bytes;
    totals.bytesFromOrigin += bytes;
    if (served) {
      counts.bytesServed += bytes;
      totals.bytesServed += bytes;
    }
  }

  /** Counts an origin that failed: no connection, a timeout, or a 5xx answer. */
  originError(tenantId: string, proxyKey: string): void {
    this.countsOf(tenantId, proxyKey, Date.now()).counts.originErrors += 1;
    this.totalsOf(proxyKey).originErrors += 1;
  }

  /** Writes everything counted so far; resolves once it is stored (or its failure reported). */
  flush(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    const rows = [...this.done, ...this.current.values()];
    this.done = [];
    this.current = new Map();
    this.currentHour = 0;
    if (rows.length === 0) return this.writing;
    this.writing = this.writing.then(async () => {
      // Revalidated answers came from the cache: they are hits to whoever reads the analytics.
      const counts = rows.map(({ tenantId, proxyKey, hour, counts: c }) => ({
        tenantId,
        proxyKey,
        hour: new Date(hour),
        hits: c.hits + c.revalidated,
        misses: c.misses,
        stale: c.stale,
        bytesServed: c.bytesServed,
        bytesFromOrigin: c.bytesFromOrigin,
        originErrors: c.originErrors,
      }));
      for (let start = 0; start < counts.length; start += MAX_BATCH) {
        try {
          await repository.addTrafficCounts(this.db, counts.slice(start, start + MAX_BATCH));
        } catch (error) {
          this.onError(new Error(`edge traffic: ${counts.length - start} counts not stored`, { cause: error }));
          return;
        }
      }
    });
    return this.writing;
  }
}
