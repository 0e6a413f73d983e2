import type { Db } from '../../kernel/db';

/** The proxy with `key`, whichever tenant holds it: keys are global, as public URLs are. */
export const findProxyByKey = (db: Db, key: string) => db.proxy.findUnique({ where: { key } });

/** Whether the tenant holds a proxy with `key`. */
export const tenantHoldsProxy = async (db: Db, tenantId: string, key: string) =>
  (await db.proxy.findFirst({ where: { key, tenantId }, select: { key: true } })) !== null;
