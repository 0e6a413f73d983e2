/** The first frame of a backup: what it holds and how to bring it back. */
import { createHmac } from 'node:crypto';
import { z } from 'zod';

const relation = { schema: z.string(), name: z.string() };

export const backupHeaderSchema = z.object({
  /** When the backup started. */
  createdAt: z.string(),
  /** `server_version` of the PostgreSQL it was taken from. */
  serverVersion: z.string(),
  /** `pg_current_snapshot()` of the backup's transaction: the point in time it holds. */
  snapshot: z.string(),
  /** The migrations applied then, in order: a restore applies exactly these before loading rows. */
  migrations: z.array(z.object({ name: z.string(), checksum: z.string() })),
  /** Every table, in the order its rows follow in the file, with the columns COPY wrote. */
  tables: z.array(z.object({ ...relation, columns: z.array(z.string()).min(1) })),
  /** Sequence positions, as `setval(name, lastValue, isCalled)` restores them. */
  sequences: z.array(z.object({ ...relation, lastValue: z.string().regex(/^-?\d+$/), isCalled: z.boolean() })),
  /**
   * Identifies the master key the service ran with (not the key): OAuth signing keys are stored
   * sealed under it, so a restore says when the target's key differs. Null when it was not known.
   */
  masterKeyFingerprint: z.string().nullable(),
});

export type BackupHeader = z.infer<typeof backupHeaderSchema>;

/** A one-way fingerprint of the master key, short enough to compare by eye. */
export const masterKeyFingerprint = (masterKey: string) =>
  createHmac('sha256', masterKey).update('backup-master-key-fingerprint').digest('hex').slice(0, 16);

/** `"schema"."name"`, quoted for SQL. */
export const qualifiedName = (relation: { schema: string; name: string }) =>
  `${quoteIdentifier(relation.schema)}.${quoteIdentifier(relation.name)}`;

export const quoteIdentifier = (name: string) => `"${name.replaceAll('"', '""')}"`;
