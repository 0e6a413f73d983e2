import type { Db } from '../../kernel/db';

export const findApiKey = (db: Db, id: string) =>
  db.apiKey.findUnique({
    where: { id },
    select: { id: true, tenantId: true, secretHash: true, scopes: true, revokedAt: true },
  });

export const insertTenant = (db: Db, tenant: { id: string; name: string; rateLimitPerMinute: number | null }) =>
  db.tenant.create({ data: tenant });

export const updateTenant = (db: Db, id: string, changes: { name?: string; rateLimitPerMinute?: number | null }) =>
  db.tenant.update({ where: { id }, data: changes });

export const tenantExists = async (db: Db, id: string) =>
  (await db.tenant.findUnique({ where: { id }, select: { id: true } })) !== null;

export const insertApiKey = (
  db: Db,
  key: { id: string; tenantId: string; name: string; secretHash: Buffer; scopes: string[] },
) => db.apiKey.create({ data: { ...key, secretHash: new Uint8Array(key.secretHash) } });

/** Marks a key revoked; returns whether a live key of that tenant was found. */
export const revokeApiKey = async (db: Db, tenantId: string, id: string) =>
  (await db.apiKey.updateMany({ where: { id, tenantId, revokedAt: null }, data: { revokedAt: new Date() } })).count > 0;
