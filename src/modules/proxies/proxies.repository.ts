import type { Db } from '../../kernel/db';
import { modelKeysetSource } from '../../kernel/keyset';
import type { Prisma } from '../../__generated__/prisma/client';

export interface StoredProxy {
  key: string;
  routes: Prisma.InputJsonValue;
  auth: Prisma.InputJsonValue;
  oauth: Prisma.InputJsonValue;
  isActive: boolean;
  isSuspended: boolean;
}

export const findProxy = (db: Db, tenantId: string, key: string) => db.proxy.findFirst({ where: { key, tenantId } });

/** The proxies of a tenant ordered by key. */
export const proxyList = (db: Db, tenantId: string) => modelKeysetSource(db.proxy, { tenantId }, 'key');

export const insertProxy = (db: Db, tenantId: string, proxy: StoredProxy) =>
  db.proxy.create({ data: { ...proxy, tenantId } });

/** Replaces a proxy of the tenant; returns whether it existed. */
export const replaceProxy = async (db: Db, tenantId: string, proxy: StoredProxy) =>
  (await db.proxy.updateMany({ where: { key: proxy.key, tenantId }, data: { ...proxy, updatedAt: new Date() } }))
    .count > 0;

/** Deletes a proxy of the tenant; returns whether it existed. */
export const deleteProxy = async (db: Db, tenantId: string, key: string) =>
  (await db.proxy.deleteMany({ where: { key, tenantId } })).count > 0;
