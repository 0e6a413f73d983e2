/**
 * The proxies' read model: how the modules that answer for a proxy key (the edge's data plane,
 * searching through a proxy) read a proxy, without the scope checks of `ProxyService`, which
 * answers for a caller. Each read is one statement on the request path; the search engine's also
 * reads the search module's settings row of the key, so that a search costs one round trip.
 */
import { z } from 'zod';
import type { Db } from '../../kernel/db';
import { parseFirstRow, uuid } from '../../kernel/rows';

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
export const proxyVersionOfKey = async (db: Db, key: string): Promise<ProxyVersionRow | null> => {
  const rows = await db.$queryRaw<ProxyVersionRow[]>`
    SELECT key, tenant_id::text AS "tenantId", routes, auth, oauth, is_active AS "isActive",
           is_suspended AS "isSuspended", xmin::text AS version
    FROM proxies WHERE key = ${key}`;
  return rows[0] ?? null;
};

/** Whether the tenant holds a proxy with `key`. */
export const tenantHoldsProxy = async (db: Db, tenantId: string, key: string) =>
  (await db.proxy.findFirst({ where: { key, tenantId }, select: { key: true } })) !== null;

/** The proxy with `key` and its tenant, whichever tenant holds it. */
export const proxyOfKey = (db: Db, key: string) =>
  db.proxy.findUnique({
    where: { key },
    select: { key: true, tenantId: true, routes: true, isActive: true, isSuspended: true },
  });

const SearchEngineRow = z.object({
  key: z.string(),
  tenantId: uuid,
  routes: z.unknown(),
  isActive: z.boolean(),
  isSuspended: z.boolean(),
  settingsTenantId: uuid.nullable(),
  settings: z.unknown(),
});

/**
 * A proxy and its search settings (the search module's `search_settings` row; null when it has none)
 * in one statement, or undefined when there is no proxy: every search through a proxy key reads it.
 */
export async function proxyWithSearchSettings(db: Db, key: string) {
  const row = parseFirstRow(
    SearchEngineRow,
    await db.$queryRaw<unknown[]>`
      SELECT p.key, p.tenant_id::text AS "tenantId", p.routes, p.is_active AS "isActive",
             p.is_suspended AS "isSuspended", s.tenant_id::text AS "settingsTenantId", s.settings
        FROM proxies p LEFT JOIN search_settings s ON s.proxy_key = p.key
       WHERE p.key = ${key}`,
  );
  if (!row) return undefined;
  const { settingsTenantId, settings, ...proxy } = row;
  return { proxy, settings: settingsTenantId === null ? null : { tenantId: settingsTenantId, settings } };
}
