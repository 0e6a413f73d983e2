import type { Db } from '../../kernel/db';
import type { KeysetQuery } from '../../kernel/pagination';

/** Products of a tenant in id order (UUIDv7: creation order). */
export const listProducts = (db: Db, tenantId: string, query: KeysetQuery<string>) =>
  db.product.findMany({
    where: {
      tenantId,
      ...(query.after !== undefined ? { id: { gt: query.after } } : {}),
      ...(query.before !== undefined ? { id: { lt: query.before } } : {}),
    },
    orderBy: { id: query.backwards ? 'desc' : 'asc' },
    take: query.take,
  });

export const productExistsBeside = async (db: Db, tenantId: string, direction: 'before' | 'after', id: string) =>
  (await db.product.findFirst({
    where: { tenantId, id: direction === 'before' ? { lt: id } : { gt: id } },
    select: { id: true },
  })) !== null;
