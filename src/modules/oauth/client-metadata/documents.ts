/**
 * Fetching and keeping OAuth Client ID Metadata Documents. A document's URL is chosen by whoever
 * starts an authorization, so it is fetched as carefully as an edge origin: only from public
 * addresses (unless `allowPrivate`), connecting to the address that was checked, over https with
 * the certificate verified, without following redirects, within a time and a size limit. Documents
 * are kept per their `Cache-Control` (bounded), so a client's every authorization does not fetch.
 */
import { request as httpsRequest } from 'node:https';
import type { LookupFunction } from 'node:net';
import { rootCertificates } from 'node:tls';
import { LRUCache } from 'lru-cache';
import { AddressError, resolvePublicAddress } from '../../../kernel/public-address';
import { ClientMetadataError, documentUrl, parseClientMetadata, type ClientMetadata } from './document';

export interface ClientMetadataOptions {
  /** Fetch from loopback and private addresses too (tests, a private network). */
  allowPrivate: boolean;
  /** Certificate authorities trusted beside Node's own (PEM), e.g. a company's internal CA. */
  ca?: string;
  /** The longest a fetch may take, connection included. */
  timeoutMs?: number;
  /** The largest document taken. */
  maxBytes?: number;
  /** Documents kept. */
  maxEntries?: number;
}

/** The draft suggests a small limit: a document is a few hundred bytes. */
export const MAX_DOCUMENT_BYTES = 5 * 1024;
const DEFAULT_TIMEOUT_MS = 5_000;
/** Kept this long when the document's answer says nothing about caching. */
const DEFAULT_TTL_SECONDS = 300;
/** Kept at most this long, whatever the answer says. */
const MAX_TTL_SECONDS = 24 * 3600;

const NAMING = {
  what: 'client metadata document',
  fix: 'set OAUTH_ALLOW_PRIVATE_CLIENT_METADATA=true to allow client metadata documents on your own network',
};

/** Seconds to keep a document by its `Cache-Control`: 0 for one that must not be kept. */
export function ttlOf(cacheControl: string | undefined): number {
  if (cacheControl === undefined) return DEFAULT_TTL_SECONDS;
  const directives = cacheControl
    .toLowerCase()
    .split(',')
    .map((part) => part.trim());
  if (directives.some((directive) => directive === 'no-store' || directive === 'no-cache' || directive === 'private'))
    return 0;
  const maxAge = directives.map((directive) => /^max-age=(\d+)$/.exec(directive)).find(Boolean);
  return maxAge ? Math.min(Number(maxAge[1]), MAX_TTL_SECONDS) : DEFAULT_TTL_SECONDS;
}

interface Fetched {
  body: string;
  cacheControl: string | undefined;
}

/** One GET of the document from `address`, as `url.hostname` (SNI and certificate check). */
function get(url: URL, address: { address: string; family: 4 | 6 }, options: Required<ClientMetadataOptions>) {
  // Every connection goes to the checked address, so a second DNS answer cannot swap in another.
  const lookup: LookupFunction = (_hostname, lookupOptions, callback) => {
    if (lookupOptions.all) (callback as (error: null, all: unknown[]) => void)(null, [address]);
    else callback(null, address.address, address.family);
  };
  return new Promise<Fetched>((resolve, reject) => {
    const fail = (message: string) => {
      request.destroy();
      reject(new ClientMetadataError(message));
    };
    const request = httpsRequest(
      {
        host: url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname,
        port: url.port === '' ? 443 : Number(url.port),
        path: url.pathname,
        method: 'GET',
        headers: { accept: 'application/json' },
        lookup,
        agent: false,
        ca: options.ca === '' ? undefined : [...rootCertificates, options.ca],
      },
      (response) => {
        const status = response.statusCode ?? 0;
        if (status >= 300 && status < 400)
          return fail('the client metadata document URL redirects; redirects are refused');
        if (status !== 200) return fail(`the client metadata document URL answered ${status}`);
        const type = String(response.headers['content-type'] ?? '')
          .split(';')[0]!
          .trim()
          .toLowerCase();
        if (type !== 'application/json' && !type.endsWith('+json'))
          return fail(`the client metadata document is not served as application/json (${type || 'no type'})`);
        const declared = Number(response.headers['content-length'] ?? 0);
        if (declared > options.maxBytes)
          return fail(`the client metadata document is larger than ${options.maxBytes} bytes`);
        const chunks: Buffer[] = [];
        let size = 0;
        response.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size > options.maxBytes)
            return fail(`the client metadata document is larger than ${options.maxBytes} bytes`);
          chunks.push(chunk);
        });
        response.on('end', () => {
          const cacheControl = response.headers['cache-control'];
          resolve({ body: Buffer.concat(chunks).toString('utf8'), cacheControl });
        });
        response.on('error', (error) =>
          reject(new ClientMetadataError(`the client metadata document: ${error.message}`)),
        );
      },
    );
    request.setTimeout(options.timeoutMs, () =>
      fail(`the client metadata document took longer than ${options.timeoutMs} ms`),
    );
    request.on('error', (error) =>
      reject(new ClientMetadataError(`the client metadata document could not be fetched (${error.message})`)),
    );
    request.end();
  });
}

/** The metadata documents of URL-formatted client ids, fetched once and kept per their caching. */
export class ClientMetadataDocuments {
  private readonly options: Required<ClientMetadataOptions>;
  private readonly kept: LRUCache<string, ClientMetadata>;
  /** Fetches under way: concurrent authorizations of one client share one. */
  private readonly fetching = new Map<string, Promise<ClientMetadata>>();

  constructor(options: ClientMetadataOptions) {
    this.options = {
      allowPrivate: options.allowPrivate,
      ca: options.ca ?? '',
      timeoutMs: options.timeoutMs ?? DEFAULT_TIMEOUT_MS,
      maxBytes: options.maxBytes ?? MAX_DOCUMENT_BYTES,
      maxEntries: options.maxEntries ?? 1_000,
    };
    this.kept = new LRUCache({ max: this.options.maxEntries, ttl: DEFAULT_TTL_SECONDS * 1000 });
  }

  /** The metadata of `clientId` (an https URL), or a `ClientMetadataError` saying what is wrong. */
  async get(clientId: string): Promise<ClientMetadata> {
    const kept = this.kept.get(clientId);
    if (kept) return kept;
    const running = this.fetching.get(clientId);
    if (running) return running;
    const fetching = this.fetch(clientId).finally(() => this.fetching.delete(clientId));
    this.fetching.set(clientId, fetching);
    return fetching;
  }

  /** Forgets a document (a client whose authorization it refused may have fixed it). */
  forget(clientId: string) {
    this.kept.delete(clientId);
  }

  private async fetch(clientId: string): Promise<ClientMetadata> {
    const url = documentUrl(clientId);
    let address;
    let timer: NodeJS.Timeout | undefined;
    // A resolver that does not answer counts against the same limit as the fetch.
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () =>
          reject(new ClientMetadataError(`the client metadata document took longer than ${this.options.timeoutMs} ms`)),
        this.options.timeoutMs,
      );
    });
    try {
      address = await Promise.race([resolvePublicAddress(url.hostname, this.options.allowPrivate, NAMING), timeout]);
    } catch (error) {
      if (error instanceof AddressError) throw new ClientMetadataError(error.message);
      throw error;
    } finally {
      clearTimeout(timer);
    }
    const { body, cacheControl } = await get(url, address, this.options);
    const metadata = parseClientMetadata(clientId, body);
    const ttl = ttlOf(cacheControl);
    if (ttl > 0) this.kept.set(clientId, metadata, { ttl: ttl * 1000 });
    return metadata;
  }
}
