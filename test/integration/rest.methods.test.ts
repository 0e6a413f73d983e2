/**
 * Every documented REST path answers every method it does not support with 405, `Allow` naming
 * the ones it does, in the error envelope: the five usual methods, HEAD where there is no GET,
 * TRACE, QUERY, WebDAV's, and methods Node's HTTP parser does not know, over a real socket.
 */
import http from 'node:http';
import net, { type AddressInfo } from 'node:net';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { OPENAPI_FILE } from '../../src/kernel/rest/openapi-yaml';
import { startTestApp } from '../helpers/app';

const t = await startTestApp();
await t.app.listen({ host: '127.0.0.1', port: 0 });
const port = (t.app.server.address() as AddressInfo).port;

const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];
const contract = parse(readFileSync(OPENAPI_FILE, 'utf8'));
const paths = Object.entries<Record<string, unknown>>(contract.paths).map(([template, item]) => {
  const methods = Object.keys(item)
    .filter((key) => HTTP_METHODS.includes(key))
    .map((key) => key.toUpperCase());
  return {
    template,
    path: template.replace(/\{[^}]+\}/g, 'x'),
    allowed: new Set(methods.includes('GET') ? [...methods, 'HEAD'] : methods),
  };
});

interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
}

const request = (method: string, path: string): Promise<Answer> =>
  new Promise((resolve, reject) => {
    const outgoing = http.request({ host: '127.0.0.1', port, method, path, agent: false }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () =>
        resolve({ status: response.statusCode!, headers: response.headers, body: Buffer.concat(chunks).toString() }),
      );
    });
    outgoing.on('error', reject);
    outgoing.end();
  });

/** A request line Node's own client would send as is, on a socket: the status line, headers and body that came back. */
const rawRequest = (line: string): Promise<Answer> =>
  new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('error', reject);
    socket.on('close', () => {
      const text = Buffer.concat(chunks).toString();
      const [head, body = ''] = text.split('\r\n\r\n');
      const [statusLine, ...headerLines] = head!.split('\r\n');
      const headers = Object.fromEntries(
        headerLines.map((headerLine) => {
          const colon = headerLine.indexOf(':');
          return [headerLine.slice(0, colon).toLowerCase(), headerLine.slice(colon + 1).trim()];
        }),
      );
      resolve({ status: Number(statusLine!.split(' ')[1]), headers, body });
    });
    socket.write(`${line}\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n`);
  });

const allowOf = (answer: Answer) =>
  new Set(
    String(answer.headers.allow ?? '')
      .split(',')
      .map((method) => method.trim())
      .filter(Boolean),
  );

const expect405 = (answer: Answer, allowed: Set<string>, method: string) => {
  expect(answer.status, method).toBe(405);
  expect(allowOf(answer), method).toEqual(allowed);
  if (method === 'HEAD') return;
  expect(JSON.parse(answer.body).error, method).toMatchObject({
    code: 405,
    message: expect.stringMatching(/^Method not allowed/),
  });
};

describe('methods a documented REST path does not support', () => {
  it('has paths to try', () => {
    expect(paths.length).toBeGreaterThan(30);
  });

  for (const { template, path, allowed } of paths) {
    it(`${template}: 405 with Allow ${[...allowed].join(', ')}`, async () => {
      const others = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'TRACE', 'QUERY', 'PROPFIND', 'SEARCH'].filter(
        (method) => !allowed.has(method),
      );
      for (const method of others) expect405(await request(method, path), allowed, method);
      // Methods outside Node's parser: answered on the socket before any route.
      for (const method of ['FOO', 'BREW'])
        expect405(await rawRequest(`${method} ${path}?a=1 HTTP/1.1`), allowed, method);
    });
  }

  it('still answers an undocumented path 404, whatever the method, and a malformed request line 400', async () => {
    for (const method of ['GET', 'TRACE', 'QUERY'])
      expect((await request(method, '/api/no-such-path')).status).toBe(404);
    expect((await rawRequest('FOO /api/no-such-path HTTP/1.1')).status).toBe(400);
    expect((await rawRequest('GET /api/storage/edge/proxies HTTP/9.9')).status).toBe(400);
  });
});
