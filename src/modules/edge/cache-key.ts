/**
 * Pure cache-key rules of a route: which query parameters take part in the key (and, when the
 * route says so, reach the origin), in which order, and which request headers and cookies are
 * added to it.
 */
import type { IncomingHttpHeaders } from 'node:http';

/** A route's `settings.cache.key` as stored. */
export interface EdgeCacheKeySettings {
  /** Parameter names left out of the key; `name*` stands for every name starting with `name`. */
  ignore_query?: string[] | null;
  /** Only these parameter names (same patterns) take part in the key. */
  only_query?: string[] | null;
  /** Leave TRACKING_PARAMETERS out of the key. */
  ignore_tracking_query?: boolean | null;
  /** Sort the parameters by name, so that `?b=1&a=2` and `?a=2&b=1` share one entry. */
  sort_query?: boolean | null;
  /** Request headers whose values are added to the key (lowercase names). */
  headers?: string[] | null;
  /** Cookies whose values are added to the key. */
  cookies?: string[] | null;
  /** `sent` (default): the origin gets the query as the client sent it; `keyed`: as it is in the key. */
  origin_query?: 'sent' | 'keyed' | null;
}

/** Click and campaign identifiers that never change a page, left out with `ignore_tracking_query`. */
export const TRACKING_PARAMETERS: readonly string[] = [
  'utm_*',
  'gclid',
  'gclsrc',
  'dclid',
  'gbraid',
  'wbraid',
  'fbclid',
  'msclkid',
  'yclid',
  'twclid',
  'ttclid',
  'li_fat_id',
  'igshid',
  'mc_cid',
  'mc_eid',
  '_ga',
  '_gl',
  '_hsenc',
  '_hsmi',
  'mkt_tok',
];

/** A key rule made ready for use: null stands for "the query as sent, nothing added". */
export interface KeyRule {
  /** Whether a parameter with this decoded name stays in the key; undefined keeps them all. */
  keeps?: (name: string) => boolean;
  sort: boolean;
  headers: readonly string[];
  cookies: readonly string[];
  /** Whether the origin gets the keyed query instead of the one sent. */
  keyedOrigin: boolean;
  /** Request headers the answers depend on through the key, for `Vary` towards caches downstream. */
  vary: readonly string[];
}

/** A test of names against exact names and `prefix*` patterns. */
function nameMatcher(patterns: readonly string[]): (name: string) => boolean {
  const exact = new Set<string>();
  const prefixes: string[] = [];
  for (const pattern of patterns) {
    if (pattern.endsWith('*')) prefixes.push(pattern.slice(0, -1));
    else exact.add(pattern);
  }
  return (name) => exact.has(name) || prefixes.some((prefix) => name.startsWith(prefix));
}

const compiled = new WeakMap<EdgeCacheKeySettings, KeyRule | null>();

/** The rule of a route's key settings, made once per settings object; null when it changes nothing. */
export function keyRuleOf(settings: EdgeCacheKeySettings | null | undefined): KeyRule | null {
  if (settings === null || settings === undefined) return null;
  const known = compiled.get(settings);
  if (known !== undefined) return known;
  const ignored = [...(settings.ignore_query ?? []), ...(settings.ignore_tracking_query ? TRACKING_PARAMETERS : [])];
  let keeps: ((name: string) => boolean) | undefined;
  if (settings.only_query != null) {
    const only = nameMatcher(settings.only_query);
    const ignore = nameMatcher(ignored);
    keeps = (name) => only(name) && !ignore(name);
  } else if (ignored.length > 0) {
    const ignore = nameMatcher(ignored);
    keeps = (name) => !ignore(name);
  }
  const rule: KeyRule = {
    keeps,
    sort: settings.sort_query === true,
    headers: settings.headers ?? [],
    cookies: settings.cookies ?? [],
    keyedOrigin: settings.origin_query === 'keyed',
    vary: [...(settings.headers ?? []), ...((settings.cookies ?? []).length > 0 ? ['cookie'] : [])],
  };
  const changesNothing =
    rule.keeps === undefined && !rule.sort && rule.headers.length === 0 && rule.cookies.length === 0;
  const result = changesNothing ? null : rule;
  compiled.set(settings, result);
  return result;
}

/** The decoded name of a `name=value` pair (as sent when its escapes are malformed). */
function parameterName(pair: string): string {
  const end = pair.indexOf('=');
  const name = end === -1 ? pair : pair.slice(0, end);
  if (!name.includes('%') && !name.includes('+')) return name;
  try {
    return decodeURIComponent(name.replaceAll('+', ' '));
  } catch {
    return name;
  }
}

/**
 * The query string as the key holds it: parameters the rule leaves out removed, the others byte
 * for byte as sent, sorted by name when the rule says so (repeated names keep their order).
 * Linear in the query's length, plus the sort.
 */
export function keyedQuery(query: string, rule: KeyRule | null): string {
  if (rule === null || query === '' || (rule.keeps === undefined && !rule.sort)) return query;
  const pairs: { name: string; pair: string }[] = [];
  for (const pair of query.split('&')) {
    if (pair === '') continue;
    const name = parameterName(pair);
    if (rule.keeps === undefined || rule.keeps(name)) pairs.push({ name, pair });
  }
  if (rule.sort) pairs.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return pairs.map(({ pair }) => pair).join('&');
}

/** The value of one cookie in a `Cookie` header, or ''. */
function cookieValue(header: string | undefined, name: string): string {
  if (header === undefined) return '';
  for (const part of header.split(';')) {
    const equals = part.indexOf('=');
    if (equals !== -1 && part.slice(0, equals).trim() === name) return part.slice(equals + 1).trim();
  }
  return '';
}

/**
 * What the request's headers and cookies add to the key: '' without any. Each part starts with a
 * line feed, which neither a URL nor a header value can hold, so parts never run into each other.
 */
export function keySuffix(headers: IncomingHttpHeaders, rule: KeyRule | null): string {
  if (rule === null || (rule.headers.length === 0 && rule.cookies.length === 0)) return '';
  let suffix = '';
  for (const name of rule.headers) {
    const value = headers[name];
    suffix += `\nh ${name}:${Array.isArray(value) ? value.join(', ') : (value ?? '')}`;
  }
  const cookie = headers.cookie;
  for (const name of rule.cookies) suffix += `\nc ${name}=${cookieValue(cookie, name)}`;
  return suffix;
}

/** `headers` with `names` added to its `Vary` (once each); the same map when there is nothing to add. */
export function withVary<T extends Record<string, string | string[] | undefined>>(
  headers: T,
  names: readonly string[],
): T {
  if (names.length === 0) return headers;
  const current = headers.vary;
  const listed = (Array.isArray(current) ? current.join(',') : (current ?? '')).split(',').map((name) => name.trim());
  const lower = new Set(listed.map((name) => name.toLowerCase()));
  if (lower.has('*')) return headers;
  const added = names.filter((name) => !lower.has(name));
  if (added.length === 0) return headers;
  return { ...headers, vary: [...listed.filter((name) => name !== ''), ...added].join(', ') };
}
