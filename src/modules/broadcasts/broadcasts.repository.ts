import { z } from 'zod';
import type { Db, DbOrTx, Tx } from '../../kernel/db';
import { parseFirstRow, parseRows, timestamp, uuid } from '../../kernel/rows';
import { Prisma } from '../../__generated__/prisma/client';

const MutationSubject = z.object({ mutationId: uuid, eventId: z.null() });
const EventSubject = z.object({ mutationId: z.null(), eventId: uuid });
const SubjectRow = z.union([MutationSubject, EventSubject]);
/** What a delivery announces: a ledger row (`mutationId`) or a stock event (`eventId`); exactly one is set. */
export type DeliverySubject = z.output<typeof SubjectRow>;

const Claimed = {
  id: uuid,
  tenantId: uuid,
  channelId: uuid,
  attempts: z.number().int(),
  url: z.string(),
  secret: z.string(),
  sku: z.string(),
  productId: uuid,
  warehouseId: uuid,
  createdAt: timestamp,
  /** The trace context of the write that queued it (null: written while tracing was off). */
  traceparent: z.string().nullable(),
};

/** A claimed delivery of a ledger row, with what its payload says (quantities as decimal text). */
const MutationDeliveryRow = z.object({
  ...Claimed,
  ...MutationSubject.shape,
  kind: z.literal('mutation'),
  positionId: uuid.nullable(),
  source: z.string(),
  delta: z.string(),
  newQuantity: z.string(),
});

/** A claimed delivery of a stock event (`causeMutationId`: the ledger row whose change made the level fall). */
const EventDeliveryRow = z.object({
  ...Claimed,
  ...EventSubject.shape,
  kind: z.literal('event'),
  type: z.enum(['STOCK_LOW', 'STOCK_OUT']),
  available: z.string(),
  reorderPoint: z.string().nullable(),
  causeMutationId: uuid,
});

const ClaimedDeliveryRow = z.discriminatedUnion('kind', [MutationDeliveryRow, EventDeliveryRow]);
export type ClaimedDelivery = z.output<typeof ClaimedDeliveryRow>;
export type MutationDelivery = z.output<typeof MutationDeliveryRow>;
export type EventDelivery = z.output<typeof EventDeliveryRow>;

/** A claimed delivery whose row does not fit `ClaimedDeliveryRow` (a damaged row, or a bug): it cannot be sent. */
export type UnreadableDelivery = {
  id: string;
  tenantId: string;
  attempts: number;
  problem: string;
} & DeliverySubject;
const DeliveryKey = z.object({ id: uuid, tenantId: uuid, attempts: z.number().int() });
const UnreadableKey = z.union([DeliveryKey.extend(MutationSubject.shape), DeliveryKey.extend(EventSubject.shape)]);

/**
 * Claims due deliveries for `claimMs` (rows other workers hold are skipped, so several processes
 * can deliver at once without sending one delivery twice at the same time).
 */
export async function claimDue(
  db: Db,
  limit: number,
  claimMs: number,
): Promise<(ClaimedDelivery | UnreadableDelivery)[]> {
  const rows = await db.$queryRaw<unknown[]>`
    WITH due AS (
      SELECT id FROM stock_broadcasts
       WHERE status = 'PENDING' AND next_attempt_at <= now() AND (claimed_until IS NULL OR claimed_until < now())
       ORDER BY next_attempt_at LIMIT ${limit}
         FOR UPDATE SKIP LOCKED),
    claimed AS (
      UPDATE stock_broadcasts b
         SET claimed_until = now() + make_interval(secs => ${claimMs / 1000}), attempts = attempts + 1
        FROM due WHERE b.id = due.id
      RETURNING b.id, b.tenant_id, b.mutation_id, b.event_id, b.channel_id, b.attempts, b.traceparent)
    SELECT c.id, c.tenant_id AS "tenantId", c.mutation_id AS "mutationId", c.event_id AS "eventId",
           CASE WHEN c.event_id IS NULL THEN 'mutation' ELSE 'event' END AS kind,
           c.channel_id AS "channelId", c.attempts, w.url, w.secret, p.sku,
           coalesce(m.product_id, e.product_id) AS "productId",
           coalesce(m.warehouse_id, e.warehouse_id) AS "warehouseId",
           m.position_id AS "positionId", m.source::text AS source, m.delta::text AS delta,
           m.new_quantity::text AS "newQuantity", e.type::text AS type, e.available::text AS available,
           e.reorder_point::text AS "reorderPoint", e.mutation_id AS "causeMutationId",
           coalesce(m.created_at, e.created_at) AS "createdAt", c.traceparent
      FROM claimed c
      LEFT JOIN stock_mutations m ON m.id = c.mutation_id
      LEFT JOIN stock_events e ON e.id = c.event_id
      LEFT JOIN products p ON p.id = coalesce(m.product_id, e.product_id)
      JOIN channel_webhooks w ON w.channel_id = c.channel_id`;
  // Row by row: the batch is claimed already, and a row that does not fit must fail its own delivery only.
  return rows.map((row) => {
    const parsed = ClaimedDeliveryRow.safeParse(row);
    return parsed.success ? parsed.data : { ...UnreadableKey.parse(row), problem: z.prettifyError(parsed.error) };
  });
}

/**
 * Records the outcome of one attempt, releasing the claim (the next attempt is due in `retryInMs`;
 * null: there is none), and brings the status and messages of what it announces up to date.
 */
export async function recordAttempt(
  tx: Tx,
  delivery: { id: string } & DeliverySubject,
  outcome: { status: 'PENDING' | 'PROCESSED' | 'FAILING'; message: string; retryInMs: number | null },
) {
  const retryInSeconds = outcome.retryInMs === null ? null : outcome.retryInMs / 1000;
  await tx.$executeRaw`
    UPDATE stock_broadcasts
       SET status = ${outcome.status}::broadcast_status, last_message = ${outcome.message}, updated_at = now(),
           next_attempt_at = coalesce(now() + make_interval(secs => ${retryInSeconds}::float8), next_attempt_at),
           claimed_until = NULL
     WHERE id = ${delivery.id}::uuid`;
  await refreshSubject(tx, delivery);
}

/** The condition that a delivery (of `stock_broadcasts`, unaliased) announces `subject`. */
const deliveriesOf = (subject: DeliverySubject) =>
  subject.mutationId !== null
    ? Prisma.sql`mutation_id = ${subject.mutationId}::uuid`
    : Prisma.sql`event_id = ${subject.eventId}::uuid`;

/**
 * The `messages` (one per channel) and status of a subject's deliveries: PENDING while any is,
 * then FAILING if any failed.
 */
const deliveriesDigest = (subject: DeliverySubject) => Prisma.sql`
  SELECT coalesce(json_agg(json_build_object('channel_id', channel_id, 'status', status, 'message', last_message,
                                             'delivery_id', id, 'attempts', attempts,
                                             'created_at', (extract(epoch FROM updated_at) * 1000)::bigint)
                           ORDER BY channel_id), '[]')::jsonb AS messages,
         CASE WHEN bool_or(status = 'PENDING') THEN 'PENDING' WHEN bool_or(status = 'FAILING') THEN 'FAILING'
              ELSE 'PROCESSED' END AS status
    FROM stock_broadcasts WHERE ${deliveriesOf(subject)}`;

/**
 * Brings a mutation's or an event's `messages` and status up to date with its deliveries (a ledger
 * row through the stock module's `stock_mutation_broadcast_state`: the ledger has one writer).
 */
export async function refreshSubject(tx: DbOrTx, subject: DeliverySubject) {
  if (subject.mutationId !== null) {
    await tx.$executeRaw`
      SELECT stock_mutation_broadcast_state(${subject.mutationId}::uuid, d.status, d.messages)
        FROM (${deliveriesDigest(subject)}) d`;
  } else {
    await tx.$executeRaw`
      UPDATE stock_events e SET messages = d.messages, status = d.status::stock_mutation_status
        FROM (${deliveriesDigest(subject)}) d
       WHERE e.id = ${subject.eventId}::uuid`;
  }
}

/** Sends the FAILING deliveries of a mutation or an event again from the first attempt. Returns how many. */
export async function retryFailing(tx: Tx, tenantId: string, subject: DeliverySubject) {
  const count = await tx.$executeRaw`
    UPDATE stock_broadcasts SET status = 'PENDING', attempts = 0, next_attempt_at = now(), claimed_until = NULL,
      updated_at = now()
     WHERE tenant_id = ${tenantId}::uuid AND status = 'FAILING' AND ${deliveriesOf(subject)}`;
  if (count > 0) await refreshSubject(tx, subject);
  return count;
}

export async function setWebhook(db: DbOrTx, tenantId: string, channelId: string, url: string, secret: string) {
  await db.$executeRaw`
    INSERT INTO channel_webhooks (channel_id, tenant_id, url, secret) VALUES (${channelId}::uuid, ${tenantId}::uuid,
      ${url}, ${secret})
    ON CONFLICT (channel_id) DO UPDATE SET url = EXCLUDED.url, secret = EXCLUDED.secret, updated_at = now()`;
}

/** Removes a webhook and the deliveries to it that never landed (they cannot be delivered any more). */
export async function removeWebhook(tx: Tx, tenantId: string, channelId: string) {
  const removed =
    (await tx.$executeRaw`
      DELETE FROM channel_webhooks WHERE tenant_id = ${tenantId}::uuid AND channel_id = ${channelId}::uuid`) > 0;
  const dropped = parseRows(
    SubjectRow,
    await tx.$queryRaw<unknown[]>`
      WITH dropped AS (
        DELETE FROM stock_broadcasts
         WHERE tenant_id = ${tenantId}::uuid AND channel_id = ${channelId}::uuid AND status <> 'PROCESSED'
        RETURNING mutation_id, event_id)
      SELECT DISTINCT mutation_id AS "mutationId", event_id AS "eventId" FROM dropped`,
  );
  for (const subject of dropped) await refreshSubject(tx, subject);
  return removed;
}

/** The status of a tenant's mutation or event; undefined when there is none with this id. */
export async function subjectStatus(db: DbOrTx, tenantId: string, subject: DeliverySubject) {
  const row = parseFirstRow(
    z.object({ status: z.string() }),
    subject.mutationId !== null
      ? await db.$queryRaw<unknown[]>`
          SELECT status::text FROM stock_mutations
           WHERE tenant_id = ${tenantId}::uuid AND id = ${subject.mutationId}::uuid`
      : await db.$queryRaw<unknown[]>`
          SELECT status::text FROM stock_events WHERE tenant_id = ${tenantId}::uuid AND id = ${subject.eventId}::uuid`,
  );
  return row?.status;
}

/** Deliveries waiting to be sent (PENDING) and the age in seconds of the oldest. */
export async function backlog(db: Db) {
  const rows = await db.$queryRaw<{ pending: number; oldest: number }[]>`
    SELECT count(*)::int AS pending,
           coalesce(extract(epoch FROM now() - min(created_at)), 0)::float8 AS oldest
      FROM stock_broadcasts WHERE status = 'PENDING'`;
  return rows[0]!;
}

/**
 * Retention: deletes at most `limit` deliveries that are done (PROCESSED, or FAILING after their
 * last attempt) and were last attempted more than `days` days ago, found through the index on
 * `(status, updated_at)`; rows another process is deleting are skipped. What the mutations and
 * events say about them (`messages`, status) stays as it was: those digests are theirs.
 */
export const deleteFinishedDeliveries = (db: Db, days: number, limit: number) =>
  db.$executeRaw`
    DELETE FROM stock_broadcasts WHERE ctid = ANY(ARRAY(
      SELECT ctid FROM stock_broadcasts
       WHERE status IN ('PROCESSED', 'FAILING') AND updated_at < now() - make_interval(days => ${days})
       LIMIT ${limit} FOR UPDATE SKIP LOCKED))`;
