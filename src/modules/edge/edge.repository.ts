import type { Db } from '../../kernel/db';

/** A proxy as the data plane reads it, with the id of the transaction that wrote this version of it. */
export interface ProxyVersionRow {
  key: string;
  tenantId: string;
  routes: unknown;
  auth: unknown;
  oauth: unknown;
  isActive: boolean;
  isSuspended: boolean;
  /** The row's xmin, as `notify_proxy_changed` announces it. */
  version: string;
}

/** The proxy with `key`, whichever tenant holds it: keys are global, as public URLs are. */
export const findProxyByKey = async (db: Db, key: string): Promise<ProxyVersionRow | null> => {
  const rows = await db.$queryRaw<ProxyVersionRow[]>`
    SELECT key, tenant_id::text AS "tenantId", routes, auth, oauth, is_active AS "isActive",
           is_suspended AS "isSuspended", xmin::text AS version
    FROM proxies WHERE key = ${key}`;
  return rows[0] ?? null;
};

/** Whether the tenant holds a proxy with `key`. */
export const tenantHoldsProxy = async (db: Db, tenantId: string, key: string) =>
  (await db.proxy.findFirst({ where: { key, tenantId }, select: { key: true } })) !== null;
