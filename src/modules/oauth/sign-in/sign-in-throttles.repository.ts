import { z } from 'zod';
import type { DbOrTx } from '../../../kernel/db';
import { parseFirstRow, parseRows, timestamp } from '../../../kernel/rows';
import { Prisma } from '../../../__generated__/prisma/client';

export type ThrottleKind = 'ACCOUNT' | 'ADDRESS';

/** One row of `oauth_sign_in_throttles`: what an attempt is counted against. */
export interface ThrottleKey {
  tenantId: string;
  kind: ThrottleKind;
  /** SHA-256 of the account's e-mail address or of the client address. */
  subjectHash: Buffer;
}

const bytes = (buffer: Buffer) => new Uint8Array(buffer);

const keyIs = (key: ThrottleKey) =>
  Prisma.sql`tenant_id = ${key.tenantId}::uuid AND kind = ${key.kind}::oauth_sign_in_throttle_kind
    AND subject_hash = ${bytes(key.subjectHash)}`;

/** Seconds until a row's lock ends, rounded up and measured on the database's clock, so every process agrees. */
const retryAfter = Prisma.raw('ceil(extract(epoch FROM locked_until - now()))::int');

const countedRow = z.object({
  kind: z.enum(['ACCOUNT', 'ADDRESS']),
  /** Attempts in the window, this one included; null when the row is locked and nothing was counted. */
  failures: z.number().nullable(),
  window_start: timestamp.nullable(),
  /** Seconds until the row's lock ends; null when it is not locked. */
  retry_after: z.number().nullable(),
});
export type CountedRow = z.infer<typeof countedRow>;

/**
 * Counts one sign-in attempt against an account and a client address in one statement, so that
 * concurrent attempts in any number of processes all count: each row's count goes up by one within
 * its window, or restarts at 1 once the window has passed. When either row is locked nothing is
 * counted and the locked rows are answered with their `retry_after`. Rows are taken in one order
 * (the account, then the address), so that concurrent counts never deadlock.
 */
export async function countSignInAttempt(
  db: DbOrTx,
  tenantId: string,
  subjects: { account: Buffer; address: Buffer },
  windowSeconds: number,
  keepSeconds: number,
): Promise<CountedRow[]> {
  const inWindow = Prisma.sql`t.window_start > now() - make_interval(secs => ${windowSeconds})`;
  const rows = await db.$queryRaw<unknown[]>`
    WITH subjects (kind, subject_hash) AS (
      VALUES ('ACCOUNT'::oauth_sign_in_throttle_kind, ${bytes(subjects.account)}::bytea),
             ('ADDRESS'::oauth_sign_in_throttle_kind, ${bytes(subjects.address)}::bytea)
    ),
    locks AS (
      SELECT kind, ${retryAfter} AS retry_after
      FROM oauth_sign_in_throttles JOIN subjects USING (kind, subject_hash)
      WHERE tenant_id = ${tenantId}::uuid AND locked_until > now()
    ),
    counted AS (
      INSERT INTO oauth_sign_in_throttles AS t (tenant_id, kind, subject_hash, failures, window_start, expires_at)
      SELECT ${tenantId}::uuid, kind, subject_hash, 1, now(), now() + make_interval(secs => ${keepSeconds})
      FROM subjects WHERE NOT EXISTS (SELECT 1 FROM locks)
      ORDER BY kind
      ON CONFLICT (tenant_id, kind, subject_hash) DO UPDATE SET
        failures = CASE WHEN t.locked_until > now() THEN t.failures WHEN ${inWindow} THEN t.failures + 1 ELSE 1 END,
        window_start = CASE WHEN t.locked_until > now() OR ${inWindow} THEN t.window_start ELSE now() END,
        expires_at = greatest(t.expires_at, EXCLUDED.expires_at)
      RETURNING t.kind, t.failures, t.window_start, t.locked_until
    )
    SELECT kind::text AS kind,
           CASE WHEN locked_until > now() THEN NULL ELSE failures END AS failures,
           window_start,
           CASE WHEN locked_until > now() THEN ${retryAfter} END AS retry_after
    FROM counted
    UNION ALL
    SELECT kind::text, NULL, NULL, retry_after FROM locks`;
  return parseRows(countedRow, rows);
}

const lockRow = z.object({ retry_after: z.number() });

/**
 * Locks a row whose count reached `limit`, unless it is locked already: for `lockSeconds` doubled
 * for each earlier lock of the row, at most `maxLockSeconds`; its count starts again from 0.
 * Answers the seconds until the row's lock ends (this one's, or the one another attempt set), or
 * null when it holds none (a successful sign-in reset it meanwhile).
 */
export async function lockSignIn(
  db: DbOrTx,
  key: ThrottleKey,
  lock: { limit: number; lockSeconds: number; maxLockSeconds: number; keepSeconds: number },
): Promise<number | null> {
  const length = Prisma.sql`least(${lock.lockSeconds} * power(2, least(lockouts, 30)), ${lock.maxLockSeconds})`;
  const locked = await db.$queryRaw<unknown[]>`
    UPDATE oauth_sign_in_throttles SET
      -- Whole milliseconds, as the column keeps them, so that the wait answered is the lock's length exactly.
      locked_until = date_trunc('milliseconds', now()) + make_interval(secs => ${length}),
      lockouts = lockouts + 1,
      failures = 0,
      window_start = now(),
      expires_at = greatest(expires_at, now() + make_interval(secs => ${length} + ${lock.keepSeconds}))
    WHERE ${keyIs(key)} AND failures >= ${lock.limit} AND (locked_until IS NULL OR locked_until <= now())
    RETURNING ${retryAfter} AS retry_after`;
  // A statement of its own, so that it sees a lock another attempt committed while this one waited.
  const found =
    parseFirstRow(lockRow, locked) ??
    parseFirstRow(
      lockRow,
      await db.$queryRaw<unknown[]>`
        SELECT ${retryAfter} AS retry_after FROM oauth_sign_in_throttles
        WHERE ${keyIs(key)} AND locked_until > now()`,
    );
  return found?.retry_after ?? null;
}

/** A successful sign-in: the account's row goes, and with it its count, its lock and how many locks it had. */
export async function forgetSignInFailures(db: DbOrTx, key: ThrottleKey) {
  await db.$executeRaw`DELETE FROM oauth_sign_in_throttles WHERE ${keyIs(key)}`;
}

/**
 * Takes a successful attempt back from a count, if the window it was counted in is still the row's
 * (a lock, or a new window, has started the count again since).
 */
export async function uncountSignInAttempt(db: DbOrTx, key: ThrottleKey, windowStart: Date) {
  await db.$executeRaw`
    UPDATE oauth_sign_in_throttles SET failures = failures - 1
    WHERE ${keyIs(key)} AND window_start = ${windowStart.toISOString()}::timestamptz AND failures > 0`;
}

/** Deletes the rows whose window and lock have long ended; safe in several processes at once. */
export const deleteExpiredSignInThrottles = (db: DbOrTx) =>
  db.$executeRaw`DELETE FROM oauth_sign_in_throttles WHERE expires_at <= now()`;
