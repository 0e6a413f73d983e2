/**
 * The data-access vocabulary every repository and service shares: `Db` (the pooled client),
 * `Tx` (the client of one open transaction), `DbOrTx` (what a repository function takes), and the
 * one helper that runs a write transaction.
 */
import { PrismaPg } from '@prisma/adapter-pg';
import pg from 'pg';
import { PrismaClient } from '../__generated__/prisma/client';
import { AppError } from './errors';
import { createPool } from './tracing/postgres';

export type Db = PrismaClient;

/** The client of one open transaction (what `db.$transaction(async (tx) => ...)` hands over). */
export type Tx = Parameters<Parameters<Db['$transaction']>[0]>[0];

/** Either client: a repository function that needs no transaction of its own takes this. */
export type DbOrTx = Db | Tx;

const pools = new WeakMap<Db, pg.Pool>();

/** Creates the Prisma client over the pg driver adapter (no native query engine involved). */
export function createDb(databaseUrl: string, options: { poolSize?: number } = {}): Db {
  // The pool is made here (and closed by the client's $disconnect) so that its use can be reported.
  const pool = createPool({ connectionString: databaseUrl, max: options.poolSize ?? 10 });
  const db = new PrismaClient({ adapter: new PrismaPg(pool, { disposeExternalPool: true }) });
  pools.set(db, pool);
  return db;
}

/** The pg pool under the client (for libraries that take one), shared with Prisma. */
export function poolOf(db: Db): pg.Pool {
  const pool = pools.get(db);
  if (!pool) throw new Error('not a client made by createDb');
  return pool;
}

/**
 * How to open one more connection to the client's database: as its pool does, or with
 * `databaseUrl` for a client made elsewhere.
 */
export const connectionOf = (db: Db, databaseUrl: string | undefined): pg.ClientConfig =>
  pools.get(db)?.options ?? { connectionString: databaseUrl };

/** Connections of the client's pool: open, idle, and requests waiting for one. */
export function poolUse(db: Db) {
  const pool = pools.get(db);
  return pool
    ? { size: pool.options.max ?? 10, total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount }
    : undefined;
}

/** Whether a thrown error is PostgreSQL's unique violation (directly or through Prisma). */
export function isUniqueViolation(error: unknown): boolean {
  const e = error as { code?: string; meta?: { driverAdapterError?: { cause?: { code?: string; kind?: string } } } };
  if (e?.code === 'P2002' || e?.code === '23505') return true;
  const cause = e?.meta?.driverAdapterError?.cause;
  return cause?.code === '23505' || cause?.kind === 'UniqueConstraintViolation';
}

// A write may wait behind hot rows (a popular SKU under load) longer than Prisma's 5 s default.
const TRANSACTION_OPTIONS = { maxWait: 10_000, timeout: 60_000 };

const INTERRUPTION_CODES = new Set(['40001', '40P01', '57P01', '57P02', '57P03', 'P2028', 'P1017', 'P1001']);
const INTERRUPTION_MESSAGE =
  /connection terminated|terminating connection|server closed the connection|connection (was )?closed|transaction already closed|transaction not found/i;

type ErrorChain = { code?: unknown; message?: unknown; cause?: unknown; meta?: { driverAdapterError?: unknown } };

/**
 * Whether an error means the transaction was cut off before it committed (connection killed,
 * deadlock, serialization failure): nothing was applied.
 */
export function isInterruption(error: unknown): boolean {
  let current = error as ErrorChain | undefined;
  for (let depth = 0; current && depth < 6; depth += 1) {
    const { code, message } = current;
    if (typeof code === 'string' && (INTERRUPTION_CODES.has(code) || code.startsWith('08'))) return true;
    if (typeof message === 'string' && INTERRUPTION_MESSAGE.test(message)) return true;
    current = (current.meta?.driverAdapterError ?? current.cause) as ErrorChain | undefined;
  }
  return false;
}

/** What a client sees when its write was cut off: nothing was applied, and sending it again is safe. */
export const writeInterrupted = (reason = 'send it again (with the same idempotency key, if it had one)') =>
  new AppError('WRITE_INTERRUPTED', reason);

/**
 * Runs `work` in one transaction. A transaction cut off before it committed changed nothing, and
 * the caller is told so with WRITE_INTERRUPTED (retryable) rather than an internal error.
 */
export async function writeTransaction<T>(
  db: Db,
  work: (tx: Tx) => Promise<T>,
  options: { maxWait?: number; timeout?: number } = {},
): Promise<T> {
  try {
    return await db.$transaction(work, { ...TRANSACTION_OPTIONS, ...options });
  } catch (error) {
    if (!(error instanceof AppError) && isInterruption(error)) throw writeInterrupted();
    throw error;
  }
}
