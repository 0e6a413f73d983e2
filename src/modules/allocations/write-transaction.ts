/**
 * The transaction of a stock write. A transaction cut off before it committed (its connection
 * killed, a deadlock, a serialization failure) changed nothing: the client is told so, and that
 * sending it again is safe.
 */
import type { Db } from '../../kernel/db';
import { AppError, conflict } from '../../kernel/errors';
import type { Tx } from '../../kernel/idempotency';

const TRANSACTION_OPTIONS = { maxWait: 10_000, timeout: 60_000 };

const RETRYABLE_CODES = new Set(['40001', '40P01', '57P01', '57P02', '57P03', 'P2028', 'P1017', 'P1001']);
const RETRYABLE_MESSAGE = /connection terminated|terminating connection|server closed the connection|connection (was )?closed|transaction already closed|transaction not found/i;

/** Whether an error means the transaction was cut off (connection killed, deadlock, serialization) and nothing was committed. */
export function isInterruption(error: unknown): boolean {
  for (let current = error as { code?: unknown; message?: unknown; cause?: unknown; meta?: { driverAdapterError?: unknown } } | undefined, depth = 0;
    current && depth < 6; depth += 1) {
    if (typeof current.code === 'string' && (RETRYABLE_CODES.has(current.code) || current.code.startsWith('08'))) return true;
    if (typeof current.message === 'string' && RETRYABLE_MESSAGE.test(current.message)) return true;
    current = (current.meta?.driverAdapterError ?? current.cause) as typeof current;
  }
  return false;
}

/** What a client sees when its transaction was cut off: nothing was applied, and sending it again is safe. */
export const interrupted = () =>
  conflict('the write was interrupted before it committed and changed nothing; send it again (with the same idempotency_key)');

/** Runs `work` in one transaction; one cut off before it committed is the CONFLICT of `interrupted`. */
export async function writeTransaction<T>(db: Db, work: (tx: Tx) => Promise<T>): Promise<T> {
  try {
    return await db.$transaction(work, TRANSACTION_OPTIONS);
  } catch (error) {
    if (!(error instanceof AppError) && isInterruption(error)) throw interrupted();
    throw error;
  }
}
