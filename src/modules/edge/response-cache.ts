/**
 * The response cache of one process: least recently used entries are evicted once the stored
 * bytes exceed the bound. Entries stay after they expire, for serving stale when the origin fails,
 * until their stale window ends too.
 */
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
  staleUntil: number;
  /** `Cache-Control` visibility towards clients. */
  visibility: 'public' | 'private';
  /** Request headers named by the origin's `Vary`, with the values the response was fetched for. */
  varyOn: Record<string, string>;
}

/** Bytes an entry is charged: body, headers and a fixed overhead for the bookkeeping. */
export function entrySize(key: string, entry: CachedResponse): number {
  let size = 256 + key.length * 2 + entry.body.length;
  for (const [name, value] of Object.entries(entry.headers)) size += name.length + String(value).length;
  return size;
}

export class ResponseCache {
  private readonly entries = new Map<string, { entry: CachedResponse; size: number }>();
  private bytes = 0;

  constructor(readonly maxBytes: number) {}

  /** Bytes held now. */
  get size(): number {
    return this.bytes;
  }

  /** The entry under `key` unless its stale window has ended; marks it recently used. */
  get(key: string, now: number): CachedResponse | undefined {
    const slot = this.entries.get(key);
    if (!slot) return undefined;
    this.entries.delete(key);
    if (slot.entry.staleUntil <= now) {
      this.bytes -= slot.size;
      return undefined;
    }
    this.entries.set(key, slot);
    return slot.entry;
  }

  /** Stores an entry, evicting the least recently used ones; an entry over a quarter of the bound is not stored. */
  set(key: string, entry: CachedResponse): boolean {
    const size = entrySize(key, entry);
    this.delete(key);
    if (size > this.maxBytes / 4) return false;
    this.entries.set(key, { entry, size });
    this.bytes += size;
    for (const [oldest, slot] of this.entries) {
      if (this.bytes <= this.maxBytes) break;
      this.entries.delete(oldest);
      this.bytes -= slot.size;
    }
    return true;
  }

  delete(key: string): void {
    const slot = this.entries.get(key);
    if (!slot) return;
    this.entries.delete(key);
    this.bytes -= slot.size;
  }

  /** Removes every entry whose key starts with `prefix`; returns how many. */
  deleteByPrefix(prefix: string): number {
    let removed = 0;
    for (const [key, slot] of this.entries) {
      if (!key.startsWith(prefix)) continue;
      this.entries.delete(key);
      this.bytes -= slot.size;
      removed += 1;
    }
    return removed;
  }

  /** Whether a body of `bytes` could be stored at all. */
  accepts(bytes: number): boolean {
    return bytes + 256 <= this.maxBytes / 4;
  }
}
