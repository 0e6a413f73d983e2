/**
 * Errors raised before any route runs — by the router (a path that is not valid percent-encoding,
 * a segment over the limit), the body parsers, and Node's HTTP parser (a malformed request, headers
 * over the size limit) — come out in the documented envelope with an `X-Request-Id`, like any other.
 */
import { connect } from 'node:net';
import type { AddressInfo } from 'node:net';
import { beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app';
import { MAX_PATH_SEGMENT_LENGTH } from '../../src/kernel/http-errors';
import { createTenant, startTestApp, TEST_MASTER_KEY, type Tenant } from '../helpers/app';

const t = await startTestApp();
let a: Tenant;
let port: number;

beforeAll(async () => {
  a = await createTenant(t.rest, 'A');
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  port = (t.app.server.address() as AddressInfo).port;
});

/** Sends bytes as they are on a new connection; resolves with what the server wrote before closing. */
function rawRequest(bytes: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let answer = '';
    socket.setEncoding('latin1');
    socket.on('data', (chunk) => (answer += chunk));
    socket.on('close', () => resolve(answer));
    socket.on('error', (error) => (answer ? resolve(answer) : reject(error)));
    // Written without ending: a client that half-closes may get no answer at all.
    socket.write(bytes, 'latin1');
  });
}

function parseRaw(answer: string) {
  const [head, body] = answer.split('\r\n\r\n', 2) as [string, string];
  const [statusLine, ...headerLines] = head.split('\r\n');
  const headers = Object.fromEntries(
    headerLines.map((line) => [
      line.slice(0, line.indexOf(':')).toLowerCase(),
      line.slice(line.indexOf(':') + 1).trim(),
    ]),
  );
  return { status: Number(statusLine!.split(' ')[1]), headers, body: JSON.parse(body) };
}

function expectEnvelope(
  response: { status: number; headers: Record<string, unknown>; body: unknown },
  status: number,
  message: RegExp,
) {
  expect(response.status).toBe(status);
  expect(String(response.headers['x-request-id'] ?? '')).toMatch(/^[0-9a-f-]{36}$/);
  expect(response.body).toEqual({
    error: { code: status, message: expect.stringMatching(message), details: expect.toSatisfy(() => true) },
    meta: null,
  });
}

describe('router errors', () => {
  it.each(['%zz', '%', '%C0%AF', '%ED%A0%80', 'a%E0%A4%A'])(
    'a path with the invalid percent-encoding %s is a 400 naming the path, on every method',
    async (segment) => {
      for (const method of ['GET', 'PUT', 'DELETE'] as const) {
        const response = await t.app.inject({
          method,
          url: `/api/storage/edge/proxies/${segment}`,
          headers: { authorization: `Bearer ${a.key}` },
        });
        expectEnvelope(
          { status: response.statusCode, headers: response.headers, body: response.json() },
          400,
          /^Bad request: .*not valid percent-encoded UTF-8/,
        );
        expect(response.json().error.details).toEqual([
          { field: 'path', message: 'is not valid percent-encoded UTF-8' },
        ]);
      }
    },
  );

  it('a path segment over the limit is a 400 naming the limit, not a bare 414', async () => {
    const response = await t.app.inject({
      method: 'GET',
      url: `/api/instant/search/products/click/${'a'.repeat(MAX_PATH_SEGMENT_LENGTH + 1)}`,
    });
    expectEnvelope(
      { status: response.statusCode, headers: response.headers, body: response.json() },
      400,
      new RegExp(`longer than ${MAX_PATH_SEGMENT_LENGTH} characters`),
    );
  });

  it('keeps a sane X-Request-Id the client sent', async () => {
    const response = await t.app.inject({ method: 'GET', url: '/api/%zz', headers: { 'x-request-id': 'req-42' } });
    expect(response.statusCode).toBe(400);
    expect(response.headers['x-request-id']).toBe('req-42');
  });
});

describe("Node's HTTP parser", () => {
  it('headers over 16 KiB are a 431 in the envelope, with a request id', async () => {
    const answer = await rawRequest(
      `GET /api/storage/edge/proxies HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`,
    );
    expectEnvelope(parseRaw(answer), 431, /^Request header fields too large/);
  });

  it.each([
    ['a request line that is not HTTP', 'HELLO\r\n\r\n'],
    ['a header without a colon', 'GET / HTTP/1.1\r\nHost: x\r\nbroken\r\n\r\n'],
    ['a NUL in a header', 'GET / HTTP/1.1\r\nHost: x\r\nX-A: a\u0000b\r\n\r\n'],
    ['a bad chunk size', 'POST /api/instant/indexes HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n'],
  ])('%s is a 400 in the envelope, with a request id', async (_name, bytes) => {
    expectEnvelope(parseRaw(await rawRequest(bytes)), 400, /^Bad request: the request is not valid HTTP/);
  });

  it('still serves well-formed requests on new connections afterwards', async () => {
    const answer = await rawRequest(
      `GET /api/storage/edge/proxies HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${a.key}\r\nConnection: close\r\n\r\n`,
    );
    expect(answer).toMatch(/^HTTP\/1\.1 200 /);
  });
});

describe('body parser errors', () => {
  it.each([
    ['broken JSON', 'application/json', '{"data":', 400],
    ['an empty JSON body', 'application/json', '', 400],
    ['a media type the API does not take', 'application/xml', '<data/>', 415],
    ['text where JSON is expected', 'text/plain', '{"data":{}}', 415],
  ])('%s on an operation is answered in the envelope', async (_name, contentType, payload, status) => {
    const response = await t.app.inject({
      method: 'POST',
      url: '/api/storage/edge/proxies',
      headers: { authorization: `Bearer ${a.key}`, 'content-type': contentType },
      payload,
    });
    expectEnvelope({ status: response.statusCode, headers: response.headers, body: response.json() }, status, /./);
  });

  it('a body over 1 MiB is a 413 in the envelope', async () => {
    const response = await t.app.inject({
      method: 'POST',
      url: '/api/storage/edge/proxies',
      headers: { authorization: `Bearer ${a.key}`, 'content-type': 'application/json' },
      payload: JSON.stringify({ data: { key: 'x', pad: 'x'.repeat(1024 * 1024) } }),
    });
    expectEnvelope(
      { status: response.statusCode, headers: response.headers, body: response.json() },
      413,
      /^Payload too large/,
    );
  });
});

describe('shutting down', () => {
  it('finishes the request in flight and refuses one sent on its connection meanwhile with SERVICE_UNAVAILABLE in the envelope', async () => {
    const other = await buildApp({ config: t.config, db: t.db, masterKey: TEST_MASTER_KEY, backgroundWorkers: false });
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    let started!: () => void;
    const inFlight = new Promise<void>((resolve) => (started = resolve));
    other.app.get('/slow-for-test', async () => {
      started();
      await released;
      return { done: true };
    });
    let closing!: () => void;
    const closeStarted = new Promise<void>((resolve) => (closing = resolve));
    other.app.addHook('preClose', async () => closing());
    await other.app.listen({ port: 0, host: '127.0.0.1' });
    const socket = connect((other.app.server.address() as AddressInfo).port, '127.0.0.1');
    let answer = '';
    socket.setEncoding('latin1');
    socket.on('data', (chunk) => (answer += chunk));
    const ended = new Promise<void>((resolve) => socket.on('close', () => resolve()));
    // A request in flight when the close starts, and another the client pipelines behind it then.
    socket.write('GET /slow-for-test HTTP/1.1\r\nHost: x\r\n\r\n');
    await inFlight;
    const closed = other.app.close();
    await closeStarted;
    socket.write(`GET /api/storage/edge/proxies HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${a.key}\r\n\r\n`);
    await new Promise((resolve) => setTimeout(resolve, 50));
    release();
    await ended;
    await closed;

    const [first, second] = answer.split(/(?=HTTP\/1\.1 )/);
    expect(first).toMatch(/^HTTP\/1\.1 200 /);
    expect(first).toContain('{"done":true}');
    const refused = parseRaw(second!);
    expectEnvelope(refused, 503, /^Service unavailable: this process is shutting down/);
    expect(refused.headers['retry-after']).toBe('0');
    expect(refused.headers.connection).toBe('close');
  });
});
