import { z } from 'zod';
import { requestFingerprint, type Idempotency } from '../idempotency';

/** An idempotency key: 1 to 255 visible ASCII characters (an MCP operation requires one). */
export const RequiredIdempotencyKey = z
  .string()
  .regex(/^[\x21-\x7e]{1,255}$/, 'must be 1 to 255 visible ASCII characters');

/** `idempotency_key` of a mutation input, which may be left out. */
export const IdempotencyKey = RequiredIdempotencyKey.nullish();

/**
 * The idempotency of a GraphQL mutation: its parsed input's `idempotency_key`, fingerprinted with
 * the mutation name and the rest of the input (so a key reused with another input is refused).
 */
export function idempotencyOf(mutation: string, input: { idempotency_key?: string | null }): Idempotency | undefined {
  const { idempotency_key: key, ...rest } = input;
  if (key == null) return undefined;
  return { key, fingerprint: requestFingerprint(`graphql ${mutation}`, rest) };
}
