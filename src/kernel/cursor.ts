import { createHmac, timingSafeEqual } from 'node:crypto';
import { badRequest } from './errors';

/**
 * Opaque, signed pagination cursors. A cursor names the list it belongs to (resource and tenant),
 * so a cursor from another list, another tenant or a hand-made one is refused rather than silently
 * paging somewhere unexpected.
 */
export interface CursorCodec {
  encode(scope: string, key: unknown): string;
  decode(scope: string, cursor: string, parameter: string): unknown;
}

export function createCursorCodec(secret: string | Buffer): CursorCodec {
  const sign = (payload: string) => createHmac('sha256', secret).update(payload).digest().subarray(0, 16);
  return {
    encode(scope, key) {
      const payload = Buffer.from(JSON.stringify({ s: scope, k: key })).toString('base64url');
      return `${payload}.${sign(payload).toString('base64url')}`;
    },
    decode(scope, cursor, parameter) {
      const invalid = () =>
        badRequest(`${parameter} is not a valid cursor for this list`, [
          { field: parameter, message: 'not a valid cursor for this list' },
        ]);
      const [payload, signature, ...rest] = cursor.split('.');
      if (!payload || !signature || rest.length > 0 || cursor.length > 1024) throw invalid();
      const expected = sign(payload);
      const given = Buffer.from(signature, 'base64url');
      if (given.length !== expected.length || !timingSafeEqual(given, expected)) throw invalid();
      let decoded: { s?: unknown; k?: unknown };
      try {
        decoded = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
      } catch {
        throw invalid();
      }
      if (decoded.s !== scope || decoded.k === undefined) throw invalid();
      return decoded.k;
    },
  };
}
