import type { Db, Tx } from '../../kernel/db';
import { modelKeysetSource } from '../../kernel/keyset';

export const findApiKey = (db: Db, id: string) =>
  db.apiKey.findUnique({
    where: { id },
    select: { id: true, tenantId: true, secretHash: true, scopes: true, revokedAt: true },
  });

// Tenants

const tenantColumns = { id: true, name: true, rateLimitPerMinute: true, createdAt: true } as const;

export type TenantRow = { id: string; name: string; rateLimitPerMinute: number | null; createdAt: Date };

export const insertTenant = (db: Db, tenant: { id: string; name: string; rateLimitPerMinute: number | null }) =>
  db.tenant.create({ data: tenant, select: tenantColumns });

export const findTenant = (db: Db, id: string): Promise<TenantRow | null> =>
  db.tenant.findUnique({ where: { id }, select: tenantColumns });

/** Every tenant in order of creation (ids are UUIDv7). */
export const tenantList = (db: Db) =>
  modelKeysetSource<TenantRow, 'id'>(
    {
      findMany: (args) => db.tenant.findMany({ ...args, select: tenantColumns }),
      findFirst: (args) => db.tenant.findFirst(args),
    },
    {},
    'id',
  );

/** Changes a tenant; null when there is none with this id. */
export const updateTenant = async (
  db: Db,
  id: string,
  changes: { name?: string; rateLimitPerMinute?: number | null },
): Promise<TenantRow | null> =>
  (await db.tenant.updateManyAndReturn({ where: { id }, data: changes, select: tenantColumns }))[0] ?? null;

export const tenantExists = async (db: Db, id: string) =>
  (await db.tenant.findUnique({ where: { id }, select: { id: true } })) !== null;

/**
 * Locks a tenant until the transaction ends: rows that would refer to it wait, so nothing is added
 * to it meanwhile. False when there is no such tenant.
 */
export const lockTenant = async (tx: Tx, id: string) =>
  (await tx.$queryRaw<unknown[]>`SELECT id FROM tenants WHERE id = ${id}::uuid FOR UPDATE`).length > 0;

/**
 * Deletes a tenant and, through the foreign keys that all cascade from it, every row it owns in
 * every table (the stock ledger's trigger lets rows go once their tenant is gone).
 */
export const deleteTenant = (tx: Tx, id: string) => tx.$executeRaw`DELETE FROM tenants WHERE id = ${id}::uuid`;

// API keys: never read with their secret's hash, except by the authenticator (findApiKey).

const apiKeyColumns = { id: true, name: true, scopes: true, createdAt: true, revokedAt: true } as const;

export type ApiKeyRow = { id: string; name: string; scopes: string[]; createdAt: Date; revokedAt: Date | null };

export const insertApiKey = (
  db: Db,
  key: { id: string; tenantId: string; name: string; secretHash: Buffer; scopes: string[] },
) => db.apiKey.create({ data: { ...key, secretHash: new Uint8Array(key.secretHash) }, select: apiKeyColumns });

export const findTenantApiKey = (db: Db, tenantId: string, id: string): Promise<ApiKeyRow | null> =>
  db.apiKey.findFirst({ where: { id, tenantId }, select: apiKeyColumns });

/** A tenant's keys, revoked ones included, in order of creation. */
export const apiKeyList = (db: Db, tenantId: string) =>
  modelKeysetSource<ApiKeyRow, 'id'>(
    {
      findMany: (args) => db.apiKey.findMany({ ...args, select: apiKeyColumns }),
      findFirst: (args) => db.apiKey.findFirst(args),
    },
    { tenantId },
    'id',
  );

/** Renames a key of the tenant; null when the tenant has no key with this id. */
export const renameApiKey = async (db: Db, tenantId: string, id: string, name: string): Promise<ApiKeyRow | null> =>
  (await db.apiKey.updateManyAndReturn({ where: { id, tenantId }, data: { name }, select: apiKeyColumns }))[0] ?? null;

/** Marks a key revoked; returns whether a live key of that tenant was found. */
export const revokeApiKey = async (db: Db, tenantId: string, id: string) =>
  (await db.apiKey.updateMany({ where: { id, tenantId, revokedAt: null }, data: { revokedAt: new Date() } })).count > 0;
