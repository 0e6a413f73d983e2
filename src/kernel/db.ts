import { PrismaPg } from '@prisma/adapter-pg';
import { PrismaClient } from '../__generated__/prisma/client';

export type Db = PrismaClient;

/** Creates the Prisma client over the pg driver adapter (no native query engine involved). */
export function createDb(databaseUrl: string, options: { poolSize?: number } = {}): Db {
  const adapter = new PrismaPg({ connectionString: databaseUrl, max: options.poolSize ?? 10 });
  return new PrismaClient({ adapter });
}

/** Whether a thrown error is PostgreSQL's unique violation (directly or through Prisma). */
export function isUniqueViolation(error: unknown): boolean {
  const e = error as { code?: string; meta?: { driverAdapterError?: { cause?: { code?: string; kind?: string } } } };
  if (e?.code === 'P2002' || e?.code === '23505') return true;
  const cause = e?.meta?.driverAdapterError?.cause;
  return cause?.code === '23505' || cause?.kind === 'UniqueConstraintViolation';
}
