/**
 * One request to an origin over node:http(s), connecting to an address checked by
 * origin-address.ts. Redirects are not followed: they are the origin's answer to pass on.
 */
import http, { type IncomingMessage, type OutgoingHttpHeaders } from 'node:http';
import https from 'node:https';
import { isIP } from 'node:net';
import { pipeline, Transform, type Readable } from 'node:stream';
import { AppError } from '../../kernel/errors';
import { startClientSpan } from '../../kernel/tracing/http-client';
import { literalOrigin, OriginAddressError, resolveOrigin } from './origin-address';

export interface OriginRequest {
  url: URL;
  method: string;
  /** Sent with `Host` set to the origin's (the object is the request's to change). */
  headers: OutgoingHttpHeaders;
  /** The client's request body, streamed to the origin as it arrives; none for GET and HEAD. */
  body?: { stream: Readable; maxBytes: number };
  /** For connecting and for the headers; then for each silence while the body streams. */
  timeoutMs: number;
  allowPrivateOrigins: boolean;
}

// Connections to origins are reused across requests, as a reverse proxy should.
const agents = {
  'http:': new http.Agent({ keepAlive: true, maxSockets: 256 }),
  'https:': new https.Agent({ keepAlive: true, maxSockets: 256 }),
};

const timeoutError = (url: URL, timeoutMs: number) =>
  new AppError('GATEWAY_TIMEOUT', `the origin ${url.host} did not answer within ${timeoutMs} ms`);

const connectionError = (url: URL, error: NodeJS.ErrnoException) => {
  const what =
    error.code === 'ECONNREFUSED'
      ? 'refused the connection'
      : error.code === 'ECONNRESET' || error.code === 'EPIPE'
        ? 'reset the connection'
        : error.code === 'EHOSTUNREACH' || error.code === 'ENETUNREACH'
          ? 'is unreachable'
          : `failed (${error.code ?? error.message})`;
  return new AppError('BAD_GATEWAY', `the origin ${url.host} ${what}`);
};

const bodyTooLarge = (maxBytes: number) =>
  new AppError('EDGE_PAYLOAD_TOO_LARGE', `the edge takes request bodies of up to ${maxBytes} bytes`);

/** Passes a request body on while counting it, failing once it grows past `maxBytes`. */
function bounded(maxBytes: number): Transform {
  let seen = 0;
  return new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      seen += chunk.length;
      callback(seen > maxBytes ? bodyTooLarge(maxBytes) : null, chunk);
    },
  });
}

/**
 * Sends the request (streaming its body) and resolves with the origin's response once its
 * headers have arrived. Failures are AppErrors: 502 (address refused, connection refused or
 * reset, invalid answer), 504 (timeout) or 413 (a body growing past its bound). A response body
 * that stalls for `timeoutMs` afterwards is destroyed with an error. With tracing on, the request
 * is a span (until its response body ends) whose trace context the origin receives.
 */
export async function requestOrigin(request: OriginRequest): Promise<IncomingMessage> {
  const span = startClientSpan(request.method, request.url, request.headers);
  if (!span) return send(request);
  try {
    const response = await send(request);
    response.once('close', () => span.answered(response.statusCode ?? 0));
    return response;
  } catch (error) {
    span.failed(error);
    throw error;
  }
}

async function send(request: OriginRequest): Promise<IncomingMessage> {
  const { url, timeoutMs } = request;
  request.headers.host = url.host;
  const deadline = Date.now() + timeoutMs;
  let resolved;
  try {
    // An address needs no lookup (nor a timer for one).
    resolved =
      literalOrigin(url.hostname, request.allowPrivateOrigins) ??
      (await withTimeout(resolveOrigin(url.hostname, request.allowPrivateOrigins), timeoutMs, () =>
        timeoutError(url, timeoutMs),
      ));
  } catch (error) {
    if (error instanceof OriginAddressError) throw new AppError('BAD_GATEWAY', error.message);
    throw error;
  }
  const hostname = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
  const secure = url.protocol === 'https:';
  return new Promise<IncomingMessage>((resolve, reject) => {
    let settled = false;
    const fail = (error: AppError) => {
      if (settled) return;
      settled = true;
      clearTimeout(headerTimer);
      outgoing.destroy();
      reject(error);
    };
    const outgoing = (secure ? https : http).request({
      agent: agents[secure ? 'https:' : 'http:'],
      host: resolved.address,
      family: resolved.family,
      port: url.port || (secure ? 443 : 80),
      method: request.method,
      path: `${url.pathname}${url.search}`,
      headers: request.headers,
      // TLS names and checks the origin's host name, not the address connected to.
      ...(secure && isIP(hostname) === 0 ? { servername: hostname } : {}),
      timeout: timeoutMs,
    });
    const headerTimer = setTimeout(() => fail(timeoutError(url, timeoutMs)), Math.max(0, deadline - Date.now()));
    outgoing.on('timeout', () => {
      if (!settled) return fail(timeoutError(url, timeoutMs));
      outgoing.destroy(timeoutError(url, timeoutMs));
    });
    outgoing.on('error', (error: NodeJS.ErrnoException) => fail(connectionError(url, error)));
    outgoing.on('response', (response) => {
      if (settled) return void response.destroy();
      settled = true;
      clearTimeout(headerTimer);
      resolve(response);
    });
    const body = request.body;
    if (!body) return void outgoing.end();
    pipeline(body.stream, bounded(body.maxBytes), outgoing, (error) => {
      // Other errors are the connection's (reported by its 'error' event) or the client's, gone.
      if (!(error instanceof AppError)) return;
      if (settled) outgoing.destroy(error);
      else fail(error);
    });
  });
}

function withTimeout<T>(promise: Promise<T>, ms: number, onTimeout: () => Error): Promise<T> {
  let timer: NodeJS.Timeout;
  return Promise.race([
    promise,
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(onTimeout()), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}
