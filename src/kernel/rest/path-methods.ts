/**
 * The methods each documented REST path answers, for the requests no route serves: a method the
 * router has no route for (TRACE, QUERY, PROPFIND, HEAD where there is no GET) reaches the
 * not-found handler, and one Node's HTTP parser does not know (`FOO`) its client-error handler;
 * both answer 405 with `Allow` when the path is documented, whatever the method.
 */

interface PathEntry {
  pattern: RegExp;
  /** Its parameters: where two templates match, the one with fewer (more literal segments) names the path. */
  parameters: number;
  allow: string;
}

const tables = new WeakMap<object, PathEntry[]>();

const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * Records the methods of `path` (an OpenAPI template, `/api/x/{id}`) on `server` (the service's
 * `node:http` server): `allow` is the `Allow` header's value.
 */
export function recordPathMethods(server: object, path: string, allow: string): void {
  const source = path
    .split(/(\{[^}]+\})/)
    .map((part) => (part.startsWith('{') ? '[^/]+' : escape(part)))
    .join('');
  const entries = tables.get(server) ?? [];
  const parameters = path.split('{').length - 1;
  entries.push({ pattern: new RegExp(`^${source}/?$`), parameters, allow });
  tables.set(server, entries);
}

/** The `Allow` value of the documented path a request target names (query string ignored), or undefined. */
export function allowedMethodsAt(server: object | undefined | null, target: string): string | undefined {
  const entries = server ? tables.get(server) : undefined;
  if (!entries) return undefined;
  const query = target.indexOf('?');
  const path = query === -1 ? target : target.slice(0, query);
  let best: PathEntry | undefined;
  for (const entry of entries)
    if ((!best || entry.parameters < best.parameters) && entry.pattern.test(path)) best = entry;
  return best?.allow;
}
