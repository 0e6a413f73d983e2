import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { signedString, signPath, verifySignature } from '../../src/modules/edge/signature';

const SECRET = 'secret-0123456789abcdef';
const NOW = 1_700_000_000;

describe('signed URLs', () => {
  it('sign "<path>\\n<expires>" with HMAC-SHA256 in hex', () => {
    expect(signedString('/a/b.jpg', 1700000600)).toBe('/a/b.jpg\n1700000600');
    expect(signPath(SECRET, '/a/b.jpg', 1700000600)).toBe(
      createHmac('sha256', SECRET).update('/a/b.jpg\n1700000600').digest('hex'),
    );
  });

  it('verify a valid signature until it expires', () => {
    const signature = signPath(SECRET, '/x', NOW + 1);
    expect(verifySignature(SECRET, '/x', String(NOW + 1), signature, NOW)).toEqual({ ok: true });
    expect(verifySignature(SECRET, '/x', String(NOW + 1), signature, NOW + 1)).toEqual({
      ok: false,
      reason: 'the signed URL has expired',
    });
  });

  it('refuse missing, malformed and wrong values', () => {
    const signature = signPath(SECRET, '/x', NOW + 60);
    expect(verifySignature(SECRET, '/x', undefined, signature, NOW).ok).toBe(false);
    expect(verifySignature(SECRET, '/x', String(NOW + 60), undefined, NOW).ok).toBe(false);
    expect(verifySignature(SECRET, '/x', '1e12', signature, NOW)).toMatchObject({
      reason: '"expires" must be Unix seconds',
    });
    expect(verifySignature(SECRET, '/y', String(NOW + 60), signature, NOW)).toMatchObject({
      reason: 'the signature does not match',
    });
    expect(verifySignature(SECRET, '/x', String(NOW + 60), signature.slice(2), NOW)).toMatchObject({
      reason: 'the signature does not match',
    });
    expect(verifySignature(SECRET, '/x', String(NOW + 60), 'z'.repeat(64), NOW)).toMatchObject({
      reason: 'the signature does not match',
    });
  });
});
