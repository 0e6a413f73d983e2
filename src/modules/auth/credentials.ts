import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

const API_KEY_PREFIX = 'cpk';
const apiKeyPattern = /^cpk_([0-9a-f]{32})_([A-Za-z0-9_-]{43})$/;

export const sha256 = (value: string): Buffer => createHash('sha256').update(value).digest();

/** Constant-time comparison of two secrets of any length (compares their digests). */
export function secretsEqual(given: string, expected: string): boolean {
  return timingSafeEqual(sha256(given), sha256(expected));
}

/**
 * An API key is `cpk_<key id>_<secret>`: the id finds the row, the 256-bit secret proves possession.
 * Only the SHA-256 of the secret is stored; a fast hash is right here because the secret is random,
 * not a password.
 */
export function generateApiKey(id: string): { key: string; secretHash: Buffer } {
  const secret = randomBytes(32).toString('base64url');
  return { key: `${API_KEY_PREFIX}_${id.replaceAll('-', '')}_${secret}`, secretHash: sha256(secret) };
}

export function parseApiKey(token: string): { id: string; secret: string } | null {
  const match = apiKeyPattern.exec(token);
  if (!match) return null;
  const hex = match[1]!;
  const id = `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
  return { id, secret: match[2]! };
}

export function secretMatchesHash(secret: string, storedHash: Uint8Array): boolean {
  const given = sha256(secret);
  return storedHash.length === given.length && timingSafeEqual(given, storedHash);
}

const bearerPattern = /^Bearer +([A-Za-z0-9\-._~+/]+=*) *$/i;

/** The token of an `Authorization: Bearer <token>` header, or null when absent or malformed. */
export function bearerToken(header: string | undefined): string | null {
  if (!header) return null;
  return bearerPattern.exec(header)?.[1] ?? null;
}
