/**
 * The response cache of one process: least recently used entries are evicted once the stored
 * bytes exceed the bound. Entries stay after they expire, for serving stale when the origin fails,
 * until their stale window ends too.
 */
import { LRUCache } from 'lru-cache';
import type { EncodedBodies, Encoding } from './compression';
import type { HeaderMap } from './headers';

export interface CachedResponse {
  status: number;
  /** End-to-end headers of the origin's response, without `Content-Length`, `Age` and `Set-Cookie`. */
  headers: HeaderMap;
  body: Buffer;
  /** Milliseconds since the epoch. */
  storedAt: number;
  /** Age the origin reported when the response was stored, in seconds. */
  initialAgeSeconds: number;
  freshUntil: number;
  /** Until when it is served at once while one background request refreshes it (stale-while-revalidate). */
  revalidateUntil: number;
  /** Until when it is served in place of an origin that fails (stale-if-error). */
  staleIfErrorUntil: number;
  /** Until when it is kept: the end of the windows above, or later for a conditional request to the origin. */
  staleUntil: number;
  /** `Cache-Control` visibility towards clients. */
  visibility: 'public' | 'private';
  /** Request headers named by the origin's `Vary`, with the values the response was fetched for. */
  varyOn: Record<string, string>;
  /** The origin's cache tags, for purging by tag. */
  tags: readonly string[];
  /** gzip and brotli forms of the body, when the route compresses and they came out smaller. */
  encoded?: EncodedBodies;
  /** The headers of a fresh hit per form of the body, made when first served with this age and max-age. */
  prepared?: Partial<Record<Encoding | 'identity', { age: number; maxAge: number; headers: string[] }>>;
}

/**
 * Bytes an entry is charged: body, headers (twice: as stored, and as prepared for a hit), and a
 * fixed overhead for the bookkeeping.
 */
export function entrySize(key: string, entry: CachedResponse): number {
  let size =
    256 + key.length * 2 + entry.body.length + (entry.encoded?.gzip?.length ?? 0) + (entry.encoded?.br?.length ?? 0);
  for (const [name, value] of Object.entries(entry.headers)) size += 2 * (name.length + String(value).length);
  for (const tag of entry.tags) size += 16 + tag.length * 2;
  return size;
}

export class ResponseCache {
  private readonly entries: LRUCache<string, CachedResponse>;

  constructor(readonly maxBytes: number) {
    // lru-cache wants positive bounds; with fewer than 4 bytes (0 turns caching off) nothing fits anyway.
    this.entries = new LRUCache({
      maxSize: Math.max(1, maxBytes),
      maxEntrySize: Math.max(1, Math.floor(maxBytes / 4)),
      sizeCalculation: (entry, key) => entrySize(key, entry),
    });
  }

  /** Bytes held now. */
  get size(): number {
    return this.entries.calculatedSize;
  }

  /** The entry under `key` unless its stale window has ended; marks it recently used. */
  get(key: string, now: number): CachedResponse | undefined {
    const entry = this.entries.get(key);
    if (entry === undefined || entry.staleUntil > now) return entry;
    this.entries.delete(key);
    return undefined;
  }

  /** Stores an entry, evicting the least recently used ones; an entry over a quarter of the bound is not stored. */
  set(key: string, entry: CachedResponse): boolean {
    const status: LRUCache.Status<string, CachedResponse> = {};
    this.entries.set(key, entry, { status });
    return status.set !== 'miss';
  }

  delete(key: string): void {
    this.entries.delete(key);
  }

  /**
   * Removes every entry whose key starts with `prefix` and, when `tags` are given, that carries
   * one of them; returns how many.
   */
  deleteByPrefix(prefix: string, tags?: ReadonlySet<string>): number {
    // The keys are collected first: lru-cache does not promise that iteration survives deletes.
    const keys: string[] = [];
    for (const [key, entry] of this.entries.entries()) {
      if (key.startsWith(prefix) && (tags === undefined || entry.tags.some((tag) => tags.has(tag)))) keys.push(key);
    }
    for (const key of keys) this.entries.delete(key);
    return keys.length;
  }

  /**
   * Makes every fresh entry whose key starts with `prefix` (and carries one of `tags`, when given)
   * stale at `now`, servable at once while it is fetched again until `now + staleMs` at least;
   * returns how many.
   */
  expireByPrefix(prefix: string, now: number, staleMs: number, tags?: ReadonlySet<string>): number {
    let expired = 0;
    for (const [key, entry] of this.entries.entries()) {
      if (!key.startsWith(prefix) || entry.freshUntil <= now) continue;
      if (tags !== undefined && !entry.tags.some((tag) => tags.has(tag))) continue;
      entry.freshUntil = now;
      entry.revalidateUntil = Math.max(entry.revalidateUntil, now + staleMs);
      entry.staleUntil = Math.max(entry.staleUntil, entry.revalidateUntil);
      entry.prepared = undefined;
      expired += 1;
    }
    return expired;
  }

  clear(): void {
    this.entries.clear();
  }

  /** Whether a body of `bytes` could be stored at all. */
  accepts(bytes: number): boolean {
    return bytes + 256 <= this.maxBytes / 4;
  }
}
