/**
 * The `Idempotency-Key` header of the REST writes that take one, and the idempotency it asks for
 * (see `runIdempotent`): one declaration, so that every such operation documents it alike.
 */
import { requestFingerprint, type Idempotency } from '../idempotency';
import { z } from './schemas';

export const IdempotencyHeaders = z.object({
  'Idempotency-Key': z
    .string()
    .min(1)
    .max(255)
    .regex(/^[\x21-\x7e]+$/)
    .optional()
    .openapi({
      description:
        'Makes the write safe to retry: for 24 hours, a request with the same key and the same body gets the first ' +
        'successful response again without applying twice; the same key with another body is a 422. Keys are per ' +
        'tenant.',
    }),
});

/** The idempotency of a write of `operation` ("PUT /api/prices") with this body, when the client sent a key. */
export const idempotencyOf = (
  headers: z.output<typeof IdempotencyHeaders>,
  operation: string,
  body: unknown,
): Idempotency | undefined => {
  const key = headers['Idempotency-Key'];
  return key === undefined ? undefined : { key, fingerprint: requestFingerprint(operation, body) };
};
