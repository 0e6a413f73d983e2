/**
 * Pure header handling of the edge data plane: hop-by-hop headers (RFC 9110 section 7.6.1) never
 * cross the proxy, the client's credential never reaches the origin, and the origin learns who
 * asked through `X-Forwarded-*`.
 */
import type { IncomingHttpHeaders, OutgoingHttpHeaders } from 'node:http';

const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-authenticate',
  'proxy-authorization',
  'proxy-connection',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
]);

/** Headers that the client sends for the proxy, not for the origin. */
const NOT_FOR_THE_ORIGIN: ReadonlySet<string> = new Set([
  'host',
  'authorization',
  'x-forwarded-for',
  'x-forwarded-proto',
  'x-forwarded-host',
  'x-request-id',
]);

/** Validators of a conditional request; the cache answers these itself. */
export const CONDITIONAL_HEADERS = [
  'if-none-match',
  'if-modified-since',
  'if-match',
  'if-unmodified-since',
  'if-range',
];

export type HeaderMap = Record<string, string | string[]>;

const NONE: ReadonlySet<string> = new Set();

/** The headers listed in `Connection`, which are hop-by-hop for this message only. */
function connectionTokens(headers: IncomingHttpHeaders): ReadonlySet<string> {
  const value = headers.connection;
  // Mostly "keep-alive" or "close", which name no header this proxy would pass on anyway.
  if (value === undefined || value === 'keep-alive' || value === 'close') return NONE;
  const tokens = new Set<string>();
  for (const part of (Array.isArray(value) ? value.join(',') : (value ?? '')).split(',')) {
    const token = part.trim().toLowerCase();
    if (token) tokens.add(token);
  }
  return tokens;
}

/** A copy of `headers` without hop-by-hop headers and without `also`. Names are lowercase. */
export function endToEndHeaders(headers: IncomingHttpHeaders, also: ReadonlySet<string> = new Set()): HeaderMap {
  const listed = connectionTokens(headers);
  const result: HeaderMap = {};
  for (const name in headers) {
    const value = headers[name];
    if (value === undefined || HOP_BY_HOP.has(name) || listed.has(name) || also.has(name)) continue;
    result[name] = value;
  }
  return result;
}

export interface ClientView {
  /** Address of the peer that connected to the proxy. */
  clientAddress: string;
  /** Scheme the client used to reach the proxy. */
  protocol: 'http' | 'https';
  /** `Host` the client asked for. */
  host: string;
  requestId: string;
}

/**
 * NOT_FOR_THE_ORIGIN and `omit` (and `Content-Length` for a request without a body), made once
 * per list: the callers pass a few fixed lists.
 */
const omittedSets = new WeakMap<
  readonly string[],
  { withBody: ReadonlySet<string>; withoutBody: ReadonlySet<string> }
>();
function notForTheOrigin(omit: readonly string[], withBody: boolean): ReadonlySet<string> {
  let sets = omittedSets.get(omit);
  if (sets === undefined) {
    sets = {
      withBody: new Set([...NOT_FOR_THE_ORIGIN, ...omit]),
      withoutBody: new Set([...NOT_FOR_THE_ORIGIN, ...omit, 'content-length']),
    };
    omittedSets.set(omit, sets);
  }
  return withBody ? sets.withBody : sets.withoutBody;
}

/**
 * The request headers sent to the origin: end-to-end headers of the client without its
 * `Authorization`, `X-Forwarded-For` extended with the client's address, `X-Forwarded-Proto` and
 * `-Host` describing the client's request, and the request id for correlating logs.
 */
export function originRequestHeaders(
  headers: IncomingHttpHeaders,
  client: ClientView,
  omit: readonly string[],
  withBody: boolean,
): OutgoingHttpHeaders {
  const forwarded: OutgoingHttpHeaders = endToEndHeaders(headers, notForTheOrigin(omit, withBody));
  const previous = headers['x-forwarded-for'];
  forwarded['x-forwarded-for'] =
    previous === undefined || previous === ''
      ? client.clientAddress
      : [...(Array.isArray(previous) ? previous : [previous]), client.clientAddress].join(', ');
  forwarded['x-forwarded-proto'] = client.protocol;
  forwarded['x-forwarded-host'] = client.host;
  forwarded['x-request-id'] = client.requestId;
  return forwarded;
}

/** Comma-separated tokens of a header, lowercase. */
export function headerTokens(value: string | string[] | undefined): string[] {
  if (value === undefined) return [];
  return (Array.isArray(value) ? value.join(',') : value)
    .split(',')
    .map((token) => token.trim().toLowerCase())
    .filter((token) => token !== '');
}

/** The single value of a header (the first when repeated). */
export const headerValue = (value: string | string[] | undefined): string | undefined =>
  Array.isArray(value) ? value[0] : value;
