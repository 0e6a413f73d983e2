/**
 * Compression of stored responses: which ones are worth compressing, gzip and brotli made once
 * when a response is stored, and the encoding a client's `Accept-Encoding` picks.
 */
import { promisify } from 'node:util';
import { brotliCompress, brotliCompressSync, constants, gzip, gzipSync } from 'node:zlib';
import type { HeaderMap } from './headers';

/** A route's `settings.cache.compression` as stored. */
export interface EdgeCompressionSettings {
  is_enabled?: boolean | null;
  /** Smallest body compressed, in bytes (default DEFAULT_MIN_BYTES). */
  min_bytes?: number | null;
}

export const DEFAULT_MIN_BYTES = 1024;

export type Encoding = 'br' | 'gzip';

/** The compressed forms of a stored body that came out smaller than it. */
export type EncodedBodies = Partial<Record<Encoding, Buffer>>;

/** Text-like media types; images, video, archives and fonts other than these are compressed already. */
const COMPRESSIBLE =
  /^(?:text\/|application\/(?:json|javascript|ecmascript|xml|x-javascript|wasm|manifest\+json|ld\+json)|image\/svg\+xml|[a-z]+\/[\w.+-]+\+(?:json|xml))/;

/** Bodies at least this large are compressed on the thread pool instead of the event loop. */
const ASYNC_FROM_BYTES = 16 * 1024;

const gzipAsync = promisify(gzip);
const brotliAsync = promisify(brotliCompress);
const GZIP_OPTIONS = { level: 6 };
/** Quality 5: most of brotli's gain at a fraction of the time quality 11 takes. */
const BROTLI_OPTIONS = { params: { [constants.BROTLI_PARAM_QUALITY]: 5 } };

/** Whether responses of this route are compressed at all. */
export const compressionEnabled = (settings: EdgeCompressionSettings | null | undefined): boolean =>
  settings?.is_enabled === true;

/**
 * Whether a response with these headers is compressed by the cache when its body is large
 * enough: a compressible type, not encoded by the origin already, no `Cache-Control: no-transform`.
 */
export function compressibleHeaders(headers: Record<string, string | string[] | undefined>): boolean {
  const encoding = headers['content-encoding'];
  if (encoding !== undefined && encoding !== '' && encoding !== 'identity') return false;
  const type = headers['content-type'];
  if (typeof type !== 'string' || !COMPRESSIBLE.test(type.toLowerCase())) return false;
  const cacheControl = headers['cache-control'];
  return !String(cacheControl ?? '')
    .toLowerCase()
    .includes('no-transform');
}

/** The minimum body size of a route's settings. */
export const minBytesOf = (settings: EdgeCompressionSettings | null | undefined): number =>
  settings?.min_bytes ?? DEFAULT_MIN_BYTES;

/** gzip and brotli forms of `body`, keeping those smaller than it; large bodies off the event loop. */
export async function compressBody(body: Buffer): Promise<EncodedBodies> {
  let gzipped: Buffer;
  let brotli: Buffer;
  if (body.length < ASYNC_FROM_BYTES) {
    gzipped = gzipSync(body, GZIP_OPTIONS);
    brotli = brotliCompressSync(body, BROTLI_OPTIONS);
  } else {
    [gzipped, brotli] = await Promise.all([gzipAsync(body, GZIP_OPTIONS), brotliAsync(body, BROTLI_OPTIONS)]);
  }
  const encoded: EncodedBodies = {};
  if (gzipped.length < body.length) encoded.gzip = gzipped;
  if (brotli.length < body.length) encoded.br = brotli;
  return encoded;
}

/** Accept-Encoding values seen recently and what they chose; most clients send one of a few. */
const negotiated = new Map<string, Encoding | null>();
const MAX_NEGOTIATED = 256;
const MAX_ACCEPT_ENCODING_LENGTH = 512;

/** The q-value of each coding a client lists (`*` included), lowercase. */
function qualities(header: string): Map<string, number> {
  const result = new Map<string, number>();
  for (const part of header.split(',')) {
    const [coding, ...parameters] = part.split(';');
    const name = coding!.trim().toLowerCase();
    if (name === '') continue;
    let q = 1;
    for (const parameter of parameters) {
      const [key, value] = parameter.split('=');
      if (key!.trim().toLowerCase() === 'q') q = Number(value);
    }
    result.set(name, Number.isFinite(q) ? q : 0);
  }
  return result;
}

/**
 * The encoding to answer a client with, given its `Accept-Encoding` and the forms at hand:
 * brotli before gzip at equal preference, null for the body as it is.
 */
export function preferredEncoding(
  header: string | string[] | undefined,
  available: EncodedBodies | undefined,
): Encoding | null {
  if (available === undefined || header === undefined) return null;
  const value = Array.isArray(header) ? header.join(',') : header;
  let choice = negotiated.get(value);
  if (choice === undefined) {
    const q = qualities(value.length > MAX_ACCEPT_ENCODING_LENGTH ? value.slice(0, MAX_ACCEPT_ENCODING_LENGTH) : value);
    const wildcard = q.get('*') ?? 0;
    const br = q.get('br') ?? wildcard;
    const gz = q.get('gzip') ?? q.get('x-gzip') ?? wildcard;
    choice = br > 0 && br >= gz ? 'br' : gz > 0 ? 'gzip' : br > 0 ? 'br' : null;
    if (value.length <= MAX_ACCEPT_ENCODING_LENGTH) {
      if (negotiated.size >= MAX_NEGOTIATED) negotiated.clear();
      negotiated.set(value, choice);
    }
  }
  if (choice === 'br' && available.br === undefined)
    return available.gzip !== undefined && acceptsGzip(value) ? 'gzip' : null;
  if (choice === 'gzip' && available.gzip === undefined) return null;
  return choice;
}

const acceptsGzip = (value: string) => {
  const q = qualities(value);
  return (q.get('gzip') ?? q.get('x-gzip') ?? q.get('*') ?? 0) > 0;
};

/** Headers of a stored response sent in an encoded form: its coding, and its ETag made weak (RFC 9110 8.8.3). */
export function encodedHeaders(headers: HeaderMap, encoding: Encoding): HeaderMap {
  const result: HeaderMap = { ...headers, 'content-encoding': encoding };
  const etag = headers.etag;
  if (typeof etag === 'string' && !etag.startsWith('W/')) result.etag = `W/${etag}`;
  return result;
}
