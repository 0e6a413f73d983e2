/**
 * The queue of deliveries to the search engine: one `search_deliveries` row per index that has
 * committed changes the engine has not been sent. SQL only.
 */
import { z } from 'zod';
import { Prisma } from '../../../__generated__/prisma/client';
import type { Db, DbOrTx, Tx } from '../../../kernel/db';
import { int8, parseFirstRow, parseRows, uuid } from '../../../kernel/rows';

/**
 * First key of the two-key advisory locks of deliveries ("SDLV"); the second is the index id's hash.
 * Two indexes whose ids hash alike share a lock: one waits for the other's delivery, nothing worse.
 */
const DELIVERY_LOCK_CLASS = 0x53444c56;

/** PostgreSQL text cannot hold NUL; a stored reason is kept short. */
const storableReason = (reason: string) => reason.replaceAll('\u0000', '').slice(0, 1000);

/**
 * In the transaction of a change: the index has a change to deliver. A row already there keeps
 * its time (the oldest pending change) and its retry schedule.
 */
export const recordChange = (tx: DbOrTx, indexId: string) =>
  tx.$executeRaw`INSERT INTO search_deliveries (index_id) VALUES (${indexId}::uuid) ON CONFLICT (index_id) DO NOTHING`;

/** Indexes whose delivery is due, the longest due first. */
export const dueIndexIds = async (db: Db, limit: number) =>
  parseRows(
    z.object({ indexId: uuid }),
    await db.$queryRaw<unknown[]>`
      SELECT index_id::text AS "indexId" FROM search_deliveries
       WHERE next_attempt_at <= now() ORDER BY next_attempt_at LIMIT ${limit}`,
  ).map((row) => row.indexId);

export interface DeliveryClaim {
  /** Failed deliveries since the last one that succeeded. */
  attempts: number;
}

/**
 * Claims the index's delivery for the rest of the transaction: its advisory lock, when no other
 * transaction holds it, and its queue row, when a delivery is due. Undefined when another process
 * is delivering the index, nothing is pending, or the next try is not due yet.
 */
export async function claimDelivery(tx: Tx, indexId: string): Promise<DeliveryClaim | undefined> {
  return parseFirstRow(
    z.object({ attempts: z.number() }),
    await tx.$queryRaw<unknown[]>`
      SELECT d.attempts
        FROM (SELECT pg_try_advisory_xact_lock(${DELIVERY_LOCK_CLASS}::int, hashtext(${indexId})) AS locked) claim
        JOIN search_deliveries d ON claim.locked AND d.index_id = ${indexId}::uuid AND d.next_attempt_at <= now()`,
  );
}

/**
 * Records that the engine holds the index at `version` (null: the index is deleted, and so is its
 * copy). The queue row goes unless a newer change was committed meanwhile; then it stays, due at
 * once and pending since this transaction began (no change it waits for is older).
 */
export async function completeDelivery(tx: Tx, indexId: string, version: number | null) {
  if (version !== null) {
    // The update takes the index row's lock, so a writer of a newer version commits first and the
    // check below sees its version; a later writer waits for this transaction and queues again.
    await tx.$executeRaw`
      UPDATE search_indexes
         SET processed_version = greatest(processed_version, ${version}),
             last_processed_at = CASE WHEN processed_version < ${version} THEN now() ELSE last_processed_at END
       WHERE id = ${indexId}::uuid`;
  }
  const delivered =
    version === null
      ? Prisma.sql`NOT EXISTS (SELECT 1 FROM search_indexes WHERE id = ${indexId}::uuid)`
      : Prisma.sql`EXISTS (SELECT 1 FROM search_indexes WHERE id = ${indexId}::uuid AND version <= ${version})`;
  const removed =
    await tx.$executeRaw`DELETE FROM search_deliveries WHERE index_id = ${indexId}::uuid AND ${delivered}`;
  if (removed === 0) {
    await tx.$executeRaw`
      UPDATE search_deliveries SET pending_since = now(), attempts = 0, next_attempt_at = now(), last_error = NULL
       WHERE index_id = ${indexId}::uuid`;
  }
}

/** Records a failed delivery: tried again `delayMs` from now. */
export const recordFailure = (tx: DbOrTx, indexId: string, delayMs: number, reason: string) =>
  tx.$executeRaw`
    UPDATE search_deliveries
       SET attempts = attempts + 1, last_error = ${storableReason(reason)},
           next_attempt_at = clock_timestamp() + make_interval(secs => ${delayMs / 1000})
     WHERE index_id = ${indexId}::uuid`;

export interface PendingDelivery {
  indexId: string;
  /** Versions of the index not delivered yet (1 for a deleted index whose copy is still to drop). */
  versions: number;
  /** Seconds since the oldest of them was committed (or a little more: see `completeDelivery`). */
  ageSeconds: number;
  /** Indexes waiting in all, beyond the `limit` returned too. */
  total: number;
}

/** The `limit` indexes waiting longest for a delivery. */
export const pendingDeliveries = async (db: Db, limit: number) =>
  parseRows(
    z.object({ indexId: uuid, versions: int8, ageSeconds: z.number(), total: int8 }),
    await db.$queryRaw<unknown[]>`
      SELECT d.index_id::text AS "indexId",
             coalesce(greatest(i.version - i.processed_version, 0), 1) AS versions,
             greatest(extract(epoch FROM clock_timestamp() - d.pending_since), 0)::float8 AS "ageSeconds",
             count(*) OVER () AS total
        FROM search_deliveries d LEFT JOIN search_indexes i ON i.id = d.index_id
       ORDER BY d.pending_since, d.index_id
       LIMIT ${limit}`,
  ) satisfies PendingDelivery[];
