// How the terminal commands (`npm run admin`, `npm run seed`) reach the running service: its URL
// as the service itself computes it (PUBLIC_BASE_URL, or http://HOST:PORT) unless --url names one,
// and the master key from MASTER_KEY or the file the embedded mode keeps in DATA_DIR.
import { existsSync, readFileSync } from 'node:fs';
import { ConfigError, loadConfig } from '../../src/kernel/config';
import { masterKeyFile } from '../../src/kernel/master-key';
import { ALL_SCOPES, SCOPES } from '../../src/kernel/scopes';

/** A command line or environment the command cannot use: the message says what to change (exit 2). */
export class UsageError extends Error {}

/** The service could not be reached or answered what a command did not expect (exit 1). */
export class ServiceError extends Error {}

export interface Connection {
  baseUrl: string;
  masterKey: string;
}

/** Where a client reaches a service listening on `host`: an "any address" host is reached on loopback. */
function reachableHost(host: string): string {
  if (host === '0.0.0.0') return '127.0.0.1';
  if (host === '::' || host === '[::]') return '[::1]';
  return host.includes(':') && !host.startsWith('[') ? `[${host}]` : host;
}

/** The service's URL and the master key, from `--url` and the environment the service reads too. */
export function resolveConnection(url: string | undefined, env = process.env): Connection {
  let config;
  try {
    config = loadConfig(env);
  } catch (error) {
    if (error instanceof ConfigError) throw new UsageError(error.message);
    throw error;
  }
  let baseUrl = config.publicBaseUrl ?? `http://${reachableHost(config.host)}:${config.port}`;
  if (url !== undefined) {
    let parsed: URL | undefined;
    try {
      parsed = new URL(url);
    } catch {
      parsed = undefined;
    }
    if (!parsed || (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')) {
      throw new UsageError(`--url must be the service's http(s) URL, such as http://127.0.0.1:3000 (got "${url}")`);
    }
    baseUrl = url;
  }
  baseUrl = baseUrl.replace(/\/+$/, '');
  const keyFile = masterKeyFile(config.dataDir);
  const masterKey = config.masterKey ?? (existsSync(keyFile) ? readFileSync(keyFile, 'utf8').trim() : undefined);
  if (!masterKey) {
    throw new UsageError(`No master key: set MASTER_KEY, or start the service once so that ${keyFile} exists.`);
  }
  return { baseUrl, masterKey };
}

export interface ServiceAnswer {
  status: number;
  /** The parsed JSON body, undefined when there is none. */
  body: any;
  text: string;
}

/** One JSON request to the service with a bearer token; only an unreachable service throws. */
export async function callService(
  baseUrl: string,
  method: string,
  path: string,
  { token, body, headers = {} }: { token: string; body?: unknown; headers?: Record<string, string> },
): Promise<ServiceAnswer> {
  let response: Response;
  try {
    response = await fetch(`${baseUrl}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${token}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        ...headers,
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch {
    throw new ServiceError(
      `Cannot reach the service at ${baseUrl}: is \`npm start\` running? ` +
        '(It is found the way it listens: PUBLIC_BASE_URL, or HOST and PORT; --url names another.)',
    );
  }
  const text = await response.text();
  let parsed: unknown;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    parsed = undefined;
  }
  return { status: response.status, body: parsed, text };
}

/** The scopes an API key may carry, in the words of the messages. */
export const VALID_SCOPES = `${SCOPES.join(', ')}, or ${ALL_SCOPES} for all`;

/**
 * The scopes of `--scopes`, checked here so that a list the API would refuse, or one a shell made
 * out of an unquoted `*` (file names), is refused with the valid names instead of sent.
 */
export function parseScopes(value: string, extra: readonly string[] = []): string[] {
  const scopes = value.split(/[,\s]+/).filter(Boolean);
  const valid = new Set<string>([...SCOPES, ALL_SCOPES, ...extra]);
  const unknown = scopes.filter((scope) => !valid.has(scope));
  if (scopes.length > 0 && unknown.length === 0) return scopes;
  throw new UsageError(
    `--scopes ${JSON.stringify(value)} is not a list of scopes` +
      (unknown.length > 0 ? ` (unknown: ${unknown.slice(0, 5).join(', ')})` : '') +
      `.\nValid scopes: ${VALID_SCOPES}${extra.length > 0 ? ` (OAuth clients also ${extra.join(', ')})` : ''}.\n` +
      `Separate them with commas. Quote * so that the shell does not replace it with file names: --scopes '*'`,
  );
}
