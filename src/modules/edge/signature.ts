/**
 * Signed URLs of wildcard routes: `?expires=<unix seconds>&signature=<hex>` where the signature is
 * the hex HMAC-SHA256, keyed with the proxy's `auth.signature.secret`, of
 * `<path>` + "\n" + `<expires>`, `<path>` being the proxy-relative path of the URL (what follows
 * `/edge/{key}`, or the whole path on `{key}.{EDGE_DOMAIN}`), without the query string.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

export const EXPIRES_PARAMETER = 'expires';
export const SIGNATURE_PARAMETER = 'signature';

/** The exact string that is signed. */
export const signedString = (path: string, expires: string | number) => `${path}\n${expires}`;

export function signPath(secret: string, path: string, expires: string | number): string {
  return createHmac('sha256', secret).update(signedString(path, expires)).digest('hex');
}

export type SignatureVerdict = { ok: true } | { ok: false; reason: string };

/** Checks a signed request; the signature is compared in constant time. */
export function verifySignature(
  secret: string,
  path: string,
  expires: string | undefined,
  signature: string | undefined,
  nowSeconds: number,
): SignatureVerdict {
  if (expires === undefined || signature === undefined) {
    return {
      ok: false,
      reason: `the wildcard route needs the query parameters "${EXPIRES_PARAMETER}" and "${SIGNATURE_PARAMETER}"`,
    };
  }
  if (!/^\d{1,12}$/.test(expires)) return { ok: false, reason: `"${EXPIRES_PARAMETER}" must be Unix seconds` };
  if (Number(expires) <= nowSeconds) return { ok: false, reason: 'the signed URL has expired' };
  const expected = Buffer.from(signPath(secret, path, expires), 'hex');
  const given = /^[0-9a-fA-F]{64}$/.test(signature) ? Buffer.from(signature, 'hex') : Buffer.alloc(expected.length);
  // Compared even when malformed, so that timing does not tell a malformed signature from a wrong one.
  const equal = timingSafeEqual(given, expected);
  return equal && /^[0-9a-fA-F]{64}$/.test(signature)
    ? { ok: true }
    : { ok: false, reason: 'the signature does not match' };
}

/** The values of the signature parameters in a raw query string (first occurrence of each). */
export function signatureParameters(query: string): { expires?: string; signature?: string } {
  const params = new URLSearchParams(query);
  return {
    expires: params.get(EXPIRES_PARAMETER) ?? undefined,
    signature: params.get(SIGNATURE_PARAMETER) ?? undefined,
  };
}
