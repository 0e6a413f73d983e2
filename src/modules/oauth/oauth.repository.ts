import { z } from 'zod';
import { deleteInBatches } from '../../kernel/batched-delete';
import type { Db, DbOrTx, Tx } from '../../kernel/db';
import { modelKeysetSource } from '../../kernel/keyset';
import { parseFirstRow, parseRows, timestamp, uuid } from '../../kernel/rows';
import type { Prisma } from '../../__generated__/prisma/client';
import { CLIENT_CREDENTIALS_GRANT_LIFETIME_SECONDS } from './oauth.constants';

const bytes = (buffer: Buffer) => new Uint8Array(buffer);

// Clients

export const insertClient = (
  db: DbOrTx,
  client: {
    id: string;
    /** Null for a self-registered client, which has a registration token instead. */
    tenantId: string | null;
    name: string;
    secretHash: Buffer | null;
    isConfidential: boolean;
    redirectUris: string[];
    scopes: string[];
    resources: string[];
    registrationTokenHash?: Buffer;
  },
) =>
  db.oAuthClient.create({
    data: {
      ...client,
      secretHash: client.secretHash ? bytes(client.secretHash) : null,
      registrationTokenHash: client.registrationTokenHash ? bytes(client.registrationTokenHash) : null,
    },
  });

export const findClient = (db: DbOrTx, id: string) => db.oAuthClient.findUnique({ where: { id } });

/**
 * Counts a failed authentication of a client within a window of `windowSeconds`, in one statement
 * so that concurrent failures on any process all count. Returns the count and when the window began.
 */
export async function recordFailedClientAuth(db: DbOrTx, id: string, windowSeconds: number) {
  const rows = await db.$queryRaw<unknown[]>`
    UPDATE oauth_clients SET
      failed_auth_count = CASE WHEN failed_auth_window_start > now() - make_interval(secs => ${windowSeconds})
                               THEN failed_auth_count + 1 ELSE 1 END,
      failed_auth_window_start = CASE WHEN failed_auth_window_start > now() - make_interval(secs => ${windowSeconds})
                                      THEN failed_auth_window_start ELSE now() END
    WHERE id = ${id}::uuid
    RETURNING failed_auth_count, failed_auth_window_start`;
  return parseFirstRow(z.object({ failed_auth_count: z.number(), failed_auth_window_start: timestamp }), rows);
}

// Users

export const insertUser = (db: DbOrTx, user: { id: string; tenantId: string; email: string; passwordHash: string }) =>
  db.user.create({ data: user });

export const findUserByEmail = (db: DbOrTx, tenantId: string, email: string) =>
  db.user.findUnique({ where: { tenantId_email: { tenantId, email } } });

export const findUser = (db: DbOrTx, id: string) => db.user.findUnique({ where: { id } });

// Signing keys

/** The keys that verify tokens: every key not retired yet. */
export const listSigningKeys = (db: DbOrTx) =>
  db.oAuthSigningKey.findMany({
    where: { OR: [{ retireAt: null }, { retireAt: { gt: new Date() } }] },
    orderBy: [{ createdAt: 'asc' }, { kid: 'asc' }],
  });

/** The key tokens are signed with now: the latest to start signing, not retired. */
export const signingKeyInForce = (db: DbOrTx) => {
  const now = new Date();
  return db.oAuthSigningKey.findFirst({
    where: { signsFrom: { lte: now }, OR: [{ retireAt: null }, { retireAt: { gt: now } }] },
    orderBy: [{ signsFrom: 'desc' }, { createdAt: 'desc' }, { kid: 'desc' }],
  });
};

export const findSigningKey = (db: DbOrTx, kid: string) => db.oAuthSigningKey.findUnique({ where: { kid } });

/** When the next published key starts signing, or null when none is waiting. */
export const nextSigningKeyStart = async (db: DbOrTx) =>
  (
    await db.oAuthSigningKey.findFirst({
      where: { signsFrom: { gt: new Date() }, retireAt: null },
      orderBy: { signsFrom: 'asc' },
      select: { signsFrom: true },
    })
  )?.signsFrom ?? null;

/** Schedules the retirement of every key not scheduled yet (before a new one becomes current). */
export const retireSigningKeys = (db: DbOrTx, retireAt: Date) =>
  db.oAuthSigningKey.updateManyAndReturn({
    where: { retireAt: null },
    data: { retireAt },
    select: { kid: true, retireAt: true },
  });

/** Deletes keys whose retirement has passed: every token they signed has expired. */
export const deleteRetiredSigningKeys = (db: DbOrTx) =>
  db.oAuthSigningKey.deleteMany({ where: { retireAt: { lte: new Date() } } });

/**
 * Deletes what has expired: authorization sessions and codes an hour after their expiry (a code
 * presented again within that hour still revokes its grant), refresh tokens once expired (an
 * expired one is refused either way), and client_credentials grants once no token of theirs can be
 * presented (one is made per token request, so they are deleted in batches). Each statement is safe
 * to run in several processes at once.
 */
export async function deleteExpiredAuthorizationState(db: Db, options: { stopping?: () => boolean } = {}) {
  const margin = new Date(Date.now() - 3600_000);
  const sessions = await db.oAuthAuthorizationSession.deleteMany({ where: { expiresAt: { lte: margin } } });
  const codes = await db.oAuthAuthorizationCode.deleteMany({ where: { expiresAt: { lte: margin } } });
  const refreshTokens = await db.oAuthRefreshToken.deleteMany({ where: { expiresAt: { lte: new Date() } } });
  const clientCredentialsGrants = await deleteInBatches(
    (limit) => db.$executeRaw`
      DELETE FROM oauth_grants WHERE ctid = ANY(ARRAY(
        SELECT ctid FROM oauth_grants
         WHERE grant_type = 'client_credentials'
           AND created_at < now() - make_interval(secs => ${CLIENT_CREDENTIALS_GRANT_LIFETIME_SECONDS})
         LIMIT ${limit} FOR UPDATE SKIP LOCKED))`,
    options,
  );
  return { sessions: sessions.count, codes: codes.count, refreshTokens: refreshTokens.count, clientCredentialsGrants };
}

export const insertSigningKey = (
  db: DbOrTx,
  key: { kid: string; algorithm: string; publicJwk: object; privateKeyEncrypted: Buffer; signsFrom: Date },
) =>
  db.oAuthSigningKey.create({
    data: {
      ...key,
      publicJwk: key.publicJwk as Prisma.InputJsonObject,
      privateKeyEncrypted: bytes(key.privateKeyEncrypted),
    },
  });

/** Serialises the processes that might each create the first signing key, until the transaction ends. */
export const lockSigningKeyCreation = (tx: Tx) => tx.$queryRaw`SELECT 1 AS locked FROM pg_advisory_xact_lock(72707370)`;

// Grants

export const insertGrant = (
  db: DbOrTx,
  grant: {
    id: string;
    clientId: string;
    userId: string | null;
    grantType: string;
    scopes: string[];
    resources: string[];
  },
) => db.oAuthGrant.create({ data: grant });

/** Revokes a grant and so every token issued under it; returns whether it was live. */
export const revokeGrant = async (db: DbOrTx, id: string) =>
  (await db.oAuthGrant.updateMany({ where: { id, revokedAt: null }, data: { revokedAt: new Date() } })).count > 0;

export const findGrant = (db: DbOrTx, id: string) => db.oAuthGrant.findUnique({ where: { id } });

// Authorization codes

export const insertAuthorizationCode = (
  db: DbOrTx,
  code: {
    codeHash: Buffer;
    clientId: string;
    userId: string;
    redirectUri: string;
    scopes: string[];
    resources: string[];
    codeChallenge: string | null;
    nonce: string | null;
    expiresAt: Date;
  },
) => db.oAuthAuthorizationCode.create({ data: { ...code, codeHash: bytes(code.codeHash) } });

export async function lockAuthorizationCode(tx: Tx, codeHash: Buffer) {
  const rows = await tx.$queryRaw<unknown[]>`
    SELECT code_hash FROM oauth_authorization_codes WHERE code_hash = ${bytes(codeHash)} FOR UPDATE`;
  if (rows.length === 0) return null;
  return tx.oAuthAuthorizationCode.findUnique({ where: { codeHash: bytes(codeHash) }, include: { user: true } });
}

export const consumeAuthorizationCode = (tx: Tx, codeHash: Buffer, grantId: string) =>
  tx.oAuthAuthorizationCode.update({ where: { codeHash: bytes(codeHash) }, data: { consumedAt: new Date(), grantId } });

// Refresh tokens

export const insertRefreshToken = (db: DbOrTx, token: { tokenHash: Buffer; grantId: string; expiresAt: Date }) =>
  db.oAuthRefreshToken.create({ data: { ...token, tokenHash: bytes(token.tokenHash) } });

export async function lockRefreshToken(tx: Tx, tokenHash: Buffer) {
  const rows = await tx.$queryRaw<unknown[]>`
    SELECT token_hash FROM oauth_refresh_tokens WHERE token_hash = ${bytes(tokenHash)} FOR UPDATE`;
  if (rows.length === 0) return null;
  return tx.oAuthRefreshToken.findUnique({
    where: { tokenHash: bytes(tokenHash) },
    include: { grant: { include: { client: true, user: true } } },
  });
}

export const findRefreshToken = (db: DbOrTx, tokenHash: Buffer) =>
  db.oAuthRefreshToken.findUnique({
    where: { tokenHash: bytes(tokenHash) },
    include: { grant: { include: { client: true, user: true } } },
  });

export const markRefreshTokenRotated = (tx: Tx, tokenHash: Buffer) =>
  tx.oAuthRefreshToken.update({ where: { tokenHash: bytes(tokenHash) }, data: { rotatedAt: new Date() } });

// Consents

export const findConsent = (db: DbOrTx, userId: string, clientId: string) =>
  db.oAuthConsent.findUnique({ where: { userId_clientId: { userId, clientId } } });

/** Adds scopes to what a user approved for a client. */
export async function addConsent(db: DbOrTx, userId: string, clientId: string, scopes: string[]) {
  await db.$executeRaw`
    INSERT INTO oauth_consents (user_id, client_id, scopes)
    VALUES (${userId}::uuid, ${clientId}::uuid, ${scopes}::text[])
    ON CONFLICT (user_id, client_id) DO UPDATE SET
      scopes = ARRAY(SELECT DISTINCT unnest(oauth_consents.scopes || EXCLUDED.scopes) ORDER BY 1),
      updated_at = CURRENT_TIMESTAMP`;
}

// Tenant settings

export const findTenantSettings = (db: DbOrTx, tenantId: string) =>
  db.oAuthTenantSettings.findUnique({ where: { tenantId } });

export const upsertTenantSettings = (
  db: DbOrTx,
  tenantId: string,
  settings: { dynamicClientsAllowed?: boolean; metadataDocumentClientsAllowed?: boolean },
) =>
  db.oAuthTenantSettings.upsert({
    where: { tenantId },
    create: { tenantId, ...settings },
    update: { ...settings, updatedAt: new Date() },
  });

/** Clients of no tenant: those that registered themselves, or those identified by a metadata document. */
export type AgentClientKind = 'registered' | 'metadata-document';

const clientsOfKind = (kind: AgentClientKind) =>
  kind === 'registered'
    ? { tenantId: null, registrationTokenHash: { not: null } }
    : { tenantId: null, metadataUrl: { not: null } };

/**
 * Revokes the live grants clients of a kind hold from the tenant's users, drops their codes not
 * exchanged yet and forgets the users' consents (so that switching back on asks them again);
 * returns the ids of the grants revoked.
 */
export async function revokeAgentClientGrantsOfTenant(
  tx: Tx,
  tenantId: string,
  kind: AgentClientKind,
): Promise<string[]> {
  const client = clientsOfKind(kind);
  await tx.oAuthAuthorizationCode.deleteMany({ where: { consumedAt: null, client, user: { tenantId } } });
  await tx.oAuthConsent.deleteMany({ where: { client, user: { tenantId } } });
  const revoked = await tx.oAuthGrant.updateManyAndReturn({
    where: { revokedAt: null, client, user: { tenantId } },
    data: { revokedAt: new Date() },
    select: { id: true },
  });
  return revoked.map((grant) => grant.id);
}

// Self-registered clients

/** Deletes a self-registered client with its grants, codes, sessions and consents; returns the grants' ids. */
export async function deleteRegisteredClient(tx: Tx, id: string): Promise<string[] | null> {
  const locked = await tx.$queryRaw<unknown[]>`
    SELECT id FROM oauth_clients WHERE id = ${id}::uuid AND tenant_id IS NULL FOR UPDATE`;
  if (locked.length === 0) return null;
  const grants = await tx.$queryRaw<unknown[]>`
    DELETE FROM oauth_grants WHERE client_id = ${id}::uuid RETURNING id::text AS id`;
  await tx.oAuthClient.delete({ where: { id } });
  return parseRows(IdRow, grants).map((grant) => grant.id);
}

// Authorization sessions

export const insertAuthorizationSession = (
  db: DbOrTx,
  session: {
    id: string;
    clientId: string;
    redirectUri: string;
    scopes: string[];
    resources: string[];
    state: string | null;
    nonce: string | null;
    codeChallenge: string | null;
    expiresAt: Date;
  },
) => db.oAuthAuthorizationSession.create({ data: session });

export const findAuthorizationSession = (db: DbOrTx, id: string) =>
  db.oAuthAuthorizationSession.findUnique({ where: { id }, include: { client: true } });

/** Marks a session done, once: false when it was already completed or has expired. */
export const completeAuthorizationSession = async (db: DbOrTx, id: string) =>
  (
    await db.oAuthAuthorizationSession.updateMany({
      where: { id, completedAt: null, expiresAt: { gt: new Date() } },
      data: { completedAt: new Date() },
    })
  ).count > 0;

// Administration: clients and users as the operator sees them, never with a secret's or password's hash.

const IdRow = z.object({ id: uuid });

const clientColumns = {
  id: true,
  tenantId: true,
  name: true,
  isConfidential: true,
  redirectUris: true,
  scopes: true,
  resources: true,
  createdAt: true,
} as const;

/**
 * The tenant a grant's tokens belong to: its user's (for a self-registered client, the tenant of
 * the user who approved it), or its client's for client_credentials.
 */
export const grantTenant = (grant: { user: { tenantId: string } | null; client: { tenantId: string | null } }) =>
  grant.user?.tenantId ?? grant.client.tenantId;

export type ClientRow = {
  id: string;
  /** Null for a self-registered client; the operator's operations only ever see a tenant's clients. */
  tenantId: string | null;
  name: string;
  isConfidential: boolean;
  redirectUris: string[];
  scopes: string[];
  resources: string[];
  createdAt: Date;
};

export const findTenantClient = (db: DbOrTx, tenantId: string, id: string): Promise<ClientRow | null> =>
  db.oAuthClient.findFirst({ where: { id, tenantId }, select: clientColumns });

/** A tenant's clients in order of creation (ids are UUIDv7). */
export const clientList = (db: Db, tenantId: string) =>
  modelKeysetSource<ClientRow, 'id'>(
    {
      findMany: (args) => db.oAuthClient.findMany({ ...args, select: clientColumns }),
      findFirst: (args) => db.oAuthClient.findFirst(args),
    },
    { tenantId },
    'id',
  );

/** Locks a client of the tenant until the transaction ends; false when the tenant has no such client. */
export const lockClient = async (tx: Tx, tenantId: string, id: string) =>
  (
    await tx.$queryRaw<unknown[]>`
      SELECT id FROM oauth_clients WHERE id = ${id}::uuid AND tenant_id = ${tenantId}::uuid FOR UPDATE`
  ).length > 0;

export const updateClient = (
  tx: Tx,
  id: string,
  changes: { name?: string; redirectUris?: string[]; scopes?: string[]; resources?: string[]; secretHash?: Buffer },
): Promise<ClientRow> =>
  tx.oAuthClient.update({
    where: { id },
    data: { ...changes, secretHash: changes.secretHash ? bytes(changes.secretHash) : undefined },
    select: clientColumns,
  });

/** The client's grants that are not revoked, with what they grant. */
export const liveGrantsOfClient = (tx: Tx, clientId: string) =>
  tx.oAuthGrant.findMany({
    where: { clientId, revokedAt: null },
    select: { id: true, grantType: true, scopes: true, resources: true },
  });

/** Revokes the grants (and so every token issued under them); returns the ids of those that were live. */
export const revokeGrants = async (tx: Tx, ids: string[]) =>
  ids.length === 0
    ? []
    : (
        await tx.oAuthGrant.updateManyAndReturn({
          where: { id: { in: ids }, revokedAt: null },
          data: { revokedAt: new Date() },
          select: { id: true },
        })
      ).map((grant) => grant.id);

/** Authorization requests of the client still waiting for the user, and codes not exchanged yet. */
export async function pendingAuthorizations(tx: Tx, clientId: string) {
  const [sessions, codes] = await Promise.all([
    tx.oAuthAuthorizationSession.findMany({
      where: { clientId, completedAt: null },
      select: { id: true, redirectUri: true, scopes: true, resources: true },
    }),
    tx.oAuthAuthorizationCode.findMany({
      where: { clientId, consumedAt: null },
      select: { codeHash: true, redirectUri: true, scopes: true, resources: true },
    }),
  ]);
  return { sessions, codes };
}

export async function deletePendingAuthorizations(tx: Tx, sessionIds: string[], codeHashes: Uint8Array<ArrayBuffer>[]) {
  if (sessionIds.length > 0) await tx.oAuthAuthorizationSession.deleteMany({ where: { id: { in: sessionIds } } });
  if (codeHashes.length > 0) await tx.oAuthAuthorizationCode.deleteMany({ where: { codeHash: { in: codeHashes } } });
}

/**
 * Deletes a client with its grants, codes, sessions and consents (the grants first, so that their
 * ids are known); returns the ids of the grants, or null when the tenant has no such client.
 */
export async function deleteClient(tx: Tx, tenantId: string, id: string): Promise<string[] | null> {
  if (!(await lockClient(tx, tenantId, id))) return null;
  const grants = await tx.$queryRaw<unknown[]>`
    DELETE FROM oauth_grants WHERE client_id = ${id}::uuid RETURNING id::text AS id`;
  await tx.oAuthClient.delete({ where: { id } });
  return parseRows(IdRow, grants).map((grant) => grant.id);
}

const userColumns = { id: true, tenantId: true, email: true, createdAt: true } as const;

export type UserRow = { id: string; tenantId: string; email: string; createdAt: Date };

export const findTenantUser = (db: DbOrTx, tenantId: string, id: string): Promise<UserRow | null> =>
  db.user.findFirst({ where: { id, tenantId }, select: userColumns });

/** A tenant's users in order of creation, or the one with an e-mail address. */
export const userList = (db: Db, tenantId: string, email?: string) =>
  modelKeysetSource<UserRow, 'id'>(
    {
      findMany: (args) => db.user.findMany({ ...args, select: userColumns }),
      findFirst: (args) => db.user.findFirst(args),
    },
    email === undefined ? { tenantId } : { tenantId, email },
    'id',
  );

/**
 * Sets a user's password hash, revokes their grants and deletes their codes not exchanged yet.
 * Returns the ids of the revoked grants, or null when the tenant has no such user.
 */
export async function replacePassword(tx: Tx, tenantId: string, id: string, passwordHash: string) {
  if ((await tx.user.updateMany({ where: { id, tenantId }, data: { passwordHash } })).count === 0) return null;
  await tx.oAuthAuthorizationCode.deleteMany({ where: { userId: id, consumedAt: null } });
  const revoked = await tx.oAuthGrant.updateManyAndReturn({
    where: { userId: id, revokedAt: null },
    data: { revokedAt: new Date() },
    select: { id: true },
  });
  return revoked.map((grant) => grant.id);
}

/** Deletes a user with their grants, codes and consents; returns the grants' ids, or null without such a user. */
export async function deleteUser(tx: Tx, tenantId: string, id: string): Promise<string[] | null> {
  const locked = await tx.$queryRaw<unknown[]>`
    SELECT id FROM users WHERE id = ${id}::uuid AND tenant_id = ${tenantId}::uuid FOR UPDATE`;
  if (locked.length === 0) return null;
  const grants = await tx.$queryRaw<unknown[]>`
    DELETE FROM oauth_grants WHERE user_id = ${id}::uuid RETURNING id::text AS id`;
  await tx.user.delete({ where: { id } });
  return parseRows(IdRow, grants).map((grant) => grant.id);
}
