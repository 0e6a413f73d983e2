import { createHash } from 'node:crypto';
import { deleteInBatches } from './batched-delete';
import type { Db, Tx } from './db';
import { z } from 'zod';
import { AppError } from './errors';
import { parseFirstRow } from './rows';

const StoredKey = z.object({ request_hash: z.string(), response: z.unknown() });

/** How long a key is remembered; a key older than this is treated as new. */
export const IDEMPOTENCY_KEY_TTL_HOURS = 24;

/**
 * JSON with object keys sorted, so that two equal bodies hash alike whatever their key order.
 * Written piece by piece into one list, so its cost is linear in the size of the body (nested
 * joins would copy each level's text once per level above it).
 */
function canonicalJson(value: unknown): string {
  const parts: string[] = [];
  const write = (current: unknown) => {
    if (Array.isArray(current)) {
      parts.push('[');
      current.forEach((item, index) => {
        if (index > 0) parts.push(',');
        write(item);
      });
      parts.push(']');
    } else if (current !== null && typeof current === 'object') {
      const keys = Object.keys(current)
        .filter((key) => (current as Record<string, unknown>)[key] !== undefined)
        .sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
      parts.push('{');
      keys.forEach((key, index) => {
        parts.push(index > 0 ? ',' : '', JSON.stringify(key), ':');
        write((current as Record<string, unknown>)[key]);
      });
      parts.push('}');
    } else {
      parts.push(JSON.stringify(current) ?? 'null');
    }
  };
  write(value);
  return parts.join('');
}

/** The fingerprint a repeated request must match: what it does (e.g. `POST /api/inventory/items`) and its body. */
export function requestFingerprint(operation: string, body: unknown): string {
  return createHash('sha256')
    .update(`${operation}\n${canonicalJson(body)}`)
    .digest('hex');
}

export interface Idempotency {
  key: string;
  fingerprint: string;
}

/**
 * Runs `work` once per (tenant, key) within the caller's transaction and returns its result, or
 * the stored result of the first request with that key. The key is claimed first: a concurrent
 * request with the same key waits on the claim's row lock until the first commits (then replays
 * its result) or rolls back (then runs itself). Only successful results are stored, so a rejected
 * request leaves nothing behind and can be corrected and resent with the same key. A key reused
 * with another request is a 422.
 */
export async function runIdempotent<T>(
  tx: Tx,
  tenantId: string,
  idempotency: Idempotency | undefined,
  work: () => Promise<T>,
): Promise<T> {
  if (idempotency === undefined) return work();
  const { key, fingerprint } = idempotency;
  const claimed = await tx.$queryRaw<unknown[]>`
    INSERT INTO idempotency_keys (tenant_id, key, request_hash)
    VALUES (${tenantId}::uuid, ${key}, ${fingerprint})
    ON CONFLICT (tenant_id, key) DO UPDATE
       SET request_hash = EXCLUDED.request_hash, response = NULL, created_at = now()
     WHERE idempotency_keys.created_at < now() - make_interval(hours => ${IDEMPOTENCY_KEY_TTL_HOURS})
    RETURNING true AS claimed`;
  if (claimed.length === 0) {
    const stored = parseFirstRow(
      StoredKey,
      await tx.$queryRaw<unknown[]>`
        SELECT request_hash, response FROM idempotency_keys WHERE tenant_id = ${tenantId}::uuid AND key = ${key}`,
    );
    if (!stored || stored.response === null) throw new Error('an idempotency key was committed without its response');
    if (stored.request_hash !== fingerprint) {
      throw new AppError(
        'UNPROCESSABLE_ENTITY',
        `the Idempotency-Key "${key}" was already used with a different request`,
        {
          details: [{ field: 'header.Idempotency-Key', message: 'was already used with a different request' }],
        },
      );
    }
    // The stored response is what `work` returned for this same request: the caller's own type.
    return stored.response as T;
  }
  const result = await work();
  await tx.$executeRaw`
    UPDATE idempotency_keys SET response = ${JSON.stringify(result)}::jsonb WHERE tenant_id = ${tenantId}::uuid AND key
      = ${key}`;
  // Forget a few expired keys of any tenant on the way, so the table does not grow without bound.
  await tx.$executeRaw`
    DELETE FROM idempotency_keys WHERE ctid IN (
      SELECT ctid FROM idempotency_keys
       WHERE created_at < now() - make_interval(hours => ${IDEMPOTENCY_KEY_TTL_HOURS}) LIMIT 100)`;
  return result;
}

/** Deletes keys older than `IDEMPOTENCY_KEY_TTL_HOURS` (treated as new already); safe in several processes at once. */
export const deleteExpiredIdempotencyKeys = (db: Db, options: { stopping?: () => boolean } = {}) =>
  deleteInBatches(
    (limit) => db.$executeRaw`
      DELETE FROM idempotency_keys WHERE ctid = ANY(ARRAY(
        SELECT ctid FROM idempotency_keys
         WHERE created_at < now() - make_interval(hours => ${IDEMPOTENCY_KEY_TTL_HOURS})
         LIMIT ${limit} FOR UPDATE SKIP LOCKED))`,
    options,
  );
