/** What the data plane takes and answers, and what its parts hand each other. */
import type { IncomingHttpHeaders } from 'node:http';
import type { Readable } from 'node:stream';
import type { EdgeProxy } from './edge-proxy';
import type { ClientView, HeaderMap } from './headers';
import type { EdgeCacheSettings } from './routing';

/** A request for a proxy, as the HTTP layer hands it over. */
export interface EdgeRequest extends ClientView {
  key: string;
  /** GET, HEAD, or one of PASSED_METHODS. */
  method: string;
  /** The request body as it arrives, for the methods that pass through. */
  body?: Readable;
  /** The proxy-relative path as sent (percent-encoded), starting with '/'. */
  path: string;
  /** The raw query string without '?', possibly ''. */
  query: string;
  headers: IncomingHttpHeaders;
  /** The URL the client asked for, for sending browsers back to it after login. */
  originalUrl: string;
}

/** What `answerFromCache` needs of a request. */
export type CacheLookup = Pick<EdgeRequest, 'key' | 'method' | 'path' | 'query' | 'headers'>;

/** A cached hit as the raw server writes it: headers as a flat list of names and values. */
export interface CachedAnswer {
  status: number;
  headers: string[];
  body: Buffer | undefined;
}

/** REVALIDATED: the origin confirmed the stored response (304) and it was served from the cache. */
export type CacheStatus = 'HIT' | 'MISS' | 'STALE' | 'REVALIDATED';

export interface EdgeResponse {
  status: number;
  headers: HeaderMap;
  /** A cached body, or the origin's body streaming through; absent for 304 and redirects. */
  body?: Buffer | Readable;
}

/** No request header left out beyond the usual ones (one list, so the headers module can remember it). */
export const NOTHING_OMITTED: readonly string[] = [];

export const ACCEPT_ENCODING: readonly string[] = ['accept-encoding'];

/** Methods that go to the origin as they are, streamed both ways and never stored. */
export const PASSED_METHODS = ['POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'];

/** A request with its proxy and route worked out: where it goes, and how the cache treats it. */
export interface Resolved {
  request: EdgeRequest;
  proxy: EdgeProxy;
  /** A refresh no client waits for: its body is not served. */
  background?: boolean;
  target: URL;
  cache: EdgeCacheSettings;
  authRequired: boolean;
  visibility: 'public' | 'private';
  cacheKey: string;
  /** Request headers the cache key holds, for `Vary`. */
  keyVary: readonly string[];
  /** `keyVary` and Accept-Encoding, for responses the cache compresses. */
  compressionVary: readonly string[];
}

/**
 * A purge as announced to every process: the proxy, and optionally a normalised path prefix and
 * tags; a soft one marks the entries stale instead of removing them.
 */
export interface CachePurge {
  key: string;
  path?: string;
  tags?: string[];
  soft?: boolean;
}
