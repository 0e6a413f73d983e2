/**
 * Click codes: what a hit's click URL carries, signed with HMAC-SHA256 so that a code cannot be
 * made up or edited, and bound to one index so it cannot be replayed under another alias.
 */
import { createHmac, createSecretKey, timingSafeEqual } from 'node:crypto';

export interface Click {
  indexId: string;
  /** The stored search the hit came from. */
  searchId: string;
  documentId: string;
  /** 1-based position of the hit in the results. */
  position: number;
  /** Where the click URL redirects to. */
  url: string;
}

export interface ClickCodec {
  encode(click: Click): string;
  /** The click a code carries, or null when it was not made by this codec. */
  decode(code: string): Click | null;
}

export const MAX_CLICK_CODE_LENGTH = 4096;

export function createClickCodec(secret: Buffer | string): ClickCodec {
  // A key object is imported once, not on every signature (every hit of every search is signed).
  const key = createSecretKey(typeof secret === 'string' ? Buffer.from(secret) : secret);
  const sign = (payload: string) => createHmac('sha256', key).update(payload).digest();
  return {
    encode(click) {
      const payload = Buffer.from(
        JSON.stringify([click.indexId, click.searchId, click.documentId, click.position, click.url]),
      ).toString('base64url');
      return `${payload}.${createHmac('sha256', key).update(payload).digest('base64url')}`;
    },
    decode(code) {
      if (code.length > MAX_CLICK_CODE_LENGTH) return null;
      const [payload, signature, ...rest] = code.split('.');
      if (!payload || !signature || rest.length > 0) return null;
      const given = Buffer.from(signature, 'base64url');
      const expected = sign(payload);
      if (given.length !== expected.length || !timingSafeEqual(given, expected)) return null;
      try {
        const [indexId, searchId, documentId, position, url] = JSON.parse(
          Buffer.from(payload, 'base64url').toString('utf8'),
        ) as unknown[];
        if (typeof indexId !== 'string' || typeof searchId !== 'string' || typeof documentId !== 'string') return null;
        if (typeof position !== 'number' || typeof url !== 'string') return null;
        return { indexId, searchId, documentId, position, url };
      } catch {
        return null;
      }
    },
  };
}

/** The target of a hit's click URL: the document's `url` field, or `metadata.url`, when it is an http(s) URL. */
export function clickTarget(values: Record<string, unknown>, metadata: unknown): string | null {
  const candidates = [values.url, (metadata as Record<string, unknown> | null)?.url];
  for (const candidate of candidates) {
    if (typeof candidate !== 'string' || candidate.length > 2048) continue;
    try {
      const url = new URL(candidate);
      if (url.protocol === 'http:' || url.protocol === 'https:') return candidate;
    } catch {
      // not a URL: try the next place
    }
  }
  return null;
}
