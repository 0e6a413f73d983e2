/**
 * Client ID Metadata Documents: which client_id URLs ask for one, what a document must say, and
 * fetching it from a real HTTPS server on 127.0.0.1 (its certificate, for localhost and
 * 127.0.0.1, is test/fixtures/tls/localhost.crt, trusted through the `ca` option): the checks of
 * the address, redirects, size, media type, time and certificate, and keeping documents per their
 * Cache-Control.
 */
import { readFileSync } from 'node:fs';
import type { ServerResponse } from 'node:http';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ClientMetadataError,
  documentUrl,
  isClientIdUrl,
  parseClientMetadata,
} from '../../src/modules/oauth/client-metadata/document';
import { ClientMetadataDocuments, ttlOf } from '../../src/modules/oauth/client-metadata/documents';

const TLS = join(import.meta.dirname, '../fixtures/tls');
const ca = readFileSync(join(TLS, 'localhost.crt'), 'utf8');
const key = readFileSync(join(TLS, 'localhost.key'), 'utf8');

/** What the server answers per path; every request is counted per path. */
const answers = new Map<string, (response: ServerResponse, url: string) => void>();
const served = new Map<string, number>();
let server: Server;
let base: string;

const document = (url: string, more: Record<string, unknown> = {}) => ({
  client_id: url,
  client_name: 'Example agent',
  redirect_uris: ['http://127.0.0.1:33418/callback'],
  token_endpoint_auth_method: 'none',
  ...more,
});
const json =
  (body: unknown, headers: Record<string, string> = {}) =>
  (response: ServerResponse) => {
    response.writeHead(200, { 'content-type': 'application/json', ...headers });
    response.end(typeof body === 'string' ? body : JSON.stringify(body));
  };

beforeAll(async () => {
  server = createServer({ key, cert: ca }, (request, response) => {
    const path = request.url!;
    served.set(path, (served.get(path) ?? 0) + 1);
    const answer = answers.get(path);
    if (answer) answer(response, `${base}${path}`);
    else response.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

const documents = (options: Partial<ConstructorParameters<typeof ClientMetadataDocuments>[0]> = {}) =>
  new ClientMetadataDocuments({ allowPrivate: true, ca, timeoutMs: 1_000, ...options });
const refusal = async (promise: Promise<unknown>) => {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(ClientMetadataError);
  return (error as Error).message;
};

describe('client_id URLs', () => {
  it('are https URLs; anything else names a registered client', () => {
    expect(isClientIdUrl('https://app.example/client.json')).toBe(true);
    expect(isClientIdUrl('0190f1a2-0000-7000-8000-000000000000')).toBe(false);
    expect(isClientIdUrl('http://app.example/client.json')).toBe(false);
  });

  it.each([
    ['https://app.example', 'must have a path'],
    ['https://app.example/', 'must have a path'],
    ['https://app.example/client.json?v=1', 'query string'],
    ['https://app.example/client.json#a', 'fragment'],
    ['https://user:pw@app.example/client.json', 'user or password'],
    ['https://app.example/a/../client.json', '. or .. path segments'],
    ['https://app.example/./client.json', '. or .. path segments'],
    ['https://app.example/%2e%2e/client.json', '. or .. path segments'],
    ['https://APP.example/client.json', 'normal form'],
    ['https://app.example:443/client.json', 'normal form'],
    [`https://app.example/${'a'.repeat(2100)}`, 'at most 2048'],
  ])('refuses %s', (url, reason) => {
    expect(() => documentUrl(url)).toThrow(reason);
  });

  it('takes a normal https URL with a path', () => {
    expect(documentUrl('https://app.example/oauth/client.json').hostname).toBe('app.example');
  });
});

describe('a document', () => {
  const url = 'https://app.example/client.json';

  it('is read when its client_id is its URL and it describes a public client', () => {
    const metadata = parseClientMetadata(url, JSON.stringify(document(url, { client_uri: 'https://app.example' })));
    expect(metadata).toMatchObject({ client_name: 'Example agent', client_uri: 'https://app.example' });
  });

  it.each([
    ['not JSON', '{', 'not JSON'],
    ['another client_id', JSON.stringify(document('https://other.example/client.json')), 'not the URL'],
    ['no name', JSON.stringify({ ...document(url), client_name: undefined }), 'client_name'],
    ['no redirect URI', JSON.stringify(document(url, { redirect_uris: [] })), 'redirect_uris'],
    [
      'an http redirect URI off loopback',
      JSON.stringify(document(url, { redirect_uris: ['http://evil.example/cb'] })),
      'redirect_uris.0',
    ],
    ['a secret', JSON.stringify(document(url, { client_secret: 's3cret' })), 'client secret'],
    [
      'a confidential auth method',
      JSON.stringify(document(url, { token_endpoint_auth_method: 'client_secret_basic' })),
      'public clients',
    ],
    ['the implicit grant', JSON.stringify(document(url, { grant_types: ['implicit'] })), 'grant_types'],
    [
      '21 redirect URIs',
      JSON.stringify(document(url, { redirect_uris: Array.from({ length: 21 }, (_, i) => `https://a.example/${i}`) })),
      'redirect_uris',
    ],
    ['deep nesting', `${'['.repeat(2_000)}${']'.repeat(2_000)}`, 'invalid'],
  ])('is refused with %s', (_case, body, reason) => {
    expect(() => parseClientMetadata(url, body)).toThrow(reason);
  });
});

describe('fetching a document', () => {
  it('fetches it once over https and keeps it for its max-age', async () => {
    answers.set('/kept.json', (response, url) => json(document(url), { 'cache-control': 'max-age=1' })(response));
    const kept = documents();
    const [first, second] = await Promise.all([kept.get(`${base}/kept.json`), kept.get(`${base}/kept.json`)]);
    expect(first.client_name).toBe('Example agent');
    expect(second).toEqual(first);
    expect(await kept.get(`${base}/kept.json`)).toEqual(first);
    expect(served.get('/kept.json')).toBe(1);
    await sleep(1_100);
    await kept.get(`${base}/kept.json`);
    expect(served.get('/kept.json')).toBe(2);
  });

  it('fetches a no-store document every time', async () => {
    answers.set('/fresh.json', (response, url) => json(document(url), { 'cache-control': 'no-store' })(response));
    const fresh = documents();
    await fresh.get(`${base}/fresh.json`);
    await fresh.get(`${base}/fresh.json`);
    expect(served.get('/fresh.json')).toBe(2);
  });

  it('refuses a loopback address without the switch, asking it nothing', async () => {
    answers.set('/private.json', (response, url) => json(document(url))(response));
    const message = await refusal(documents({ allowPrivate: false }).get(`${base}/private.json`));
    expect(message).toContain('OAUTH_ALLOW_PRIVATE_CLIENT_METADATA=true');
    expect(served.get('/private.json')).toBeUndefined();
  });

  it('refuses a redirect without following it', async () => {
    answers.set('/moved.json', (response) => response.writeHead(302, { location: `${base}/kept.json` }).end());
    const before = served.get('/kept.json') ?? 0;
    expect(await refusal(documents().get(`${base}/moved.json`))).toContain('redirects are refused');
    expect(served.get('/kept.json') ?? 0).toBe(before);
  });

  it('refuses a document larger than 5 KiB, declared or streamed', async () => {
    answers.set('/large.json', (response, url) => json(document(url, { padding: 'x'.repeat(6_000) }))(response));
    answers.set('/streamed.json', (response, url) => {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.write(JSON.stringify(document(url)).slice(0, -1));
      response.end(`, "padding": "${'x'.repeat(6_000)}"}`);
    });
    expect(await refusal(documents().get(`${base}/large.json`))).toContain('larger than 5120 bytes');
    expect(await refusal(documents().get(`${base}/streamed.json`))).toContain('larger than 5120 bytes');
  });

  it('refuses an answer that is not JSON, not 200, too slow, or whose client_id differs', async () => {
    answers.set('/html.json', (response) => response.writeHead(200, { 'content-type': 'text/html' }).end('<p>'));
    answers.set('/slow.json', () => undefined);
    answers.set('/other.json', json(document('https://other.example/client.json')));
    expect(await refusal(documents().get(`${base}/html.json`))).toContain('not served as application/json (text/html)');
    expect(await refusal(documents().get(`${base}/missing.json`))).toContain('answered 404');
    expect(await refusal(documents({ timeoutMs: 200 }).get(`${base}/slow.json`))).toContain('longer than 200 ms');
    expect(await refusal(documents().get(`${base}/other.json`))).toContain('not the URL it was fetched from');
  });

  it('refuses a server whose certificate it does not trust', async () => {
    answers.set('/untrusted.json', (response, url) => json(document(url))(response));
    expect(await refusal(documents({ ca: undefined }).get(`${base}/untrusted.json`))).toContain('could not be fetched');
  });

  it('refuses a URL that is not a client_id URL before any fetch', async () => {
    expect(await refusal(documents().get(`${base}/`))).toContain('must have a path');
  });
});

describe('Cache-Control', () => {
  it.each([
    [undefined, 300],
    ['max-age=60', 60],
    ['public, max-age=600', 600],
    ['max-age=999999', 86_400],
    ['no-store', 0],
    ['no-cache', 0],
    ['private, max-age=60', 0],
    ['max-age=0', 0],
  ])('%s keeps a document %i s', (header, seconds) => {
    expect(ttlOf(header)).toBe(seconds);
  });
});
