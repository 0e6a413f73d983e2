/**
 * Pure handling of cache tags: the origin labels a response with `Cache-Tag` or `Surrogate-Key`
 * (comma- or space-separated), the labels are kept with the cached response, and a purge by tag
 * removes every response carrying one of the purged tags.
 */
import type { IncomingHttpHeaders } from 'node:http';

/** Response headers that carry tags: for the cache only, never passed to clients. */
export const TAG_HEADERS = ['cache-tag', 'surrogate-key'] as const;

export const MAX_TAGS = 100;
export const MAX_TAG_BYTES = 1024;

// eslint-disable-next-line no-control-regex
const CONTROL_CHARACTER = /[\u0000-\u001f\u007f]/;
// Only spaces and commas separate: a tab or a line break inside a list makes a tag invalid, not two tags.
const SEPARATORS = /[ ,]+/;

/** Why a tag cannot be stored or purged, or null when it can. */
export function tagProblem(tag: string): string | null {
  if (tag === '') return 'is empty';
  if (CONTROL_CHARACTER.test(tag)) return 'contains a control character';
  if (Buffer.byteLength(tag) > MAX_TAG_BYTES) return `is longer than ${MAX_TAG_BYTES} bytes`;
  return null;
}

/** The tags of a list as written in a header or a purge: separated by commas and spaces. */
export const splitTags = (list: string): string[] => list.split(SEPARATORS).filter((tag) => tag !== '');

/**
 * The tags an origin response carries, without duplicates: invalid ones (control characters,
 * over MAX_TAG_BYTES) and those beyond the first MAX_TAGS are dropped, not stored.
 */
export function responseTags(headers: IncomingHttpHeaders): string[] {
  const tags = new Set<string>();
  for (const name of TAG_HEADERS) {
    const value = headers[name];
    for (const list of Array.isArray(value) ? value : value === undefined ? [] : [value]) {
      for (const tag of splitTags(list)) {
        if (tags.size >= MAX_TAGS) return [...tags];
        if (tagProblem(tag) === null) tags.add(tag);
      }
    }
  }
  return [...tags];
}
