import type { CacheStatus } from './edge.types';

/** How the cache took part in the data plane's answers, since the start (read by the metrics). */
export class EdgeCacheStats {
  readonly responses: Record<CacheStatus, number> = { HIT: 0, MISS: 0, STALE: 0, REVALIDATED: 0 };
  /** Body bytes answered from the cache (HIT, STALE and REVALIDATED). */
  cachedBytes = 0;

  record(status: string, body: unknown) {
    const key = status in this.responses ? (status as CacheStatus) : 'MISS';
    this.responses[key] += 1;
    if (key !== 'MISS' && Buffer.isBuffer(body)) this.cachedBytes += body.length;
  }
}
