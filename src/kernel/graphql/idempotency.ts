import { requestFingerprint, type Idempotency } from '../idempotency';
import { invalidInput } from '../validation';

const KEY_PATTERN = /^[\x21-\x7e]{1,255}$/;

/**
 * The idempotency of a GraphQL mutation: `input.idempotency_key`, fingerprinted with the mutation
 * name and the rest of the input (so a key reused with another input is refused).
 */
export function idempotencyOf(mutation: string, input: { idempotency_key?: string | null }): Idempotency | undefined {
  const { idempotency_key: key, ...rest } = input;
  if (key == null) return undefined;
  if (!KEY_PATTERN.test(key))
    throw invalidInput([{ field: 'input.idempotency_key', message: 'must be 1 to 255 visible ASCII characters' }]);
  return { key, fingerprint: requestFingerprint(`graphql ${mutation}`, rest) };
}
