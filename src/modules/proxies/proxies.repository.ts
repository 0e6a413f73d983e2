import type { Db } from '../../kernel/db';
import type { KeysetQuery } from '../../kernel/pagination';
import type { Prisma } from '../../__generated__/prisma/client';

export interface StoredProxy {
  key: string;
  routes: Prisma.InputJsonValue;
  auth: Prisma.InputJsonValue;
  oauth: Prisma.InputJsonValue;
  isActive: boolean;
  isSuspended: boolean;
}

export const findProxy = (db: Db, tenantId: string, key: string) =>
  db.proxy.findFirst({ where: { key, tenantId } });

export const listProxies = (db: Db, tenantId: string, query: KeysetQuery<string>) =>
  db.proxy.findMany({
    where: {
      tenantId,
      ...(query.after !== undefined ? { key: { gt: query.after } } : {}),
      ...(query.before !== undefined ? { key: { lt: query.before } } : {}),
    },
    orderBy: { key: query.backwards ? 'desc' : 'asc' },
    take: query.take,
  });

export const proxyExistsBeside = async (db: Db, tenantId: string, direction: 'before' | 'after', key: string) =>
  (await db.proxy.findFirst({
    where: { tenantId, key: direction === 'before' ? { lt: key } : { gt: key } },
    select: { key: true },
  })) !== null;

export const insertProxy = (db: Db, tenantId: string, proxy: StoredProxy) =>
  db.proxy.create({ data: { ...proxy, tenantId } });

/** Replaces a proxy of the tenant; returns whether it existed. */
export const replaceProxy = async (db: Db, tenantId: string, proxy: StoredProxy) =>
  (await db.proxy.updateMany({ where: { key: proxy.key, tenantId }, data: { ...proxy, updatedAt: new Date() } })).count > 0;

/** Deletes a proxy of the tenant; returns whether it existed. */
export const deleteProxy = async (db: Db, tenantId: string, key: string) =>
  (await db.proxy.deleteMany({ where: { key, tenantId } })).count > 0;
