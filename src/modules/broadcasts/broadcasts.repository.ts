import { z } from 'zod';
import type { Db, DbOrTx, Tx } from '../../kernel/db';
import { parseFirstRow, parseRows, timestamp, uuid } from '../../kernel/rows';

/** A delivery claimed for one attempt, with what its payload says (quantities as decimal text). */
const ClaimedDeliveryRow = z.object({
  id: uuid,
  tenantId: uuid,
  mutationId: uuid,
  channelId: uuid,
  attempts: z.number().int(),
  url: z.string(),
  secret: z.string(),
  sku: z.string(),
  productId: uuid,
  warehouseId: uuid,
  positionId: uuid.nullable(),
  source: z.string(),
  delta: z.string(),
  newQuantity: z.string(),
  createdAt: timestamp,
});
export type ClaimedDelivery = z.output<typeof ClaimedDeliveryRow>;

/** A claimed delivery whose row does not fit `ClaimedDeliveryRow` (a damaged row, or a bug): it cannot be sent. */
export interface UnreadableDelivery {
  id: string;
  tenantId: string;
  mutationId: string;
  attempts: number;
  problem: string;
}
const UnreadableKey = ClaimedDeliveryRow.pick({ id: true, tenantId: true, mutationId: true, attempts: true });

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
      RETURNING b.id, b.tenant_id, b.mutation_id, b.channel_id, b.attempts)
    SELECT c.id, c.tenant_id AS "tenantId", c.mutation_id AS "mutationId", c.channel_id AS "channelId", c.attempts,
           w.url, w.secret, p.sku, m.product_id AS "productId", m.warehouse_id AS "warehouseId",
           m.position_id AS "positionId", m.source::text AS source, m.delta::text AS delta,
           m.new_quantity::text AS "newQuantity", m.created_at AS "createdAt"
      FROM claimed c
      JOIN stock_mutations m ON m.id = c.mutation_id
      JOIN products p ON p.id = m.product_id
      JOIN channel_webhooks w ON w.channel_id = c.channel_id`;
  // Row by row: the batch is claimed already, and a row that does not fit must fail its own delivery only.
  return rows.map((row) => {
    const parsed = ClaimedDeliveryRow.safeParse(row);
    return parsed.success ? parsed.data : { ...UnreadableKey.parse(row), problem: z.prettifyError(parsed.error) };
  });
}

/**
 * Records the outcome of one attempt, releasing the claim (the next attempt is due in `retryInMs`;
 * null: there is none), and brings the mutation's status and messages up to date.
 */
export async function recordAttempt(
  tx: Tx,
  delivery: { id: string; mutationId: string },
  outcome: { status: 'PENDING' | 'PROCESSED' | 'FAILING'; message: string; retryInMs: number | null },
) {
  const retryInSeconds = outcome.retryInMs === null ? null : outcome.retryInMs / 1000;
  await tx.$executeRaw`
    UPDATE stock_broadcasts
       SET status = ${outcome.status}::broadcast_status, last_message = ${outcome.message}, updated_at = now(),
           next_attempt_at = coalesce(now() + make_interval(secs => ${retryInSeconds}::float8), next_attempt_at),
           claimed_until = NULL
     WHERE id = ${delivery.id}::uuid`;
  await refreshMutation(tx, delivery.mutationId);
}

/**
 * A mutation's `messages` (one per channel) and status from its deliveries: PENDING while any is, then FAILING if any
 * failed.
 */
export async function refreshMutation(tx: DbOrTx, mutationId: string) {
  await tx.$executeRaw`
    UPDATE stock_mutations m
       SET messages = d.messages, status = d.status::stock_mutation_status
      FROM (SELECT coalesce(json_agg(json_build_object('channel_id', channel_id, 'status', status, 'message',
        last_message,
                                              'delivery_id', id, 'attempts', attempts,
                                              'created_at', (extract(epoch FROM updated_at) * 1000)::bigint) ORDER BY
                                                channel_id), '[]')::jsonb AS messages,
                   CASE WHEN bool_or(status = 'PENDING') THEN 'PENDING' WHEN bool_or(status = 'FAILING') THEN 'FAILING'
                     ELSE 'PROCESSED' END AS status
              FROM stock_broadcasts WHERE mutation_id = ${mutationId}::uuid) d
     WHERE m.id = ${mutationId}::uuid`;
}

/** Sends the FAILING deliveries of a mutation again from the first attempt. Returns how many. */
export async function retryFailing(tx: Tx, tenantId: string, mutationId: string) {
  const count = await tx.$executeRaw`
    UPDATE stock_broadcasts SET status = 'PENDING', attempts = 0, next_attempt_at = now(), claimed_until = NULL,
      updated_at = now()
     WHERE tenant_id = ${tenantId}::uuid AND mutation_id = ${mutationId}::uuid AND status = 'FAILING'`;
  if (count > 0) await refreshMutation(tx, mutationId);
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
    z.object({ mutationId: uuid }),
    await tx.$queryRaw<unknown[]>`
      DELETE FROM stock_broadcasts
       WHERE tenant_id = ${tenantId}::uuid AND channel_id = ${channelId}::uuid AND status <> 'PROCESSED'
      RETURNING mutation_id AS "mutationId"`,
  );
  for (const mutationId of new Set(dropped.map((row) => row.mutationId))) await refreshMutation(tx, mutationId);
  return removed;
}

export async function mutationStatus(db: DbOrTx, tenantId: string, id: string) {
  const row = parseFirstRow(
    z.object({ status: z.string() }),
    await db.$queryRaw<unknown[]>`
      SELECT status::text FROM stock_mutations WHERE tenant_id = ${tenantId}::uuid AND id = ${id}::uuid`,
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
